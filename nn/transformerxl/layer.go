package transformerxl

import (
	"math/rand/v2"

	"github.com/placer/placer/nn"
)

// Layer is one Transformer-XL block with post-layer-norm residuals:
//
//	x1 = LN1(x + Attention(x)),  y = LN2(x1 + FeedForward(x1)).
type Layer[T nn.Float] struct {
	Attn *Attention[T]
	LN1  *LayerNorm[T]
	FF   *FeedForward[T]
	LN2  *LayerNorm[T]
}

// NewLayer returns a block of model width dim.
func NewLayer[T nn.Float](name string, dim, heads, headDim, inner int, r *rand.Rand) *Layer[T] {
	return &Layer[T]{
		Attn: NewAttention[T](name+".attn", dim, heads, headDim, r),
		LN1:  NewLayerNorm[T](name+".ln1", dim),
		FF:   NewFeedForward[T](name, dim, inner, r),
		LN2:  NewLayerNorm[T](name+".ln2", dim),
	}
}

// Params lists the parameters.
func (l *Layer[T]) Params() nn.Params[T] {
	ps := l.Attn.Params()
	ps = append(ps, l.LN1.Params()...)
	ps = append(ps, l.FF.Params()...)
	return append(ps, l.LN2.Params()...)
}

// ModDims are the sizes of the four modulation vectors Forward takes, one
// per dense layer: QKV projection, output projection, FF1, FF2.
func (l *Layer[T]) ModDims() []int { return append(l.Attn.ModDims(), l.FF.ModDims()...) }

// LayerCache is what Layer.Backward needs.
type LayerCache[T nn.Float] struct {
	rows       int
	mod        [][]T
	attn       *AttnCache[T]
	ln1, ln2   *LNCache[T]
	ff         *FFCache[T]
	x1         []T
	dim, inner int
}

// Forward runs the block on the rows x dim matrix x in segments of segLen
// and writes y (overwritten). mod holds the modulation vectors in ModDims
// order; nil or nil entries mean none.
func (l *Layer[T]) Forward(ar *nn.Arena[T], x []T, rows, segLen int, mod [][]T, y []T) *LayerCache[T] {
	m := func(i int) []T {
		if i < len(mod) {
			return mod[i]
		}
		return nil
	}
	d := l.Attn.Dim
	c := &LayerCache[T]{rows: rows, mod: mod, dim: d}
	s := ar.AllocRaw(rows * d)
	c.attn = l.Attn.Forward(ar, x, rows, segLen, m(0), m(1), s)
	nn.Add(s, x)
	c.x1 = ar.AllocRaw(rows * d)
	c.ln1 = l.LN1.Forward(ar, s, rows, c.x1)
	f := s // reuse: s is no longer needed
	c.ff = l.FF.Forward(ar, c.x1, rows, m(2), m(3), f)
	nn.Add(f, c.x1)
	c.ln2 = l.LN2.Forward(ar, f, rows, y)
	return c
}

// Backward takes dy and adds the gradients of the parameters, the input dx
// and the modulation vectors dmod (same layout as mod; nil entries skip).
func (l *Layer[T]) Backward(ar *nn.Arena[T], c *LayerCache[T], dy, dx []T, dmod [][]T) {
	m := func(i int) []T {
		if i < len(dmod) {
			return dmod[i]
		}
		return nil
	}
	d, rows := c.dim, c.rows
	ds2 := ar.Alloc(rows * d)
	l.LN2.Backward(c.ln2, dy, ds2)
	dx1 := ar.AllocRaw(rows * d)
	copy(dx1, ds2)
	l.FF.Backward(ar, c.ff, ds2, dx1, m(2), m(3))
	ds1 := ds2 // reuse
	clear(ds1)
	l.LN1.Backward(c.ln1, dx1, ds1)
	nn.Add(dx, ds1)
	l.Attn.Backward(ar, c.attn, ds1, dx, m(0), m(1))
}
