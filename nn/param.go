package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Param is one trainable weight matrix (Rows x Cols, row-major) and the
// gradient accumulated into it by the backward passes.
type Param[T Float] struct {
	Name       string // unique within a network, e.g. "txl0.attn.qkv.w"
	Rows, Cols int    // shape
	W          []T    // values
	G          []T    // gradient, same shape; backward passes add to it
}

// NewParam returns a zero parameter of the given shape.
func NewParam[T Float](name string, rows, cols int) *Param[T] {
	return &Param[T]{Name: name, Rows: rows, Cols: cols, W: make([]T, rows*cols), G: make([]T, rows*cols)}
}

// Size is the number of weights.
func (p *Param[T]) Size() int { return len(p.W) }

// ZeroGrad clears the gradient.
func (p *Param[T]) ZeroGrad() { clear(p.G) }

// InitGlorot fills W from U(-l, l) with l = gain * sqrt(6 / (fanIn + fanOut)).
func (p *Param[T]) InitGlorot(r *rand.Rand, fanIn, fanOut int, gain float64) {
	l := gain * math.Sqrt(6/float64(fanIn+fanOut))
	for i := range p.W {
		p.W[i] = T((r.Float64()*2 - 1) * l)
	}
}

// Fill sets every weight to v.
func (p *Param[T]) Fill(v T) {
	for i := range p.W {
		p.W[i] = v
	}
}

// Params is an ordered list of parameters, the unit of saving, loading and
// optimizer updates.
type Params[T Float] []*Param[T]

// ZeroGrad clears every gradient.
func (ps Params[T]) ZeroGrad() {
	for _, p := range ps {
		p.ZeroGrad()
	}
}

// Count is the total number of weights.
func (ps Params[T]) Count() int {
	n := 0
	for _, p := range ps {
		n += p.Size()
	}
	return n
}

// CopyValues copies the weights of src into ps, converting the element
// type; names and shapes must match.
func CopyValues[T, S Float](dst Params[T], src Params[S]) error {
	if len(dst) != len(src) {
		return fmt.Errorf("nn: %d parameters, source has %d", len(dst), len(src))
	}
	for i, p := range dst {
		q := src[i]
		if p.Name != q.Name || p.Rows != q.Rows || p.Cols != q.Cols {
			return fmt.Errorf("nn: parameter %d is %s %dx%d, source has %s %dx%d", i, p.Name, p.Rows, p.Cols, q.Name, q.Rows, q.Cols)
		}
		for j, v := range q.W {
			p.W[j] = T(v)
		}
	}
	return nil
}
