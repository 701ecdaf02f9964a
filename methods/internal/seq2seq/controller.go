package seq2seq

import (
	"math"
	"math/rand/v2"

	"github.com/placer/placer/nn"
)

// Controller is the attentional sequence-to-sequence placer (§3.2 of the
// 2017 paper): an LSTM encoder over a sequence of groups, and an LSTM
// decoder with one step per group that outputs the group's device. The
// decoder starts from the encoder's final state; its input at step t is
// the embedding of the device chosen at step t-1 (a start embedding at
// t = 0) together with the encoder's output at step t, so that step t
// knows which group it places; its output layer reads the decoder state
// and its attention context over all encoder outputs (nn.Attention,
// Luong's general score).
type Controller[T nn.Float] struct {
	hidden, deviceDim, devices int
	enc                        *nn.LSTM[T]  // In -> Hidden
	dec                        *nn.LSTM[T]  // DeviceDim + Hidden -> Hidden
	devEmb                     *nn.Param[T] // (devices + 1) x DeviceDim; row devices is the start
	att                        *nn.Attention[T]
	out                        *nn.Linear[T] // 2 Hidden -> devices
}

// New returns a controller whose encoder reads in values per step, with
// hidden LSTM units and device embeddings of deviceDim, over devices
// devices. Its parameters are named name.enc, name.dec, name.device,
// name.att and name.out and drawn from r in that order, but for the device
// embedding, which stays zero until InitDevices: the methods draw it after
// their own parameters.
func New[T nn.Float](name string, in, hidden, deviceDim, devices int, r *rand.Rand) *Controller[T] {
	return &Controller[T]{hidden: hidden, deviceDim: deviceDim, devices: devices,
		enc:    nn.NewLSTM[T](name+".enc", in, hidden, r),
		dec:    nn.NewLSTM[T](name+".dec", deviceDim+hidden, hidden, r),
		devEmb: nn.NewParam[T](name+".device", devices+1, deviceDim),
		att:    nn.NewAttention[T](name+".att", hidden, hidden, r),
		out:    nn.NewLinear[T](name+".out", 2*hidden, devices, true, r)}
}

// InitDevices draws the device embedding (Glorot) from r.
func (c *Controller[T]) InitDevices(r *rand.Rand) {
	c.devEmb.InitGlorot(r, c.devices+1, c.deviceDim, 1)
}

// Params lists the controller's parameters: the encoder's, the decoder's,
// the device embedding, the attention's and the output layer's.
func (c *Controller[T]) Params() nn.Params[T] {
	ps := nn.Params[T]{}
	ps = append(ps, c.enc.Params()...)
	ps = append(ps, c.dec.Params()...)
	ps = append(ps, c.devEmb)
	ps = append(ps, c.att.Params()...)
	return append(ps, c.out.Params()...)
}

// Input is the encoder's input: Steps groups of the encoder's In values
// each. With Shared, X is one sequence (Steps x In) that every sample
// reads, and the samples share one attention memory (rl17: the graph's
// groups); otherwise X holds one sequence per sample, step-major (row
// t*K + s is sample s's group t), each with its own memory (hdp: the
// groups of each sample's grouping), and the encoder runs over the K
// sequences as one batch.
type Input[T nn.Float] struct {
	X      []T
	Steps  int
	Shared bool
}

// Logits turns the output layer's scores into the logits of a decision;
// without one (nil) the scores are the logits.
type Logits[T nn.Float] interface {
	// Apply replaces z, the scores of sample s's step t (one per
	// device), by its logits, element-wise. sampling is true in Sample
	// and false in Reinforce; in Reinforce, dz receives the derivative of
	// each logit by its score.
	Apply(z []T, s, t int, sampling bool, dz []T)
}

// encoded is the encoder's forward pass over k samples.
type encoded[T nn.Float] struct {
	k, n   int
	shared bool
	tr     *nn.LSTMTrace[T]
	mem    []T   // the attention memory: tr.H when shared, else k x n x Hidden, sample-major
	keys   [][]T // the attention keys: one set when shared, else one per sample
}

func (c *Controller[T]) encode(ar *nn.Arena[T], in Input[T], k int) *encoded[T] {
	n, h := in.Steps, c.hidden
	e := &encoded[T]{k: k, n: n, shared: in.Shared}
	if in.Shared {
		e.tr = c.enc.Forward(ar, in.X, n, 1, nil, nil)
		e.mem = e.tr.H
		e.keys = [][]T{c.att.Keys(ar, e.mem, n)}
		return e
	}
	e.tr = c.enc.Forward(ar, in.X, n, k, nil, nil)
	e.mem = ar.AllocRaw(k * n * h)
	for t := range n {
		for s := range k {
			copy(e.mem[(s*n+t)*h:(s*n+t+1)*h], e.tr.H[(t*k+s)*h:(t*k+s+1)*h])
		}
	}
	for s := range k {
		e.keys = append(e.keys, c.att.Keys(ar, e.memOf(s, h), n))
	}
	return e
}

// seq is the encoder's batch row that sample s reads.
func (e *encoded[T]) seq(s int) int {
	if e.shared {
		return 0
	}
	return s
}

// batch is the encoder's batch: 1 when shared, else k.
func (e *encoded[T]) batch() int {
	if e.shared {
		return 1
	}
	return e.k
}

// memOf is sample s's attention memory (n x Hidden).
func (e *encoded[T]) memOf(s, h int) []T {
	if e.shared {
		return e.mem
	}
	return e.mem[s*e.n*h : (s+1)*e.n*h]
}

// ctxRow is the row of sample s's step t among the attention contexts:
// step-major when shared (one attention over all queries), sample-major
// otherwise (one per sample).
func (e *encoded[T]) ctxRow(t, s int) int {
	if e.shared {
		return t*e.k + s
	}
	return s*e.n + t
}

// decoderInput writes step t's decoder inputs for the samples whose
// previous devices are prev (the start embedding where prev is -1).
func (c *Controller[T]) decoderInput(x []T, e *encoded[T], t int, prev []int) {
	dd, h, b := c.deviceDim, c.hidden, e.batch()
	in := dd + h
	for s, p := range prev {
		if p < 0 {
			p = c.devices
		}
		r := t*b + e.seq(s)
		copy(x[s*in:s*in+dd], c.devEmb.W[p*dd:(p+1)*dd])
		copy(x[s*in+dd:(s+1)*in], e.tr.H[r*h:(r+1)*h])
	}
}

// Sample draws k placements of the in.Steps groups (devs[s][group]), one
// decoder step at a time, and returns them with each sample's
// log-probability. lg, if not nil, shapes the logits; probs, if not nil,
// is called with every decision's device probabilities, step by step and
// sample by sample (for the caller's entropy).
func (c *Controller[T]) Sample(ar *nn.Arena[T], rng *rand.Rand, in Input[T], k int, lg Logits[T], probs func([]T)) (devs [][]int, logp []float64) {
	mk := ar.Mark()
	defer ar.Release(mk)
	n, h, d := in.Steps, c.hidden, c.devices
	inDim := c.deviceDim + h
	e := c.encode(ar, in, k)
	hLast, cLast := e.tr.Last()
	hs, cs := ar.AllocRaw(k*h), ar.AllocRaw(k*h)
	for s := range k {
		b := e.seq(s)
		copy(hs[s*h:(s+1)*h], hLast[b*h:(b+1)*h])
		copy(cs[s*h:(s+1)*h], cLast[b*h:(b+1)*h])
	}
	x := ar.AllocRaw(k * inDim)
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
		c.decoderInput(x, e, t, prev)
		c.dec.Step(x, k, hs, cs, scratch)
		if e.shared {
			am := ar.Mark()
			c.att.Forward(ar, hs, k, e.mem, e.keys[0], n, ctx)
			ar.Release(am)
		} else {
			for s := range k {
				am := ar.Mark()
				c.att.Forward(ar, hs[s*h:(s+1)*h], 1, e.memOf(s, h), e.keys[s], n, ctx[s*h:(s+1)*h])
				ar.Release(am)
			}
		}
		for s := range k {
			copy(o[s*2*h:s*2*h+h], hs[s*h:(s+1)*h])
			copy(o[s*2*h+h:(s+1)*2*h], ctx[s*h:(s+1)*h])
		}
		c.out.Forward(o, k, c.out.W.W, logits, false)
		for s := range k {
			row := logits[s*d : (s+1)*d]
			if lg != nil {
				lg.Apply(row, s, t, true, nil)
			}
			nn.SoftmaxRow(row, 1)
			a := Draw(row, rng.Float64())
			if probs != nil {
				probs(row)
			}
			devs[s][t] = a
			logp[s] += math.Log(math.Max(float64(row[a]), 1e-30))
			prev[s] = a
		}
	}
	return devs, logp
}

// Reinforce adds to the parameters' gradients the gradient of
//
//	L = -Σ_s w[s] Σ_t log p(devs[s][t] | devs[s][:t])
//
// (REINFORCE with w[s] = (R_s - b) / K descends L), computed with the
// decoder teacher-forced on the sampled devices, and returns L. lg is the
// logits' shaping as in Sample (its constants, such as noise, those of
// the samples). dx, if not nil, receives (added) the gradient of the
// encoder's input in.X, for the caller's own layers below it.
func (c *Controller[T]) Reinforce(ar *nn.Arena[T], in Input[T], devs [][]int, w []float64, lg Logits[T], dx []T) float64 {
	mk := ar.Mark()
	defer ar.Release(mk)
	n, h, d, dd := in.Steps, c.hidden, c.devices, c.deviceDim
	k := len(devs)
	inDim := dd + h
	rows := n * k
	e := c.encode(ar, in, k)
	h0, c0 := e.tr.Last()
	if e.shared {
		// Every sample's decoder starts from the one encoder's state.
		hLast, cLast := h0, c0
		h0, c0 = ar.AllocRaw(k*h), ar.AllocRaw(k*h)
		for s := range k {
			copy(h0[s*h:(s+1)*h], hLast)
			copy(c0[s*h:(s+1)*h], cLast)
		}
	}
	xd := ar.AllocRaw(rows * inDim)
	prev := make([]int, k)
	for t := range n {
		for s := range k {
			prev[s] = -1
			if t > 0 {
				prev[s] = devs[s][t-1]
			}
		}
		c.decoderInput(xd[t*k*inDim:(t+1)*k*inDim], e, t, prev)
	}
	dtr := c.dec.Forward(ar, xd, n, k, h0, c0)
	ctx := ar.AllocRaw(rows * h)
	var atr []*nn.AttentionTrace[T]
	if e.shared {
		atr = append(atr, c.att.Forward(ar, dtr.H, rows, e.mem, e.keys[0], n, ctx))
	} else {
		// Attention per sample over its own memory, on sample-major
		// copies of its queries.
		q := ar.AllocRaw(rows * h)
		for t := range n {
			for s := range k {
				copy(q[(s*n+t)*h:(s*n+t+1)*h], dtr.H[(t*k+s)*h:(t*k+s+1)*h])
			}
		}
		for s := range k {
			atr = append(atr, c.att.Forward(ar, q[s*n*h:(s+1)*n*h], n, e.memOf(s, h), e.keys[s], n, ctx[s*n*h:(s+1)*n*h]))
		}
	}
	o := ar.AllocRaw(rows * 2 * h)
	for t := range n {
		for s := range k {
			r, cr := t*k+s, e.ctxRow(t, s)
			copy(o[r*2*h:r*2*h+h], dtr.H[r*h:(r+1)*h])
			copy(o[r*2*h+h:(r+1)*2*h], ctx[cr*h:(cr+1)*h])
		}
	}
	logits := ar.AllocRaw(rows * d)
	c.out.Forward(o, rows, c.out.W.W, logits, false)
	// dL/dz = w (softmax - onehot) dlogits/dz, row t*k + s. The two forms
	// round differently, and each method's results are those of its own.
	loss := 0.0
	var dz []T
	if lg != nil {
		dz = make([]T, d)
	}
	for t := range n {
		for s := range k {
			row := logits[(t*k+s)*d : (t*k+s+1)*d]
			if lg != nil {
				lg.Apply(row, s, t, false, dz)
			}
			nn.SoftmaxRow(row, 1)
			a := devs[s][t]
			loss -= w[s] * math.Log(math.Max(float64(row[a]), 1e-300))
			if lg == nil {
				for j := range row {
					row[j] *= T(w[s])
				}
				row[a] -= T(w[s])
				continue
			}
			row[a]--
			for j := range row {
				row[j] *= T(w[s]) * dz[j]
			}
		}
	}
	do := ar.Alloc(rows * 2 * h)
	c.out.Backward(ar, o, rows, nil, c.out.W.W, logits, do, nil)
	dhd := ar.AllocRaw(rows * h)  // step-major
	dctx := ar.AllocRaw(rows * h) // as ctx
	for t := range n {
		for s := range k {
			r, cr := t*k+s, e.ctxRow(t, s)
			copy(dhd[r*h:(r+1)*h], do[r*2*h:r*2*h+h])
			copy(dctx[cr*h:(cr+1)*h], do[r*2*h+h:(r+1)*2*h])
		}
	}
	// denc is the gradient of the encoder's outputs, e.tr.H's layout.
	var denc []T
	if e.shared {
		denc = ar.Alloc(n * h)
		c.att.Backward(ar, atr[0], dctx, dhd, denc)
	} else {
		dq := ar.Alloc(rows * h)   // sample-major
		dmem := ar.Alloc(rows * h) // sample-major
		for s := range k {
			c.att.Backward(ar, atr[s], dctx[s*n*h:(s+1)*n*h], dq[s*n*h:(s+1)*n*h], dmem[s*n*h:(s+1)*n*h])
		}
		denc = ar.AllocRaw(rows * h) // step-major
		for t := range n {
			for s := range k {
				r := t*k + s
				AddTo(dhd[r*h:(r+1)*h], dq[(s*n+t)*h:(s*n+t+1)*h])
				copy(denc[r*h:(r+1)*h], dmem[(s*n+t)*h:(s*n+t+1)*h])
			}
		}
	}
	dxd := ar.Alloc(rows * inDim)
	dh0, dc0 := ar.Alloc(k*h), ar.Alloc(k*h)
	c.dec.Backward(ar, dtr, dhd, nil, dxd, dh0, dc0)
	b := e.batch()
	for t := range n {
		for s := range k {
			r := dxd[(t*k+s)*inDim : (t*k+s+1)*inDim]
			p := c.devices
			if t > 0 {
				p = devs[s][t-1]
			}
			AddTo(c.devEmb.G[p*dd:(p+1)*dd], r[:dd])
			er := t*b + e.seq(s)
			AddTo(denc[er*h:(er+1)*h], r[dd:])
		}
	}
	// The decoders' initial states are the encoder's last.
	dcLast := dc0
	if e.shared {
		dcLast = ar.Alloc(h)
		for s := range k {
			AddTo(denc[(n-1)*h:n*h], dh0[s*h:(s+1)*h])
			AddTo(dcLast, dc0[s*h:(s+1)*h])
		}
	} else {
		AddTo(denc[(n-1)*k*h:n*k*h], dh0)
	}
	c.enc.Backward(ar, e.tr, denc, dcLast, dx, nil, nil)
	return loss
}

// Draw returns the index that the uniform x in [0, 1) picks from the
// probabilities row (its last index when rounding leaves x over).
func Draw[T nn.Float](row []T, x float64) int {
	for j, p := range row {
		x -= float64(p)
		if x < 0 {
			return j
		}
	}
	return len(row) - 1
}

// RowEntropy is the entropy of the probabilities row, in nats.
func RowEntropy[T nn.Float](row []T) float64 {
	e := 0.0
	for _, p := range row {
		if p > 0 {
			e -= float64(p) * math.Log(float64(p))
		}
	}
	return e
}

// AddTo adds src to dst element-wise (nn.Add without its parallel split,
// for short rows in per-step, per-sample and per-unit loops).
func AddTo[T nn.Float](dst, src []T) {
	for i, v := range src[:len(dst)] {
		dst[i] += v
	}
}
