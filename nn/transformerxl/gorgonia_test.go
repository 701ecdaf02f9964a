package transformerxl

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/nntest"
)

// The tests in this file build the same layers in gorgonia (float64) and
// compare outputs and gradients with the hand-written implementation.

const refTol = 1e-9

func perturbed(r *rand.Rand, ps nn.Params[float64], s float64) {
	for _, p := range ps {
		for i := range p.W {
			p.W[i] += s * (r.Float64() - 0.5)
		}
	}
}

func paramNode(ref *nntest.Ref, p *nn.Param[float64]) *G.Node {
	if p.Rows == 1 {
		return ref.Vec(p.Name, p.W)
	}
	return ref.Mat(p.Name, p.Rows, p.Cols, p.W)
}

func TestLinearAndLayerNormMatchGorgonia(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 1))
	rows, in, out := 5, 4, 6
	lin := nn.NewLinear[float64]("lin", in, out, true, r)
	ln := NewLayerNorm[float64]("ln", out)
	perturbed(r, append(lin.Params(), ln.Params()...), 0.5)
	x := nntest.Rand(r, rows*in)
	c := randMod(r, in)
	proj := nntest.Rand(r, rows*out)

	ref := nntest.NewRef(t)
	xn, cn := ref.Mat("x", rows, in, x), ref.Vec("c", c)
	wn, bn := paramNode(ref, lin.W), paramNode(ref, lin.B)
	gn, ben := paramNode(ref, ln.Gain), paramNode(ref, ln.Bias)
	y := ref.LayerNorm(ref.Linear(xn, cn, wn, bn), gn, ben, float64(ln.Eps))
	want, grads := ref.Run(y, proj, xn, cn, wn, bn, gn, ben)

	var ar nn.Arena[float64]
	h := make([]float64, rows*out)
	wm := lin.Modulated(&ar, c)
	lin.Forward(x, rows, wm, h, false)
	got := make([]float64, rows*out)
	lc := ln.Forward(&ar, h, rows, got)
	nntest.Close(t, "y", got, want, refTol)
	dh := make([]float64, rows*out)
	ln.Backward(lc, proj, dh)
	dx, dc := make([]float64, rows*in), make([]float64, in)
	lin.Backward(&ar, x, rows, c, wm, dh, dx, dc)
	for i, g := range [][]float64{dx, dc, lin.W.G, lin.B.G, ln.Gain.G, ln.Bias.G} {
		nntest.Close(t, []string{"dx", "dc", "dW", "db", "dgain", "dbias"}[i], g, grads[i], refTol)
	}
}

func TestFeedForwardMatchesGorgonia(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	rows, d, inner := 6, 5, 9
	ff := NewFeedForward[float64]("ff", d, inner, r)
	perturbed(r, ff.Params(), 0.5)
	x := nntest.Rand(r, rows*d)
	c1, c2 := randMod(r, d), randMod(r, inner)
	proj := nntest.Rand(r, rows*d)

	ref := nntest.NewRef(t)
	xn := ref.Mat("x", rows, d, x)
	w1, b1, w2, b2 := paramNode(ref, ff.L1.W), paramNode(ref, ff.L1.B), paramNode(ref, ff.L2.W), paramNode(ref, ff.L2.B)
	h := ref.Must(G.Rectify(ref.Linear(xn, ref.Vec("c1", c1), w1, b1)))
	y := ref.Linear(h, ref.Vec("c2", c2), w2, b2)
	want, grads := ref.Run(y, proj, xn, w1, b1, w2, b2)

	var ar nn.Arena[float64]
	got := make([]float64, rows*d)
	fc := ff.Forward(&ar, x, rows, c1, c2, got)
	nntest.Close(t, "y", got, want, refTol)
	dx := make([]float64, rows*d)
	ff.Backward(&ar, fc, proj, dx, nil, nil)
	for i, g := range [][]float64{dx, ff.L1.W.G, ff.L1.B.G, ff.L2.W.G, ff.L2.B.G} {
		nntest.Close(t, []string{"dx", "dW1", "db1", "dW2", "db2"}[i], g, grads[i], refTol)
	}
}

// TestAttentionMatchesGorgonia builds segment-recurrent attention in
// gorgonia: each segment's keys and values are those of the previous
// segment (computed from a separate, frozen copy of the input, which is
// how the stop-gradient is expressed there) followed by its own.
func TestAttentionMatchesGorgonia(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 3))
	rows, d, heads, dh, seg := 11, 6, 2, 3, 4
	a := attnSetup(r, d, heads, dh)
	hd := heads * dh
	x := nntest.Rand(r, rows*d)
	cq, co := randMod(r, d), randMod(r, hd)
	proj := nntest.Rand(r, rows*d)

	ref := nntest.NewRef(t)
	xn := ref.Mat("x", rows, d, x)
	mem := ref.Mat("mem", rows, d, x) // same values, no gradient path to x
	cqn := ref.Vec("cq", cq)
	wq, bq := paramNode(ref, a.QKV.W), paramNode(ref, a.QKV.B)
	wo, bo := paramNode(ref, a.Out.W), paramNode(ref, a.Out.B)
	qkv := ref.Linear(xn, cqn, wq, bq)
	kvm := ref.Linear(mem, cqn, wq, bq)
	scale := G.NewConstant(1 / math.Sqrt(float64(dh)))
	var segOuts []*G.Node
	for s0 := 0; s0 < rows; s0 += seg {
		s1 := min(s0+seg, rows)
		var headOuts []*G.Node
		for h := range heads {
			q := ref.Cols(ref.Rows(qkv, s0, s1), h*dh, (h+1)*dh)
			k := ref.Cols(ref.Rows(qkv, s0, s1), hd+h*dh, hd+(h+1)*dh)
			v := ref.Cols(ref.Rows(qkv, s0, s1), 2*hd+h*dh, 2*hd+(h+1)*dh)
			if s0 > 0 {
				km := ref.Cols(ref.Rows(kvm, s0-seg, s0), hd+h*dh, hd+(h+1)*dh)
				vm := ref.Cols(ref.Rows(kvm, s0-seg, s0), 2*hd+h*dh, 2*hd+(h+1)*dh)
				k = ref.Must(G.Concat(0, km, k))
				v = ref.Must(G.Concat(0, vm, v))
			}
			sc := ref.Must(G.HadamardProd(ref.Must(G.Mul(q, ref.Must(G.Transpose(k)))), scale))
			headOuts = append(headOuts, ref.Must(G.Mul(ref.Softmax(sc), v)))
		}
		segOuts = append(segOuts, ref.Must(G.Concat(1, headOuts...)))
	}
	o := ref.Must(G.Concat(0, segOuts...))
	y := ref.Linear(o, ref.Vec("co", co), wo, bo)
	want, grads := ref.Run(y, proj, xn, wq, bq, wo, bo)

	var ar nn.Arena[float64]
	got := make([]float64, rows*d)
	c := a.Forward(&ar, x, rows, seg, cq, co, got)
	nntest.Close(t, "y", got, want, refTol)
	dx := make([]float64, rows*d)
	a.Backward(&ar, c, proj, dx, nil, nil)
	for i, g := range [][]float64{dx, a.QKV.W.G, a.QKV.B.G, a.Out.W.G, a.Out.B.G} {
		nntest.Close(t, []string{"dx", "dWqkv", "dbqkv", "dWout", "dbout"}[i], g, grads[i], refTol)
	}
}

func TestConditionerMatchesGorgonia(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	in, hidden := 7, 5
	dims := []int{3, 4}
	c := NewConditioner[float64]("cond", in, hidden, dims, r)
	perturbed(r, c.Params(), 0.6)
	g := nntest.Rand(r, in)
	proj := nntest.Rand(r, 7)

	ref := nntest.NewRef(t)
	gn := ref.Mat("g", 1, in, g)
	w1, b1, w2, b2 := paramNode(ref, c.L1.W), paramNode(ref, c.L1.B), paramNode(ref, c.L2.W), paramNode(ref, c.L2.B)
	z := ref.Must(G.Rectify(ref.Linear(gn, nil, w1, b1)))
	one := G.NewConstant(1.0)
	y := ref.Must(G.Add(ref.Must(G.Tanh(ref.Linear(z, nil, w2, b2))), one))
	want, grads := ref.Run(y, proj, gn, w1, b1, w2, b2)

	var ar nn.Arena[float64]
	mods, cc := c.Forward(&ar, g)
	nntest.Close(t, "c", append(append([]float64(nil), mods[0]...), mods[1]...), want, refTol)
	dg := make([]float64, in)
	c.Backward(&ar, cc, proj, nil, dg)
	for i, gr := range [][]float64{dg, c.L1.W.G, c.L1.B.G, c.L2.W.G, c.L2.B.G} {
		nntest.Close(t, []string{"dg", "dW1", "db1", "dW2", "db2"}[i], gr, grads[i], refTol)
	}
}
