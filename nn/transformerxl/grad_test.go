package transformerxl

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/nntest"
)

const (
	fdH    = 1e-6
	fdRTol = 1e-5
	fdATol = 1e-8
)

func randMod(r *rand.Rand, n int) []float64 {
	c := make([]float64, n)
	for i := range c {
		c[i] = 0.5 + r.Float64()
	}
	return c
}

func TestLayerNormGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	rows, d := 7, 9
	ln := NewLayerNorm[float64]("ln", d)
	for i := range ln.Gain.W {
		ln.Gain.W[i] = 0.5 + r.Float64()
		ln.Bias.W[i] = r.Float64() - 0.5
	}
	x := nntest.Rand(r, rows*d)
	proj := nntest.Rand(r, rows*d)
	loss := func() float64 {
		var ar nn.Arena[float64]
		y := make([]float64, rows*d)
		ln.Forward(&ar, x, rows, y)
		return nntest.Dot(y, proj)
	}
	var ar nn.Arena[float64]
	y := make([]float64, rows*d)
	c := ln.Forward(&ar, x, rows, y)
	dx := make([]float64, rows*d)
	ln.Backward(c, proj, dx)
	ts := append(nntest.ParamTargets(ln.Params()), nntest.Target{Name: "x", X: x, Grad: dx})
	nntest.Check(t, loss, ts, 30, fdH, fdRTol, fdATol)
}

func TestFeedForwardGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rows, d, inner := 6, 5, 11
	ff := NewFeedForward[float64]("ff", d, inner, r)
	for _, p := range ff.Params() {
		for i := range p.W {
			p.W[i] += 0.1 * (r.Float64() - 0.5)
		}
	}
	x := nntest.Rand(r, rows*d)
	c1, c2 := randMod(r, d), randMod(r, inner)
	proj := nntest.Rand(r, rows*d)
	loss := func() float64 {
		var ar nn.Arena[float64]
		y := make([]float64, rows*d)
		ff.Forward(&ar, x, rows, c1, c2, y)
		return nntest.Dot(y, proj)
	}
	var ar nn.Arena[float64]
	y := make([]float64, rows*d)
	c := ff.Forward(&ar, x, rows, c1, c2, y)
	dx, dc1, dc2 := make([]float64, rows*d), make([]float64, d), make([]float64, inner)
	ff.Backward(&ar, c, proj, dx, dc1, dc2)
	ts := append(nntest.ParamTargets(ff.Params()),
		nntest.Target{Name: "x", X: x, Grad: dx}, nntest.Target{Name: "c1", X: c1, Grad: dc1}, nntest.Target{Name: "c2", X: c2, Grad: dc2})
	nntest.Check(t, loss, ts, 30, fdH, fdRTol, fdATol)
}

// attnSetup builds an attention layer with random biases (which start at
// zero) so that every parameter matters.
func attnSetup(r *rand.Rand, d, heads, dh int) *Attention[float64] {
	a := NewAttention[float64]("attn", d, heads, dh, r)
	for _, p := range a.Params() {
		for i := range p.W {
			p.W[i] += 0.2 * (r.Float64() - 0.5)
		}
	}
	return a
}

// TestAttentionGradientFrozenMemory checks the stop-gradient semantics: with
// the memory's keys and values computed from a frozen copy of the input,
// the finite-difference derivative with respect to the input is exactly
// what Backward reports for the input, and the weights get both paths.
func TestAttentionGradientFrozenMemory(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 3))
	rows, d, heads, dh, seg := 11, 6, 2, 3, 4 // three segments, the last one short
	a := attnSetup(r, d, heads, dh)
	x := nntest.Rand(r, rows*d)
	mem := append([]float64(nil), x...)
	cq, co := randMod(r, d), randMod(r, heads*dh)
	proj := nntest.Rand(r, rows*d)
	loss := func() float64 {
		var ar nn.Arena[float64]
		y := make([]float64, rows*d)
		a.forward(&ar, x, mem, rows, seg, cq, co, y)
		return nntest.Dot(y, proj)
	}
	var ar nn.Arena[float64]
	y := make([]float64, rows*d)
	c := a.forward(&ar, x, mem, rows, seg, cq, co, y)
	dx, dcq, dco := make([]float64, rows*d), make([]float64, d), make([]float64, heads*dh)
	a.Backward(&ar, c, proj, dx, dcq, dco)
	ts := append(nntest.ParamTargets(a.Params()),
		nntest.Target{Name: "x", X: x, Grad: dx}, nntest.Target{Name: "cqkv", X: cq, Grad: dcq}, nntest.Target{Name: "cout", X: co, Grad: dco})
	nntest.Check(t, loss, ts, 40, fdH, fdRTol, fdATol)

	// The ordinary path (memory = x, gradient stopped) gives the same
	// gradients as the frozen copy.
	grads := map[string][]float64{}
	for _, p := range a.Params() {
		grads[p.Name] = append([]float64(nil), p.G...)
		p.ZeroGrad()
	}
	var ar2 nn.Arena[float64]
	y2 := make([]float64, rows*d)
	c2 := a.Forward(&ar2, x, rows, seg, cq, co, y2)
	dx2, dcq2, dco2 := make([]float64, rows*d), make([]float64, d), make([]float64, heads*dh)
	a.Backward(&ar2, c2, proj, dx2, dcq2, dco2)
	near := func(name string, got, want []float64) {
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("%s[%d] = %v with memory = input, %v with frozen memory", name, i, got[i], want[i])
			}
		}
	}
	near("y", y2, y)
	near("dx", dx2, dx)
	near("dcqkv", dcq2, dcq)
	near("dcout", dco2, dco)
	for _, p := range a.Params() {
		near(p.Name, p.G, grads[p.Name])
	}
}

// TestAttentionGradientFull checks the full derivative (memory gradient
// not stopped) of several segments against finite differences.
func TestAttentionGradientFull(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 4))
	rows, d, heads, dh, seg := 10, 5, 3, 2, 3
	a := attnSetup(r, d, heads, dh)
	a.memoryGrad = true
	x := nntest.Rand(r, rows*d)
	proj := nntest.Rand(r, rows*d)
	loss := func() float64 {
		var ar nn.Arena[float64]
		y := make([]float64, rows*d)
		a.Forward(&ar, x, rows, seg, nil, nil, y)
		return nntest.Dot(y, proj)
	}
	var ar nn.Arena[float64]
	y := make([]float64, rows*d)
	c := a.Forward(&ar, x, rows, seg, nil, nil, y)
	dx := make([]float64, rows*d)
	a.Backward(&ar, c, proj, dx, nil, nil)
	ts := append(nntest.ParamTargets(a.Params()), nntest.Target{Name: "x", X: x, Grad: dx})
	nntest.Check(t, loss, ts, 40, fdH, fdRTol, fdATol)
}

func TestLayerGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 5))
	rows, d, heads, dh, inner, seg := 9, 6, 2, 3, 7, 4
	l := NewLayer[float64]("layer", d, heads, dh, inner, r)
	for _, p := range l.Params() {
		for i := range p.W {
			p.W[i] += 0.2 * (r.Float64() - 0.5)
		}
	}
	l.Attn.memoryGrad = true
	x := nntest.Rand(r, rows*d)
	var mod [][]float64
	for _, n := range l.ModDims() {
		mod = append(mod, randMod(r, n))
	}
	proj := nntest.Rand(r, rows*d)
	loss := func() float64 {
		var ar nn.Arena[float64]
		y := make([]float64, rows*d)
		l.Forward(&ar, x, rows, seg, mod, y)
		return nntest.Dot(y, proj)
	}
	var ar nn.Arena[float64]
	y := make([]float64, rows*d)
	c := l.Forward(&ar, x, rows, seg, mod, y)
	dx := make([]float64, rows*d)
	dmod := make([][]float64, len(mod))
	for i := range mod {
		dmod[i] = make([]float64, len(mod[i]))
	}
	l.Backward(&ar, c, proj, dx, dmod)
	ts := append(nntest.ParamTargets(l.Params()), nntest.Target{Name: "x", X: x, Grad: dx})
	for i := range mod {
		ts = append(ts, nntest.Target{Name: "mod", X: mod[i], Grad: dmod[i]})
	}
	nntest.Check(t, loss, ts, 25, fdH, fdRTol, fdATol)
}

func TestConditionerGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 6))
	in, hidden := 7, 5
	dims := []int{3, 4}
	c := NewConditioner[float64]("cond", in, hidden, dims, r)
	for _, p := range c.Params() {
		for i := range p.W {
			p.W[i] += 0.3 * (r.Float64() - 0.5)
		}
	}
	g := nntest.Rand(r, in)
	proj := nntest.Rand(r, 7)
	projZ := nntest.Rand(r, hidden)
	loss := func() float64 {
		var ar nn.Arena[float64]
		mods, cc := c.Forward(&ar, g)
		return nntest.Dot(append(append([]float64(nil), mods[0]...), mods[1]...), proj) + nntest.Dot(cc.Hidden(), projZ)
	}
	var ar nn.Arena[float64]
	_, cc := c.Forward(&ar, g)
	dg := make([]float64, in)
	c.Backward(&ar, cc, proj, projZ, dg)
	ts := append(nntest.ParamTargets(c.Params()), nntest.Target{Name: "g", X: g, Grad: dg})
	nntest.Check(t, loss, ts, 30, fdH, fdRTol, fdATol)
}

// TestFloat32MatchesFloat64 runs the same layer in both precisions.
func TestFloat32MatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 7))
	rows, d, heads, dh, inner, seg := 130, 16, 4, 4, 32, 32
	l64 := NewLayer[float64]("layer", d, heads, dh, inner, r)
	l32 := NewLayer[float32]("layer", d, heads, dh, inner, rand.New(rand.NewPCG(0, 0)))
	if err := nn.CopyValues(l32.Params(), l64.Params()); err != nil {
		t.Fatal(err)
	}
	x := nntest.Rand(r, rows*d)
	var ar64 nn.Arena[float64]
	var ar32 nn.Arena[float32]
	y64 := make([]float64, rows*d)
	y32 := make([]float32, rows*d)
	c64 := l64.Forward(&ar64, x, rows, seg, nil, y64)
	c32 := l32.Forward(&ar32, nn.Convert[float32](x), rows, seg, nil, y32)
	for i := range y64 {
		if math.Abs(float64(y32[i])-y64[i]) > 1e-4 {
			t.Fatalf("y[%d]: float32 %v, float64 %v", i, y32[i], y64[i])
		}
	}
	proj := nntest.Rand(r, rows*d)
	dx64 := make([]float64, rows*d)
	dx32 := make([]float32, rows*d)
	l64.Backward(&ar64, c64, proj, dx64, nil)
	l32.Backward(&ar32, c32, nn.Convert[float32](proj), dx32, nil)
	for i := range dx64 {
		if math.Abs(float64(dx32[i])-dx64[i]) > 1e-3*(1+math.Abs(dx64[i])) {
			t.Fatalf("dx[%d]: float32 %v, float64 %v", i, dx32[i], dx64[i])
		}
	}
	p32, p64 := l32.Params(), l64.Params()
	for k := range p64 {
		for i := range p64[k].G {
			if math.Abs(float64(p32[k].G[i])-p64[k].G[i]) > 2e-3*(1+math.Abs(p64[k].G[i])) {
				t.Fatalf("%s grad[%d]: float32 %v, float64 %v", p64[k].Name, i, p32[k].G[i], p64[k].G[i])
			}
		}
	}
}
