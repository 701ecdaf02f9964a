package rl17

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/nn"
)

// ShapeSlots is the length of a group's output-shape feature: the sizes of
// its largest outgoing tensors, zero-padded (the paper's fixed-size
// zero-padded list of output sizes).
const ShapeSlots = 4

// features are the encoder's inputs per group, in the group order: the
// op-type histogram (the fraction of the group's ops of each type; through
// the type embedding it is the mean of its ops' type embeddings), and the
// constant rest: the output-shape slots and the one-hot adjacency (the
// groups that feed it, then the groups it feeds).
type features struct {
	n, types int
	hist     []float64 // n x types
	rest     []float64 // n x (ShapeSlots + 2n)
}

// restDim is the width of the constant part of a group's input.
func (f *features) restDim() int { return ShapeSlots + 2*f.n }

// newFeatures computes the features of g's groups.
func newFeatures(g *graph.Graph, gr *Groups) *features {
	n := gr.N()
	var names []string
	for i := range g.NumOps() {
		names = append(names, g.Op(i).Type)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	f := &features{n: n, types: len(names)}
	f.hist = make([]float64, n*f.types)
	rd := f.restDim()
	f.rest = make([]float64, n*rd)
	for c, ms := range gr.Members {
		for _, op := range ms {
			k, _ := slices.BinarySearch(names, g.Op(int(op)).Type)
			f.hist[c*f.types+k] += 1 / float64(len(ms))
		}
	}
	out := make([][]float64, n)
	for t := range g.NumTensors() {
		ts := g.Tensor(t)
		a := gr.Of[ts.Producer]
		leaves := false
		for _, c := range ts.Consumers {
			b := gr.Of[c]
			if b == a {
				continue
			}
			leaves = true
			f.rest[int(b)*rd+ShapeSlots+int(a)] = 1   // a feeds b
			f.rest[int(a)*rd+ShapeSlots+n+int(b)] = 1 // b is fed by a
		}
		if leaves {
			out[a] = append(out[a], math.Log2(1+float64(ts.Bytes))/32)
		}
	}
	for c := range n {
		s := out[c]
		slices.Sort(s)
		slices.Reverse(s)
		copy(f.rest[c*rd:c*rd+ShapeSlots], s)
	}
	return f
}

// Config sizes the controller. The zero value of each field is its
// default.
type Config struct {
	Hidden    int `json:"hidden"`     // LSTM units of the encoder and the decoder; 0 = 128
	TypeDim   int `json:"type_dim"`   // op-type embedding; 0 = 32
	DeviceDim int `json:"device_dim"` // device embedding fed to the next decoder step; 0 = 16
}

// filled returns c with its defaults.
func (c Config) filled() Config {
	if c.Hidden <= 0 {
		c.Hidden = 128
	}
	if c.TypeDim <= 0 {
		c.TypeDim = 32
	}
	if c.DeviceDim <= 0 {
		c.DeviceDim = 16
	}
	return c
}

// model is the attentional sequence-to-sequence controller (§3.2): an LSTM
// encoder over the groups, and an LSTM decoder with one step per group
// that outputs the group's device. The decoder starts from the encoder's
// final state; its input at step t is the embedding of the device chosen
// at step t-1 (a start embedding at t = 0) together with the encoder's
// output at step t, so that step t knows which group it places; its
// output layer reads the decoder state and its attention context over all
// encoder outputs (nn.Attention, Luong's general score).
type model[T nn.Float] struct {
	cfg     Config
	f       *features
	devices int
	typeEmb *nn.Linear[T] // types -> TypeDim, no bias
	enc     *nn.LSTM[T]   // TypeDim + restDim -> Hidden
	dec     *nn.LSTM[T]   // DeviceDim + Hidden -> Hidden
	devEmb  *nn.Param[T]  // (devices + 1) x DeviceDim; row devices is the start
	att     *nn.Attention[T]
	out     *nn.Linear[T] // 2 Hidden -> devices
	hist    []T
	rest    []T
}

func newModel[T nn.Float](f *features, devices int, cfg Config, seed uint64) *model[T] {
	cfg = cfg.filled()
	r := rand.New(rand.NewPCG(seed, 0x726c3137)) // "rl17"
	h := cfg.Hidden
	m := &model[T]{cfg: cfg, f: f, devices: devices,
		typeEmb: nn.NewLinear[T]("rl17.type", f.types, cfg.TypeDim, false, r),
		enc:     nn.NewLSTM[T]("rl17.enc", cfg.TypeDim+f.restDim(), h, r),
		dec:     nn.NewLSTM[T]("rl17.dec", cfg.DeviceDim+h, h, r),
		devEmb:  nn.NewParam[T]("rl17.device", devices+1, cfg.DeviceDim),
		att:     nn.NewAttention[T]("rl17.att", h, h, r),
		out:     nn.NewLinear[T]("rl17.out", 2*h, devices, true, r),
		hist:    nn.Convert[T](f.hist), rest: nn.Convert[T](f.rest)}
	m.devEmb.InitGlorot(r, devices+1, cfg.DeviceDim, 1)
	return m
}

func (m *model[T]) params() nn.Params[T] {
	ps := nn.Params[T]{}
	ps = append(ps, m.typeEmb.Params()...)
	ps = append(ps, m.enc.Params()...)
	ps = append(ps, m.dec.Params()...)
	ps = append(ps, m.devEmb)
	ps = append(ps, m.att.Params()...)
	return append(ps, m.out.Params()...)
}

// encoded is the encoder's forward pass.
type encoded[T nn.Float] struct {
	x    []T // n x (TypeDim + restDim): the encoder's input
	tr   *nn.LSTMTrace[T]
	keys []T // the attention keys of tr.H
}

func (m *model[T]) encode(ar *nn.Arena[T]) *encoded[T] {
	n, td, rd := m.f.n, m.cfg.TypeDim, m.f.restDim()
	in := td + rd
	emb := ar.AllocRaw(n * td)
	m.typeEmb.Forward(m.hist, n, m.typeEmb.W.W, emb, false)
	x := ar.AllocRaw(n * in)
	for t := range n {
		copy(x[t*in:t*in+td], emb[t*td:(t+1)*td])
		copy(x[t*in+td:(t+1)*in], m.rest[t*rd:(t+1)*rd])
	}
	e := &encoded[T]{x: x, tr: m.enc.Forward(ar, x, n, 1, nil, nil)}
	e.keys = m.att.Keys(ar, e.tr.H, n)
	return e
}

// decoderInput writes step t's decoder inputs for batch samples whose
// previous devices are prev (the start embedding where prev is -1).
func (m *model[T]) decoderInput(x []T, e *encoded[T], t int, prev []int) {
	dd, h := m.cfg.DeviceDim, m.cfg.Hidden
	in := dd + h
	for k, p := range prev {
		if p < 0 {
			p = m.devices
		}
		copy(x[k*in:k*in+dd], m.devEmb.W[p*dd:(p+1)*dd])
		copy(x[k*in+dd:(k+1)*in], e.tr.H[t*h:(t+1)*h])
	}
}

// sample draws k placements of the groups (devs[s][group]) from the
// controller, one decoder step at a time; it returns them with each
// sample's log-probability and the mean entropy per group.
func (m *model[T]) sample(ar *nn.Arena[T], rng *rand.Rand, k int) (devs [][]int, logp []float64, entropy float64) {
	mk := ar.Mark()
	defer ar.Release(mk)
	n, h, d := m.f.n, m.cfg.Hidden, m.devices
	in := m.cfg.DeviceDim + h
	e := m.encode(ar)
	hLast, cLast := e.tr.Last()
	hs, cs := ar.AllocRaw(k*h), ar.AllocRaw(k*h)
	for s := range k {
		copy(hs[s*h:(s+1)*h], hLast)
		copy(cs[s*h:(s+1)*h], cLast)
	}
	x := ar.AllocRaw(k * in)
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
		m.decoderInput(x, e, t, prev)
		m.dec.Step(x, k, hs, cs, scratch)
		am := ar.Mark()
		m.att.Forward(ar, hs, k, e.tr.H, e.keys, n, ctx)
		ar.Release(am)
		for s := range k {
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
//	L = -Σ_s w[s] Σ_t log p(devs[s][t] | devs[s][:t])
//
// (REINFORCE with w[s] = (R_s - b) / K descends L), computed with the
// decoder teacher-forced on the sampled devices, and returns L.
func (m *model[T]) reinforce(ar *nn.Arena[T], devs [][]int, w []float64) float64 {
	mk := ar.Mark()
	defer ar.Release(mk)
	n, h, d, dd := m.f.n, m.cfg.Hidden, m.devices, m.cfg.DeviceDim
	k := len(devs)
	in := dd + h
	rows := n * k
	e := m.encode(ar)
	hLast, cLast := e.tr.Last()
	h0, c0 := ar.AllocRaw(k*h), ar.AllocRaw(k*h)
	for s := range k {
		copy(h0[s*h:(s+1)*h], hLast)
		copy(c0[s*h:(s+1)*h], cLast)
	}
	x := ar.AllocRaw(rows * in)
	prev := make([]int, k)
	for t := range n {
		for s := range k {
			prev[s] = -1
			if t > 0 {
				prev[s] = devs[s][t-1]
			}
		}
		m.decoderInput(x[t*k*in:(t+1)*k*in], e, t, prev)
	}
	dtr := m.dec.Forward(ar, x, n, k, h0, c0)
	ctx := ar.AllocRaw(rows * h)
	atr := m.att.Forward(ar, dtr.H, rows, e.tr.H, e.keys, n, ctx)
	o := ar.AllocRaw(rows * 2 * h)
	for r := range rows {
		copy(o[r*2*h:r*2*h+h], dtr.H[r*h:(r+1)*h])
		copy(o[r*2*h+h:(r+1)*2*h], ctx[r*h:(r+1)*h])
	}
	logits := ar.AllocRaw(rows * d)
	m.out.Forward(o, rows, m.out.W.W, logits, false)
	// dL/dlogits = w (softmax - onehot), row t*k + s.
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
	dhd := ar.AllocRaw(rows * h)
	dctx := ar.AllocRaw(rows * h)
	for r := range rows {
		copy(dhd[r*h:(r+1)*h], do[r*2*h:r*2*h+h])
		copy(dctx[r*h:(r+1)*h], do[r*2*h+h:(r+1)*2*h])
	}
	denc := ar.Alloc(n * h) // gradient of the encoder's outputs
	m.att.Backward(ar, atr, dctx, dhd, denc)
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
			g := m.devEmb.G[p*dd : (p+1)*dd]
			for j := range dd {
				g[j] += r[j]
			}
			de := denc[t*h : (t+1)*h]
			for j := range h {
				de[j] += r[dd+j]
			}
		}
	}
	// The decoder's initial state is the encoder's last, for every sample.
	dcLast := ar.Alloc(h)
	dl := denc[(n-1)*h : n*h]
	for s := range k {
		for j := range h {
			dl[j] += dh0[s*h+j]
			dcLast[j] += dc0[s*h+j]
		}
	}
	td, rd := m.cfg.TypeDim, m.f.restDim()
	ein := td + rd
	dex := ar.Alloc(n * ein)
	m.enc.Backward(ar, e.tr, denc, dcLast, dex, nil, nil)
	demb := ar.AllocRaw(n * td)
	for t := range n {
		copy(demb[t*td:(t+1)*td], dex[t*ein:t*ein+td])
	}
	m.typeEmb.Backward(ar, m.hist, n, nil, m.typeEmb.W.W, demb, nil, nil)
	return loss
}
