package nn

import (
	"math"
	"testing"
)

func TestAdamFirstStep(t *testing.T) {
	// m = 0.1*0.5 = 0.05, v = 0.001*0.25; bias-corrected m = 0.5, v = 0.25:
	// step = lr * 0.5 / sqrt(0.25) = lr.
	p := &Param[float32]{W: []float32{1, 2}, G: []float32{0.5, -2}}
	var a Adam
	a.Step([]*Param[float32]{p}, 0.1)
	if math.Abs(float64(p.W[0])-0.9) > 1e-6 || math.Abs(float64(p.W[1])-2.1) > 1e-6 {
		t.Fatalf("after one step W = %v, want [0.9 2.1]", p.W)
	}
	if p.G[0] != 0 || p.G[1] != 0 {
		t.Fatal("gradients not zeroed")
	}
}

func TestAdamMinimizesQuadratic(t *testing.T) {
	p := &Param[float32]{W: []float32{-4}, G: []float32{0}}
	var a Adam
	for i := 0; i < 2000; i++ {
		p.G[0] = 2 * (p.W[0] - 3) // d/dw (w-3)^2
		a.Step([]*Param[float32]{p}, 0.05)
	}
	if math.Abs(float64(p.W[0])-3) > 1e-2 {
		t.Fatalf("w = %v, want 3", p.W[0])
	}
}

func TestClipGradNorm(t *testing.T) {
	p := &Param[float32]{G: []float32{3, 4}}
	if n := ClipGradNorm([]*Param[float32]{p}, 1); n != 5 {
		t.Fatalf("norm = %v, want 5", n)
	}
	if math.Abs(float64(p.G[0])-0.6) > 1e-6 || math.Abs(float64(p.G[1])-0.8) > 1e-6 {
		t.Fatalf("clipped = %v, want [0.6 0.8]", p.G)
	}
	ClipGradNorm([]*Param[float32]{p}, 10)
	if math.Abs(float64(p.G[0])-0.6) > 1e-6 {
		t.Fatal("a norm under the limit was changed")
	}
}
