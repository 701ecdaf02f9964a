package ppo

import (
	"math"
	"testing"
)

func TestAdvantages(t *testing.T) {
	s := math.Sqrt(2.0 / 3)
	got := Advantages([]float64{1, 2, 3}, math.NaN())
	want := []float64{-1 / s, 0, 1 / s}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("advantages = %v, want %v", got, want)
		}
	}
	got = Advantages([]float64{1, 1}, 0) // no spread: not scaled
	if got[0] != 1 || got[1] != 1 {
		t.Fatalf("advantages = %v, want [1 1]", got)
	}
}
