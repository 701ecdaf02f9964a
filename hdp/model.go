package hdp

import (
	"math"
	"math/rand/v2"

	"github.com/placer/placer/nn"
)

// Config sizes the controller. The zero value of each field is its
// default.
type Config struct {
	// Groups is the grouper's number of groups, the placer's sequence
	// length; 0 = min(256, 20 x devices), the default of TensorFlow's
	// hierarchical controller (the paper's 256 is that rule's cap).
	Groups      int `json:"groups"`
	GroupHidden int `json:"group_hidden"` // the grouper's hidden units; 0 = 64 (HDP's)
	Hidden      int `json:"hidden"`       // LSTM units of the placer's encoder and decoder; 0 = 128
	DeviceDim   int `json:"device_dim"`   // device embedding fed to the next decoder step; 0 = 16
}

// filled returns c with its defaults for a problem with devices devices.
func (c Config) filled(devices int) Config {
	if c.Groups <= 0 {
		c.Groups = min(256, 20*devices)
	}
	if c.GroupHidden <= 0 {
		c.GroupHidden = 64
	}
	if c.Hidden <= 0 {
		c.Hidden = 128
	}
	if c.DeviceDim <= 0 {
		c.DeviceDim = 16
	}
	return c
}

// model is HDP's two networks. The grouper is feed-forward, per unit (a
// co-location group or an op):
//
//	h = relu(E[type] + f W1 + b1),  p(group) = softmax(h W2 + b2)
//
// with E the op-type embedding and f the unit's numeric features
// (NumOpFeatures). The placer is rl17's attentional sequence-to-sequence
// controller over the groups: an LSTM encoder over the group embeddings
// (embed), an LSTM decoder started from the encoder's final state whose
// input at step t is the embedding of the device chosen at step t-1 with
// the encoder's output at step t, and an output layer over the decoder
// state and its Luong attention context. Each sample has its own grouping,
// hence its own encoder pass and attention memory: the encoder runs over
// the K samples as one batch.
type model[T nn.Float] struct {
	cfg     Config
	d       *graphData
	devices int
	// grouper
	gType *nn.Param[T]  // types x GroupHidden
	gIn   *nn.Linear[T] // NumOpFeatures -> GroupHidden
	gOut  *nn.Linear[T] // GroupHidden -> Groups
	feats []T
	// placer
	enc    *nn.LSTM[T]  // embedDim -> Hidden
	dec    *nn.LSTM[T]  // DeviceDim + Hidden -> Hidden
	devEmb *nn.Param[T] // (devices + 1) x DeviceDim; row devices is the start
	att    *nn.Attention[T]
	out    *nn.Linear[T] // 2 Hidden -> devices
}

func newModel[T nn.Float](d *graphData, devices int, cfg Config, seed uint64) *model[T] {
	cfg = cfg.filled(devices)
	r := rand.New(rand.NewPCG(seed, 0x686470)) // "hdp"
	h, gh := cfg.Hidden, cfg.GroupHidden
	m := &model[T]{cfg: cfg, d: d, devices: devices,
		gType:  nn.NewParam[T]("hdp.group.type", d.types, gh),
		gIn:    nn.NewLinear[T]("hdp.group.in", NumOpFeatures, gh, true, r),
		gOut:   nn.NewLinear[T]("hdp.group.out", gh, cfg.Groups, true, r),
		feats:  nn.Convert[T](d.unitFeats),
		enc:    nn.NewLSTM[T]("hdp.enc", d.embedDim(cfg.Groups), h, r),
		dec:    nn.NewLSTM[T]("hdp.dec", cfg.DeviceDim+h, h, r),
		devEmb: nn.NewParam[T]("hdp.device", devices+1, cfg.DeviceDim),
		att:    nn.NewAttention[T]("hdp.att", h, h, r),
		out:    nn.NewLinear[T]("hdp.out", 2*h, devices, true, r)}
	m.gType.InitGlorot(r, d.types, gh, 1)
	m.devEmb.InitGlorot(r, devices+1, cfg.DeviceDim, 1)
	return m
}

func (m *model[T]) params() nn.Params[T] {
	ps := nn.Params[T]{m.gType}
	ps = append(ps, m.gIn.Params()...)
	ps = append(ps, m.gOut.Params()...)
	ps = append(ps, m.enc.Params()...)
	ps = append(ps, m.dec.Params()...)
	ps = append(ps, m.devEmb)
	ps = append(ps, m.att.Params()...)
	return append(ps, m.out.Params()...)
}

// grouperForward returns the grouper's hidden layer (units x GroupHidden)
// and its group probabilities (units x Groups), from ar.
func (m *model[T]) grouperForward(ar *nn.Arena[T]) (hid, prob []T) {
	u, gh, g := m.d.units(), m.cfg.GroupHidden, m.cfg.Groups
	hid = ar.AllocRaw(u * gh)
	m.gIn.Forward(m.feats, u, m.gIn.W.W, hid, false)
	for i, ty := range m.d.unitType {
		addTo(hid[i*gh:(i+1)*gh], m.gType.W[int(ty)*gh:(int(ty)+1)*gh])
	}
	nn.ReLU(hid)
	prob = ar.AllocRaw(u * g)
	m.gOut.Forward(hid, u, m.gOut.W.W, prob, false)
	nn.ParallelFor(u, nn.Grain(u, 8*g), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			nn.SoftmaxRow(prob[i*g:(i+1)*g], 1)
		}
	})
	return hid, prob
}

// group draws k groupings (groupings[s][unit]) from the grouper and
// returns them with each one's log-probability and the grouper's mean
// entropy per unit.
func (m *model[T]) group(ar *nn.Arena[T], rng *rand.Rand, k int) (groupings [][]int32, logp []float64, entropy float64) {
	mk := ar.Mark()
	defer ar.Release(mk)
	u, g := m.d.units(), m.cfg.Groups
	_, prob := m.grouperForward(ar)
	for i := range u {
		for _, p := range prob[i*g : (i+1)*g] {
			if p > 0 {
				entropy -= float64(p) * math.Log(float64(p)) / float64(u)
			}
		}
	}
	groupings = make([][]int32, k)
	logp = make([]float64, k)
	for s := range k {
		gs := make([]int32, u)
		for i := range u {
			row := prob[i*g : (i+1)*g]
			x := rng.Float64()
			a := g - 1
			for j, p := range row {
				x -= float64(p)
				if x < 0 {
					a = j
					break
				}
			}
			gs[i] = int32(a)
			logp[s] += math.Log(math.Max(float64(row[a]), 1e-30))
		}
		groupings[s] = gs
	}
	return groupings, logp, entropy
}

// encoded is the encoder's forward pass over k samples' group embeddings.
type encoded[T nn.Float] struct {
	k    int
	tr   *nn.LSTMTrace[T]
	mem  []T   // k x Groups x Hidden: each sample's encoder outputs, sample-major
	keys [][]T // per sample, its attention keys (Groups x Hidden)
}

func (m *model[T]) encode(ar *nn.Arena[T], x []T, k int) *encoded[T] {
	n, h := m.cfg.Groups, m.cfg.Hidden
	e := &encoded[T]{k: k, tr: m.enc.Forward(ar, x, n, k, nil, nil), mem: ar.AllocRaw(k * n * h)}
	for t := range n {
		for s := range k {
			copy(e.mem[(s*n+t)*h:(s*n+t+1)*h], e.tr.H[(t*k+s)*h:(t*k+s+1)*h])
		}
	}
	for s := range k {
		e.keys = append(e.keys, m.att.Keys(ar, e.memOf(s, n, h), n))
	}
	return e
}

func (e *encoded[T]) memOf(s, n, h int) []T { return e.mem[s*n*h : (s+1)*n*h] }

// decoderInput writes step t's decoder inputs for the k samples whose
// previous devices are prev (the start embedding where prev is -1).
func (m *model[T]) decoderInput(x []T, e *encoded[T], t int, prev []int) {
	dd, h, k := m.cfg.DeviceDim, m.cfg.Hidden, e.k
	in := dd + h
	for s, p := range prev {
		if p < 0 {
			p = m.devices
		}
		copy(x[s*in:s*in+dd], m.devEmb.W[p*dd:(p+1)*dd])
		copy(x[s*in+dd:(s+1)*in], e.tr.H[(t*k+s)*h:(t*k+s+1)*h])
	}
}

// sample draws one placement of the groups (devs[s][group]) for each of
// the k samples whose group embeddings are x (embed's layout), one decoder
// step at a time; it returns them with each sample's log-probability and
// the mean entropy per group.
func (m *model[T]) sample(ar *nn.Arena[T], rng *rand.Rand, x []T, k int) (devs [][]int, logp []float64, entropy float64) {
	mk := ar.Mark()
	defer ar.Release(mk)
	n, h, d := m.cfg.Groups, m.cfg.Hidden, m.devices
	in := m.cfg.DeviceDim + h
	e := m.encode(ar, x, k)
	hLast, cLast := e.tr.Last()
	hs, cs := ar.AllocRaw(k*h), ar.AllocRaw(k*h)
	copy(hs, hLast)
	copy(cs, cLast)
	xd := ar.AllocRaw(k * in)
	scratch := ar.AllocRaw(k * 4 * h)
	ctx := ar.AllocRaw(k * h)
	o := ar.AllocRaw(k * 2 * h)
	logits := ar.AllocRaw(k * d)
	prev := make([]int, k)
	for i := range prev {
		prev[i] = -1
	}
	devs = make([][]int, k)
	for s := range devs {
		devs[s] = make([]int, n)
	}
	logp = make([]float64, k)
	for t := range n {
		m.decoderInput(xd, e, t, prev)
		m.dec.Step(xd, k, hs, cs, scratch)
		for s := range k {
			am := ar.Mark()
			m.att.Forward(ar, hs[s*h:(s+1)*h], 1, e.memOf(s, n, h), e.keys[s], n, ctx[s*h:(s+1)*h])
			ar.Release(am)
			copy(o[s*2*h:s*2*h+h], hs[s*h:(s+1)*h])
			copy(o[s*2*h+h:(s+1)*2*h], ctx[s*h:(s+1)*h])
		}
		m.out.Forward(o, k, m.out.W.W, logits, false)
		for s := range k {
			row := logits[s*d : (s+1)*d]
			nn.SoftmaxRow(row, 1)
			u := rng.Float64()
			a := d - 1
			for j, p := range row {
				u -= float64(p)
				if u < 0 {
					a = j
					break
				}
			}
			for _, p := range row {
				if p > 0 {
					entropy -= float64(p) * math.Log(float64(p)) / float64(n*k)
				}
			}
			devs[s][t] = a
			logp[s] += math.Log(math.Max(float64(row[a]), 1e-30))
			prev[s] = a
		}
	}
	return devs, logp, entropy
}

// reinforce adds to the parameters' gradients the gradient of
//
//	L = -Σ_s w[s] (log p(groupings[s]) + log p(devs[s] | groupings[s]))
//
// (joint REINFORCE with w[s] = (R_s - b) / K descends L) and returns L.
// x holds the samples' group embeddings (embed of groupings); they are
// constants of the grouping, as in HDP, so the grouper learns through its
// log-probability only. The decoder is teacher-forced on the sampled
// devices.
func (m *model[T]) reinforce(ar *nn.Arena[T], x []T, groupings [][]int32, devs [][]int, w []float64) float64 {
	mk := ar.Mark()
	defer ar.Release(mk)
	return m.reinforceGrouper(ar, groupings, w) + m.reinforcePlacer(ar, x, devs, w)
}

func (m *model[T]) reinforceGrouper(ar *nn.Arena[T], groupings [][]int32, w []float64) float64 {
	u, g, gh := m.d.units(), m.cfg.Groups, m.cfg.GroupHidden
	hid, prob := m.grouperForward(ar)
	loss, wsum := 0.0, 0.0
	for s, gs := range groupings {
		wsum += w[s]
		for i, a := range gs {
			loss -= w[s] * math.Log(math.Max(float64(prob[i*g+int(a)]), 1e-300))
		}
	}
	// dL/dlogits = Σ_s w[s] (softmax - onehot(groupings[s])), in place.
	for i := range prob {
		prob[i] *= T(wsum)
	}
	for s, gs := range groupings {
		for i, a := range gs {
			prob[i*g+int(a)] -= T(w[s])
		}
	}
	dhid := ar.Alloc(u * gh)
	m.gOut.Backward(ar, hid, u, nil, m.gOut.W.W, prob, dhid, nil)
	nn.ReLUBackward(dhid, hid)
	m.gIn.Backward(ar, m.feats, u, nil, m.gIn.W.W, dhid, nil, nil)
	for i, ty := range m.d.unitType {
		addTo(m.gType.G[int(ty)*gh:(int(ty)+1)*gh], dhid[i*gh:(i+1)*gh])
	}
	return loss
}

func (m *model[T]) reinforcePlacer(ar *nn.Arena[T], x []T, devs [][]int, w []float64) float64 {
	n, h, d, dd := m.cfg.Groups, m.cfg.Hidden, m.devices, m.cfg.DeviceDim
	k := len(devs)
	in := dd + h
	rows := n * k
	e := m.encode(ar, x, k)
	h0, c0 := e.tr.Last()
	xd := ar.AllocRaw(rows * in)
	prev := make([]int, k)
	for t := range n {
		for s := range k {
			prev[s] = -1
			if t > 0 {
				prev[s] = devs[s][t-1]
			}
		}
		m.decoderInput(xd[t*k*in:(t+1)*k*in], e, t, prev)
	}
	dtr := m.dec.Forward(ar, xd, n, k, h0, c0)
	// Attention per sample over its own memory, on sample-major copies of
	// its queries.
	q := ar.AllocRaw(rows * h)
	for t := range n {
		for s := range k {
			copy(q[(s*n+t)*h:(s*n+t+1)*h], dtr.H[(t*k+s)*h:(t*k+s+1)*h])
		}
	}
	ctx := ar.AllocRaw(rows * h)
	atr := make([]*nn.AttentionTrace[T], k)
	for s := range k {
		atr[s] = m.att.Forward(ar, q[s*n*h:(s+1)*n*h], n, e.memOf(s, n, h), e.keys[s], n, ctx[s*n*h:(s+1)*n*h])
	}
	o := ar.AllocRaw(rows * 2 * h)
	for t := range n {
		for s := range k {
			r := t*k + s
			copy(o[r*2*h:r*2*h+h], dtr.H[r*h:(r+1)*h])
			copy(o[r*2*h+h:(r+1)*2*h], ctx[(s*n+t)*h:(s*n+t+1)*h])
		}
	}
	logits := ar.AllocRaw(rows * d)
	m.out.Forward(o, rows, m.out.W.W, logits, false)
	loss := 0.0
	for t := range n {
		for s := range k {
			row := logits[(t*k+s)*d : (t*k+s+1)*d]
			nn.SoftmaxRow(row, 1)
			a := devs[s][t]
			loss -= w[s] * math.Log(math.Max(float64(row[a]), 1e-300))
			for j := range row {
				row[j] *= T(w[s])
			}
			row[a] -= T(w[s])
		}
	}
	do := ar.Alloc(rows * 2 * h)
	m.out.Backward(ar, o, rows, nil, m.out.W.W, logits, do, nil)
	dhd := ar.AllocRaw(rows * h)  // step-major
	dctx := ar.AllocRaw(rows * h) // sample-major
	for t := range n {
		for s := range k {
			r := t*k + s
			copy(dhd[r*h:(r+1)*h], do[r*2*h:r*2*h+h])
			copy(dctx[(s*n+t)*h:(s*n+t+1)*h], do[r*2*h+h:(r+1)*2*h])
		}
	}
	dq := ar.Alloc(rows * h)   // sample-major
	dmem := ar.Alloc(rows * h) // sample-major
	for s := range k {
		m.att.Backward(ar, atr[s], dctx[s*n*h:(s+1)*n*h], dq[s*n*h:(s+1)*n*h], dmem[s*n*h:(s+1)*n*h])
	}
	denc := ar.AllocRaw(rows * h) // step-major gradient of the encoder's outputs
	for t := range n {
		for s := range k {
			r := t*k + s
			addTo(dhd[r*h:(r+1)*h], dq[(s*n+t)*h:(s*n+t+1)*h])
			copy(denc[r*h:(r+1)*h], dmem[(s*n+t)*h:(s*n+t+1)*h])
		}
	}
	dx := ar.Alloc(rows * in)
	dh0, dc0 := ar.Alloc(k*h), ar.Alloc(k*h)
	m.dec.Backward(ar, dtr, dhd, nil, dx, dh0, dc0)
	for t := range n {
		for s := range k {
			r := dx[(t*k+s)*in : (t*k+s+1)*in]
			p := m.devices
			if t > 0 {
				p = devs[s][t-1]
			}
			addTo(m.devEmb.G[p*dd:(p+1)*dd], r[:dd])
			addTo(denc[(t*k+s)*h:(t*k+s+1)*h], r[dd:])
		}
	}
	// The decoder's initial state is the encoder's last, per sample.
	addTo(denc[(n-1)*k*h:n*k*h], dh0)
	m.enc.Backward(ar, e.tr, denc, dc0, nil, nil, nil)
	return loss
}

// addTo adds src to dst element-wise (nn.Add without its parallel split,
// for the short rows of the per-unit and per-sample loops).
func addTo[T nn.Float](dst, src []T) {
	for i, v := range src[:len(dst)] {
		dst[i] += v
	}
}
