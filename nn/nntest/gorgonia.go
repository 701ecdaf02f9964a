package nntest

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Ref builds a gorgonia expression graph in float64, the reference the
// hand-written layers are checked against. Build one graph at a time:
// gorgonia's graph construction is not safe for concurrent use.
type Ref struct {
	T *testing.T
	G *G.ExprGraph
}

// NewRef starts a reference graph.
func NewRef(t *testing.T) *Ref { return &Ref{T: t, G: G.NewGraph()} }

// Must returns n, failing the test on err.
func (r *Ref) Must(n *G.Node, err error) *G.Node {
	r.T.Helper()
	if err != nil {
		r.T.Fatal(err)
	}
	return n
}

// Mat is a rows x cols leaf holding a copy of data.
func (r *Ref) Mat(name string, rows, cols int, data []float64) *G.Node {
	v := tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(append([]float64(nil), data...)))
	return G.NewMatrix(r.G, G.Float64, G.WithShape(rows, cols), G.WithName(name), G.WithValue(v))
}

// Vec is a vector leaf holding a copy of data.
func (r *Ref) Vec(name string, data []float64) *G.Node {
	v := tensor.New(tensor.WithShape(len(data)), tensor.WithBacking(append([]float64(nil), data...)))
	return G.NewVector(r.G, G.Float64, G.WithShape(len(data)), G.WithName(name), G.WithValue(v))
}

// Linear is (x ⊙ c) w + b for x rows x in, c a vector (nil = none), w a
// matrix and b a vector (nil = none).
func (r *Ref) Linear(x, c, w, b *G.Node) *G.Node {
	r.T.Helper()
	if c != nil {
		x = r.Must(G.BroadcastHadamardProd(x, c, nil, []byte{0}))
	}
	y := r.Must(G.Mul(x, w))
	if b != nil {
		y = r.Must(G.BroadcastAdd(y, b, nil, []byte{0}))
	}
	return y
}

// LayerNorm is composed from primitives (gorgonia has no layer norm; the
// inverse square root is Pow(., -0.5), since InverseSqrt's gradient is
// wrong in this version).
func (r *Ref) LayerNorm(x, gain, bias *G.Node, eps float64) *G.Node {
	r.T.Helper()
	mean := r.Must(G.Mean(x, 1))
	xc := r.Must(G.BroadcastSub(x, mean, nil, []byte{1}))
	v := r.Must(G.Mean(r.Must(G.Square(xc)), 1))
	rstd := r.Must(G.Pow(r.Must(G.Add(v, G.NewConstant(eps))), G.NewConstant(-0.5)))
	xh := r.Must(G.BroadcastHadamardProd(xc, rstd, nil, []byte{1}))
	y := r.Must(G.BroadcastHadamardProd(xh, gain, nil, []byte{0}))
	return r.Must(G.BroadcastAdd(y, bias, nil, []byte{0}))
}

// Softmax over the rows of x, composed (exp(x - max) / sum).
func (r *Ref) Softmax(x *G.Node) *G.Node {
	r.T.Helper()
	mx := r.Must(G.Max(x, 1))
	e := r.Must(G.Exp(r.Must(G.BroadcastSub(x, mx, nil, []byte{1}))))
	s := r.Must(G.Sum(e, 1))
	return r.Must(G.BroadcastHadamardDiv(e, s, nil, []byte{1}))
}

// Rows slices rows [lo, hi) of x.
func (r *Ref) Rows(x *G.Node, lo, hi int) *G.Node { return r.Must(G.Slice(x, G.S(lo, hi))) }

// Cols slices columns [lo, hi) of x.
func (r *Ref) Cols(x *G.Node, lo, hi int) *G.Node { return r.Must(G.Slice(x, nil, G.S(lo, hi))) }

// Run computes cost = sum(y ⊙ proj) and its gradient with respect to wrt,
// and returns y's value and the gradients.
func (r *Ref) Run(y *G.Node, proj []float64, wrt ...*G.Node) (out []float64, grads [][]float64) {
	r.T.Helper()
	shape := y.Shape()
	p := r.Mat("proj", shape[0], shape[1], proj)
	cost := r.Must(G.Sum(r.Must(G.HadamardProd(y, p))))
	if _, err := G.Grad(cost, wrt...); err != nil {
		r.T.Fatal(err)
	}
	m := G.NewTapeMachine(r.G, G.BindDualValues(wrt...))
	defer m.Close()
	if err := m.RunAll(); err != nil {
		r.T.Fatal(err)
	}
	out = append([]float64(nil), y.Value().Data().([]float64)...)
	for _, w := range wrt {
		gv, err := w.Grad()
		if err != nil {
			r.T.Fatal(err)
		}
		grads = append(grads, append([]float64(nil), gv.Data().([]float64)...))
	}
	return out, grads
}

// Close compares got with want element-wise within tol (absolute, plus
// relative to the largest |want|).
func Close(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, reference has %d", name, len(got), len(want))
	}
	scale := 0.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*(1+scale) || math.IsNaN(got[i]) {
			t.Fatalf("%s[%d] = %.12g, gorgonia reference %.12g", name, i, got[i], want[i])
		}
	}
}
