package nntest

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/placer/placer/nn"
)

// Target is one input of a function whose gradient is checked: its values
// (perturbed in place) and the analytic gradient to compare with.
type Target struct {
	Name string
	X    []float64
	Grad []float64
}

// ParamTargets makes one target per parameter.
func ParamTargets(ps nn.Params[float64]) []Target {
	ts := make([]Target, len(ps))
	for i, p := range ps {
		ts[i] = Target{Name: p.Name, X: p.W, Grad: p.G}
	}
	return ts
}

// Check compares, for up to perTarget entries of each target, the analytic
// gradient with (f(x+h) - f(x-h)) / 2h. An entry passes if the absolute
// error is within atol or the relative error within rtol. It returns the
// number of entries compared.
func Check(t testing.TB, f func() float64, targets []Target, perTarget int, h, rtol, atol float64) int {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 11))
	n := 0
	for _, tg := range targets {
		idx := r.Perm(len(tg.X))
		if len(idx) > perTarget {
			idx = idx[:perTarget]
		}
		for _, i := range idx {
			old := tg.X[i]
			tg.X[i] = old + h
			fp := f()
			tg.X[i] = old - h
			fm := f()
			tg.X[i] = old
			num := (fp - fm) / (2 * h)
			if n%64 == 63 {
				// Arenas of the evaluated passes live outside the Go heap
				// and are returned when collected: collect now and then.
				runtime.GC()
			}
			got := tg.Grad[i]
			diff := math.Abs(num - got)
			if diff > atol && diff > rtol*math.Max(math.Abs(num), math.Abs(got)) {
				t.Errorf("%s[%d]: analytic %.10g, numeric %.10g (|diff| %.3g)", tg.Name, i, got, num, diff)
			}
			n++
		}
	}
	return n
}

// Rand returns n values from U(-1, 1) drawn from r.
func Rand(r *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = r.Float64()*2 - 1
	}
	return s
}

// Dot is the sum of a ⊙ b: the loss used to check a layer with output y
// against a fixed random projection of its output.
func Dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// KeepGrads wraps f, a loss whose evaluation also adds its gradient to the
// parameters' (as a REINFORCE pass does), so that each call leaves ps's
// gradients as they were: the analytic gradient Check compares with
// survives Check's evaluations.
func KeepGrads(ps nn.Params[float64], f func() float64) func() float64 {
	return func() float64 {
		saved := make([][]float64, len(ps))
		for i, p := range ps {
			saved[i] = slices.Clone(p.G)
		}
		l := f()
		for i, p := range ps {
			copy(p.G, saved[i])
		}
		return l
	}
}
