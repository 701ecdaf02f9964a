package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLinearGradient checks the modulated dense layer against central
// finite differences (the check helpers live in nntest, which imports
// this package, so this one is written out).
func TestLinearGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	rows, in, out := 7, 5, 4
	l := NewLinear[float64]("lin", in, out, true, r)
	for i := range l.B.W {
		l.B.W[i] = r.Float64() - 0.5
	}
	x := randSlice(r, rows*in)
	c := randSlice(r, in)
	proj := randSlice(r, rows*out)
	loss := func() float64 {
		var ar Arena[float64]
		y := make([]float64, rows*out)
		l.Forward(x, rows, l.Modulated(&ar, c), y, false)
		s := 0.0
		for i := range y {
			s += y[i] * proj[i]
		}
		return s
	}
	var ar Arena[float64]
	dx, dc := make([]float64, rows*in), make([]float64, in)
	l.Backward(&ar, x, rows, c, l.Modulated(&ar, c), proj, dx, dc)
	for _, tg := range []struct {
		name    string
		v, grad []float64
	}{{"x", x, dx}, {"c", c, dc}, {"w", l.W.W, l.W.G}, {"b", l.B.W, l.B.G}} {
		for i := range tg.v {
			old := tg.v[i]
			tg.v[i] = old + 1e-6
			fp := loss()
			tg.v[i] = old - 1e-6
			fm := loss()
			tg.v[i] = old
			num := (fp - fm) / 2e-6
			if math.Abs(num-tg.grad[i]) > 1e-7*(1+math.Abs(num)) {
				t.Fatalf("%s[%d]: analytic %v, numeric %v", tg.name, i, tg.grad[i], num)
			}
		}
	}
}

// TestPortableFallback runs the float32 kernels without assembly (as on a
// CPU without AVX2/FMA or another architecture) and compares.
func TestPortableFallback(t *testing.T) {
	if !haveAsm {
		t.Skip("no assembly kernels to compare with")
	}
	r := rand.New(rand.NewPCG(5, 5))
	m, n, k := 37, 45, 29
	a := Convert[float32](randSlice(r, m*k))
	b := Convert[float32](randSlice(r, k*n))
	x := Convert[float32](randSlice(r, 133))
	cAsm := make([]float32, m*n)
	Gemm(false, false, m, n, k, a, k, b, n, 0, cAsm, n)
	xAsm := append([]float32(nil), x...)
	lseAsm := SoftmaxRow(xAsm, 0.7)
	haveAsm = false
	defer func() { haveAsm = true }()
	cGo := make([]float32, m*n)
	Gemm(false, false, m, n, k, a, k, b, n, 0, cGo, n)
	xGo := append([]float32(nil), x...)
	lseGo := SoftmaxRow(xGo, 0.7)
	for i := range cGo {
		if math.Abs(float64(cGo[i]-cAsm[i])) > 1e-5 {
			t.Fatalf("gemm[%d]: %v without assembly, %v with", i, cGo[i], cAsm[i])
		}
	}
	if math.Abs(float64(lseGo-lseAsm)) > 1e-5 {
		t.Fatalf("lse %v vs %v", lseGo, lseAsm)
	}
	for i := range xGo {
		if math.Abs(float64(xGo[i]-xAsm[i])) > 1e-6 {
			t.Fatalf("softmax[%d]: %v vs %v", i, xGo[i], xAsm[i])
		}
	}
}
