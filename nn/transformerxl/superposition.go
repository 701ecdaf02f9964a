package transformerxl

import (
	"math/rand/v2"

	"github.com/placer/placer/nn"
)

// Conditioner is the feature-conditioning network of parameter
// superposition (GDP eq. 5, GO §4.3): from a graph-level embedding g it
// computes a hidden vector z = relu(g W1 + b1) and one modulation vector
// per dense layer, c = 1 + tanh(z W2 + b2), split into the sizes Dims.
// W2 and b2 start at zero, so every modulation starts at exactly 1 and the
// network starts as if it were unconditioned.
type Conditioner[T nn.Float] struct {
	Dims []int
	L1   *nn.Linear[T] // In -> Hidden
	L2   *nn.Linear[T] // Hidden -> sum(Dims)
}

// NewConditioner returns a conditioner from an in-dimensional graph
// embedding through hidden units to modulation vectors of sizes dims.
func NewConditioner[T nn.Float](name string, in, hidden int, dims []int, r *rand.Rand) *Conditioner[T] {
	total := 0
	for _, d := range dims {
		total += d
	}
	c := &Conditioner[T]{Dims: append([]int(nil), dims...), L1: nn.NewLinear[T](name+".l1", in, hidden, true, r), L2: nn.NewLinear[T](name+".l2", hidden, total, true, r)}
	c.L2.W.Fill(0)
	return c
}

// Params lists the parameters.
func (c *Conditioner[T]) Params() nn.Params[T] { return append(c.L1.Params(), c.L2.Params()...) }

// CondCache is what Conditioner.Backward needs.
type CondCache[T nn.Float] struct {
	g, z, c []T
}

// Hidden is the conditioner's hidden vector z, for heads that share it.
func (cc *CondCache[T]) Hidden() []T { return cc.z }

// Forward computes the modulation vectors (in Dims order, slices of one
// buffer) for the graph embedding g.
func (c *Conditioner[T]) Forward(ar *nn.Arena[T], g []T) ([][]T, *CondCache[T]) {
	cc := &CondCache[T]{g: g, z: ar.AllocRaw(c.L1.Out), c: ar.AllocRaw(c.L2.Out)}
	c.L1.Forward(g, 1, c.L1.W.W, cc.z, false)
	nn.ReLU(cc.z)
	c.L2.Forward(cc.z, 1, c.L2.W.W, cc.c, false)
	for i, v := range cc.c {
		cc.c[i] = 1 + nn.Tanh(v)
	}
	return c.Split(cc.c), cc
}

// Split cuts a flat vector of sum(Dims) entries into the Dims pieces.
func (c *Conditioner[T]) Split(flat []T) [][]T {
	out := make([][]T, len(c.Dims))
	off := 0
	for i, d := range c.Dims {
		out[i] = flat[off : off+d : off+d]
		off += d
	}
	return out
}

// Backward takes the gradient of the flat modulation vector dc (laid out
// as Split expects) and of the hidden vector dz (nil = none), and adds the
// gradients of the parameters and of the graph embedding dg.
func (c *Conditioner[T]) Backward(ar *nn.Arena[T], cc *CondCache[T], dc, dz, dg []T) {
	dpre := ar.AllocRaw(len(dc))
	for i, v := range dc {
		t := cc.c[i] - 1
		dpre[i] = v * (1 - t*t)
	}
	dzz := ar.Alloc(c.L1.Out)
	if dz != nil {
		copy(dzz, dz)
	}
	c.L2.Backward(ar, cc.z, 1, nil, c.L2.W.W, dpre, dzz, nil)
	nn.ReLUBackward(dzz, cc.z)
	c.L1.Backward(ar, cc.g, 1, nil, c.L1.W.W, dzz, dg, nil)
}
