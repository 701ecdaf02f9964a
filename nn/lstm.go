package nn

import (
	"fmt"
	"math/rand/v2"
)

// LSTM is a long short-term memory layer (Hochreiter & Schmidhuber 1997,
// with the forget gate of Gers et al. 2000 and no peepholes), run over a
// batch of sequences:
//
//	z = x Wx + h' Wh + b        (batch x 4H: input, forget, cell, output)
//	i, f, o = sigmoid(z_i), sigmoid(z_f), sigmoid(z_o);  g = tanh(z_g)
//	c = f ⊙ c' + i ⊙ g
//	h = o ⊙ tanh(c)
//
// where h' and c' are the previous step's outputs. Sequences are
// step-major: row t*batch + b of a steps x batch matrix is sequence b at
// step t. Forward keeps what Backward needs (backpropagation through
// time) in an LSTMTrace; Step is the inference step, for decoders whose
// next input depends on the last output.
type LSTM[T Float] struct {
	In, Hidden int
	Wx         *Param[T] // In x 4*Hidden
	Wh         *Param[T] // Hidden x 4*Hidden
	B          *Param[T] // 1 x 4*Hidden
}

// NewLSTM returns an LSTM layer named name with Glorot-initialized weights
// (each gate's block on its own fan-in and fan-out) and zero biases but
// the forget gate's, which start at 1 so that the cell state is kept
// until the layer learns otherwise (Jozefowicz et al. 2015).
func NewLSTM[T Float](name string, in, hidden int, r *rand.Rand) *LSTM[T] {
	if in < 1 || hidden < 1 {
		panic(fmt.Sprintf("nn: %s: LSTM of %d inputs and %d hidden units", name, in, hidden))
	}
	l := &LSTM[T]{In: in, Hidden: hidden,
		Wx: NewParam[T](name+".wx", in, 4*hidden),
		Wh: NewParam[T](name+".wh", hidden, 4*hidden),
		B:  NewParam[T](name+".b", 1, 4*hidden)}
	l.Wx.InitGlorot(r, in, hidden, 1)
	l.Wh.InitGlorot(r, hidden, hidden, 1)
	for j := hidden; j < 2*hidden; j++ {
		l.B.W[j] = 1
	}
	return l
}

// Params lists the layer's parameters.
func (l *LSTM[T]) Params() Params[T] { return Params[T]{l.Wx, l.Wh, l.B} }

// LSTMTrace is what a sequence's forward pass keeps for its backward pass.
// H is the layer's output: the hidden state of every step.
type LSTMTrace[T Float] struct {
	Steps, Batch int
	X            []T // steps*batch x In: the input (the caller's slice)
	H0, C0       []T // batch x Hidden: the initial state (nil = zeros)
	Gates        []T // steps*batch x 4*Hidden: i, f, g, o after activation
	C            []T // steps*batch x Hidden: cell states
	H            []T // steps*batch x Hidden: hidden states (the outputs)
}

// Last returns the hidden and cell state after the last step (batch x
// Hidden each; views into the trace).
func (tr *LSTMTrace[T]) Last() (h, c []T) {
	if tr.Steps == 0 {
		return tr.H0, tr.C0
	}
	n := len(tr.H) / tr.Steps
	return tr.H[len(tr.H)-n:], tr.C[len(tr.C)-n:]
}

// Forward runs the layer over x (steps*batch x In, step-major) from the
// state h0, c0 (batch x Hidden each; nil = zeros). The input projection of
// all steps is one matrix product; the recurrence adds h' Wh per step.
// The trace's slices come from ar; x, h0 and c0 are kept by reference and
// must not change before Backward.
func (l *LSTM[T]) Forward(ar *Arena[T], x []T, steps, batch int, h0, c0 []T) *LSTMTrace[T] {
	hd, g4 := l.Hidden, 4*l.Hidden
	rows := steps * batch
	if len(x) < rows*l.In {
		panic(fmt.Sprintf("nn: %s: input of %d values, want %d x %d", l.Wx.Name, len(x), rows, l.In))
	}
	tr := &LSTMTrace[T]{Steps: steps, Batch: batch, X: x, H0: h0, C0: c0,
		Gates: ar.AllocRaw(rows * g4), C: ar.AllocRaw(rows * hd), H: ar.AllocRaw(rows * hd)}
	Gemm(false, false, rows, g4, l.In, x, l.In, l.Wx.W, g4, 0, tr.Gates, g4)
	AddBias(tr.Gates, rows, g4, l.B.W)
	for t := range steps {
		z := tr.Gates[t*batch*g4 : (t+1)*batch*g4]
		hPrev, cPrev := h0, c0
		if t > 0 {
			hPrev = tr.H[(t-1)*batch*hd : t*batch*hd]
			cPrev = tr.C[(t-1)*batch*hd : t*batch*hd]
		}
		if hPrev != nil {
			Gemm(false, false, batch, g4, hd, hPrev, hd, l.Wh.W, g4, 1, z, g4)
		}
		lstmCell(z, cPrev, tr.C[t*batch*hd:(t+1)*batch*hd], tr.H[t*batch*hd:(t+1)*batch*hd], batch, hd)
	}
	return tr
}

// lstmCell turns the pre-activations z (batch x 4H) into gates in place
// and writes the new cell state c and hidden state h from cPrev (nil =
// zeros).
func lstmCell[T Float](z, cPrev, c, h []T, batch, hd int) {
	g4 := 4 * hd
	for b := range batch {
		zr := z[b*g4 : (b+1)*g4]
		for j := range hd {
			i := Sigmoid(zr[j])
			f := Sigmoid(zr[hd+j])
			g := Tanh(zr[2*hd+j])
			o := Sigmoid(zr[3*hd+j])
			zr[j], zr[hd+j], zr[2*hd+j], zr[3*hd+j] = i, f, g, o
			cv := i * g
			if cPrev != nil {
				cv += f * cPrev[b*hd+j]
			}
			c[b*hd+j] = cv
			h[b*hd+j] = o * Tanh(cv)
		}
	}
}

// Step runs one step for a batch of inference inputs x (batch x In): h and
// c (batch x Hidden) hold the previous state and are overwritten by the
// new one. scratch needs batch*4*Hidden values.
func (l *LSTM[T]) Step(x []T, batch int, h, c, scratch []T) {
	hd, g4 := l.Hidden, 4*l.Hidden
	z := scratch[:batch*g4]
	Gemm(false, false, batch, g4, l.In, x, l.In, l.Wx.W, g4, 0, z, g4)
	Gemm(false, false, batch, g4, hd, h, hd, l.Wh.W, g4, 1, z, g4)
	AddBias(z, batch, g4, l.B.W)
	lstmCell(z, c, c, h, batch, hd)
}

// Backward propagates through time. dh (steps*batch x Hidden; nil =
// zeros) is the loss's gradient with respect to every output of tr.H, and
// dcLast (batch x Hidden; nil = zeros) its gradient with respect to the
// final cell state (the final hidden state's is dh's last step). It adds
// the parameters' gradients, and the gradients of the input to dx
// (steps*batch x In) and of the initial state to dh0 and dc0 (batch x
// Hidden); each of dx, dh0, dc0 is skipped if nil. ar provides scratch.
func (l *LSTM[T]) Backward(ar *Arena[T], tr *LSTMTrace[T], dh, dcLast, dx, dh0, dc0 []T) {
	hd, g4 := l.Hidden, 4*l.Hidden
	steps, batch := tr.Steps, tr.Batch
	rows := steps * batch
	if rows == 0 {
		return
	}
	m := ar.Mark()
	defer ar.Release(m)
	dz := ar.AllocRaw(rows * g4) // gradient of the pre-activations
	dhNext := ar.Alloc(batch * hd)
	dcNext := ar.Alloc(batch * hd)
	if dcLast != nil {
		copy(dcNext, dcLast)
	}
	for t := steps - 1; t >= 0; t-- {
		if dh != nil {
			Add(dhNext, dh[t*batch*hd:(t+1)*batch*hd])
		}
		cPrev := tr.C0
		if t > 0 {
			cPrev = tr.C[(t-1)*batch*hd : t*batch*hd]
		}
		gates := tr.Gates[t*batch*g4 : (t+1)*batch*g4]
		c := tr.C[t*batch*hd : (t+1)*batch*hd]
		dzt := dz[t*batch*g4 : (t+1)*batch*g4]
		for b := range batch {
			gr, dr := gates[b*g4:(b+1)*g4], dzt[b*g4:(b+1)*g4]
			for j := range hd {
				k := b*hd + j
				i, f, g, o := gr[j], gr[hd+j], gr[2*hd+j], gr[3*hd+j]
				tc := Tanh(c[k])
				dhv := dhNext[k]
				dc := dcNext[k] + dhv*o*(1-tc*tc)
				var cp T
				if cPrev != nil {
					cp = cPrev[k]
				}
				dr[j] = dc * g * i * (1 - i)
				dr[hd+j] = dc * cp * f * (1 - f)
				dr[2*hd+j] = dc * i * (1 - g*g)
				dr[3*hd+j] = dhv * tc * o * (1 - o)
				dcNext[k] = dc * f
			}
		}
		// dh' = dz Wh^T, the previous step's (or the initial state's)
		// gradient through the recurrence.
		Gemm(false, true, batch, hd, g4, dzt, g4, l.Wh.W, g4, 0, dhNext, hd)
	}
	if dh0 != nil {
		Add(dh0, dhNext)
	}
	if dc0 != nil {
		Add(dc0, dcNext)
	}
	// The parameters' gradients over all steps at once.
	ColSumAdd(l.B.G, dz, rows, g4)
	Gemm(true, false, l.In, g4, rows, tr.X, l.In, dz, g4, 1, l.Wx.G, g4)
	if steps > 1 {
		Gemm(true, false, hd, g4, rows-batch, tr.H, hd, dz[batch*g4:], g4, 1, l.Wh.G, g4)
	}
	if tr.H0 != nil {
		Gemm(true, false, hd, g4, batch, tr.H0, hd, dz, g4, 1, l.Wh.G, g4)
	}
	if dx != nil {
		Gemm(false, true, rows, l.In, g4, dz, g4, l.Wx.W, g4, 1, dx, l.In)
	}
}
