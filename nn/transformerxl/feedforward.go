package transformerxl

import (
	"math/rand/v2"

	"github.com/placer/placer/nn"
)

// FeedForward is the position-wise feed-forward layer
// y = (relu((x ⊙ c1) W1 + b1) ⊙ c2) W2 + b2.
type FeedForward[T nn.Float] struct {
	L1, L2 *nn.Linear[T]
}

// NewFeedForward returns a feed-forward layer dim -> inner -> dim.
func NewFeedForward[T nn.Float](name string, dim, inner int, r *rand.Rand) *FeedForward[T] {
	return &FeedForward[T]{L1: nn.NewLinear[T](name+".ff1", dim, inner, true, r), L2: nn.NewLinear[T](name+".ff2", inner, dim, true, r)}
}

// Params lists the parameters.
func (f *FeedForward[T]) Params() nn.Params[T] { return append(f.L1.Params(), f.L2.Params()...) }

// ModDims are the sizes of the modulation vectors Forward takes.
func (f *FeedForward[T]) ModDims() []int { return []int{f.L1.In, f.L2.In} }

// FFCache is what FeedForward.Backward needs.
type FFCache[T nn.Float] struct {
	x      []T
	rows   int
	c1, c2 []T
	w1, w2 []T
	hidden []T // relu output, rows x inner
}

// Forward computes y (overwritten) for the rows x dim matrix x; c1 and c2
// are the modulation vectors (nil = none).
func (f *FeedForward[T]) Forward(ar *nn.Arena[T], x []T, rows int, c1, c2, y []T) *FFCache[T] {
	c := &FFCache[T]{x: x, rows: rows, c1: c1, c2: c2}
	c.w1 = f.L1.Modulated(ar, c1)
	c.w2 = f.L2.Modulated(ar, c2)
	c.hidden = ar.AllocRaw(rows * f.L1.Out)
	f.L1.Forward(x, rows, c.w1, c.hidden, false)
	nn.ReLU(c.hidden)
	f.L2.Forward(c.hidden, rows, c.w2, y, false)
	return c
}

// Backward takes dy and adds the gradients of the parameters, the input dx
// and the modulation vectors dc1, dc2 (nil = skip).
func (f *FeedForward[T]) Backward(ar *nn.Arena[T], c *FFCache[T], dy, dx, dc1, dc2 []T) {
	dh := ar.Alloc(c.rows * f.L1.Out)
	f.L2.Backward(ar, c.hidden, c.rows, c.c2, c.w2, dy, dh, dc2)
	nn.ReLUBackward(dh, c.hidden)
	f.L1.Backward(ar, c.x, c.rows, c.c1, c.w1, dh, dx, dc1)
}
