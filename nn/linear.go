package nn

import (
	"fmt"
	"math/rand/v2"
)

// Linear is a dense layer y = (x ⊙ c) W + b, where c is an optional
// per-graph modulation vector over the input features (GDP eq. 5,
// parameter superposition). Because c is the same for every row, the layer
// computes it as x (diag(c) W): the modulation costs one in x out scaling
// per call, not one per row.
type Linear[T Float] struct {
	In, Out int
	W       *Param[T] // In x Out
	B       *Param[T] // 1 x Out; nil for no bias
}

// NewLinear returns a Linear layer named name with Glorot-initialized
// weights and zero bias (no bias if bias is false).
func NewLinear[T Float](name string, in, out int, bias bool, r *rand.Rand) *Linear[T] {
	l := &Linear[T]{In: in, Out: out, W: NewParam[T](name+".w", in, out)}
	l.W.InitGlorot(r, in, out, 1)
	if bias {
		l.B = NewParam[T](name+".b", 1, out)
	}
	return l
}

// Params lists the layer's parameters.
func (l *Linear[T]) Params() Params[T] {
	if l.B == nil {
		return Params[T]{l.W}
	}
	return Params[T]{l.W, l.B}
}

// Modulated returns diag(c) W (allocated from ar), or W itself when c is nil.
func (l *Linear[T]) Modulated(ar *Arena[T], c []T) []T {
	if c == nil {
		return l.W.W
	}
	if len(c) != l.In {
		panic(fmt.Sprintf("nn: %s: modulation has %d entries, want %d", l.W.Name, len(c), l.In))
	}
	wm := ar.AllocRaw(l.In * l.Out)
	for i := range l.In {
		src := l.W.W[i*l.Out : (i+1)*l.Out]
		dst := wm[i*l.Out : (i+1)*l.Out]
		for j, v := range src {
			dst[j] = c[i] * v
		}
	}
	return wm
}

// Forward computes y = x wm + b for the rows x In matrix x, with wm from
// Modulated. y (rows x Out) is overwritten, or added to if accumulate.
func (l *Linear[T]) Forward(x []T, rows int, wm []T, y []T, accumulate bool) {
	var beta T
	if accumulate {
		beta = 1
	}
	Gemm(false, false, rows, l.Out, l.In, x, l.In, wm, l.Out, beta, y, l.Out)
	if l.B != nil {
		AddBias(y, rows, l.Out, l.B.W)
	}
}

// Backward takes dy (rows x Out) and adds the gradients of W, b, the
// input dx (rows x In; skipped if nil) and the modulation dc (skipped if
// nil or c is nil). x, c and wm are those of the forward pass; ar provides
// scratch.
func (l *Linear[T]) Backward(ar *Arena[T], x []T, rows int, c, wm, dy, dx, dc []T) {
	if dx != nil {
		Gemm(false, true, rows, l.In, l.Out, dy, l.Out, wm, l.Out, 1, dx, l.In)
	}
	l.backwardParams(ar, x, rows, c, dy, dc)
}

func (l *Linear[T]) backwardParams(ar *Arena[T], x []T, rows int, c, dy, dc []T) {
	if l.B != nil {
		ColSumAdd(l.B.G, dy, rows, l.Out)
	}
	if c == nil {
		Gemm(true, false, l.In, l.Out, rows, x, l.In, dy, l.Out, 1, l.W.G, l.Out)
		return
	}
	// dW' = x^T dy is the gradient of diag(c) W.
	dwm := ar.AllocRaw(l.In * l.Out)
	Gemm(true, false, l.In, l.Out, rows, x, l.In, dy, l.Out, 0, dwm, l.Out)
	for i := range l.In {
		g := dwm[i*l.Out : (i+1)*l.Out]
		w := l.W.W[i*l.Out : (i+1)*l.Out]
		gw := l.W.G[i*l.Out : (i+1)*l.Out]
		var s T
		for j, v := range g {
			gw[j] += c[i] * v
			s += w[j] * v
		}
		if dc != nil {
			dc[i] += s
		}
	}
}
