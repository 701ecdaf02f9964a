package rl17

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/methods/internal/seq2seq"
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

// model is rl17's controller: a trainable op-type embedding over the
// groups' features (the mean of each group's ops' type embeddings,
// followed by the constant rest) feeding the attentional
// sequence-to-sequence controller (seq2seq.Controller) that places the
// groups in their order, one sequence that all samples read.
type model[T nn.Float] struct {
	cfg     Config
	f       *features
	typeEmb *nn.Linear[T] // types -> TypeDim, no bias
	ctl     *seq2seq.Controller[T]
	hist    []T
	rest    []T
}

func newModel[T nn.Float](f *features, devices int, cfg Config, seed uint64) *model[T] {
	cfg = cfg.filled()
	r := rand.New(rand.NewPCG(seed, 0x726c3137)) // "rl17"
	m := &model[T]{cfg: cfg, f: f,
		typeEmb: nn.NewLinear[T]("rl17.type", f.types, cfg.TypeDim, false, r),
		hist:    nn.Convert[T](f.hist), rest: nn.Convert[T](f.rest)}
	m.ctl = seq2seq.New[T]("rl17", cfg.TypeDim+f.restDim(), cfg.Hidden, cfg.DeviceDim, devices, r)
	m.ctl.InitDevices(r)
	return m
}

func (m *model[T]) params() nn.Params[T] {
	return append(m.typeEmb.Params(), m.ctl.Params()...)
}

// input is the encoder's input from ar: per group, its type embedding,
// then the constant rest of its features.
func (m *model[T]) input(ar *nn.Arena[T]) seq2seq.Input[T] {
	n, td, rd := m.f.n, m.cfg.TypeDim, m.f.restDim()
	in := td + rd
	emb := ar.AllocRaw(n * td)
	m.typeEmb.Forward(m.hist, n, m.typeEmb.W.W, emb, false)
	x := ar.AllocRaw(n * in)
	for t := range n {
		copy(x[t*in:t*in+td], emb[t*td:(t+1)*td])
		copy(x[t*in+td:(t+1)*in], m.rest[t*rd:(t+1)*rd])
	}
	return seq2seq.Input[T]{X: x, Steps: n, Shared: true}
}

// sample draws k placements of the groups (devs[s][group]) from the
// controller, one decoder step at a time; it returns them with each
// sample's log-probability and the mean entropy per group.
func (m *model[T]) sample(ar *nn.Arena[T], rng *rand.Rand, k int) (devs [][]int, logp []float64, entropy float64) {
	mk := ar.Mark()
	defer ar.Release(mk)
	nk := float64(m.f.n * k)
	devs, logp = m.ctl.Sample(ar, rng, m.input(ar), k, nil, func(row []T) {
		for _, p := range row {
			if p > 0 {
				entropy -= float64(p) * math.Log(float64(p)) / nk
			}
		}
	})
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
	n, td := m.f.n, m.cfg.TypeDim
	in := m.input(ar)
	ein := td + m.f.restDim()
	dx := ar.Alloc(n * ein)
	loss := m.ctl.Reinforce(ar, in, devs, w, nil, dx)
	demb := ar.AllocRaw(n * td)
	for t := range n {
		copy(demb[t*td:(t+1)*td], dx[t*ein:t*ein+td])
	}
	m.typeEmb.Backward(ar, m.hist, n, nil, m.typeEmb.W.W, demb, nil, nil)
	return loss
}
