package brkga

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBetaSampleMoments(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, b := range []Beta{{1, 1}, {2, 8}, {0.5, 0.5}, {0.3, 3}, {20, 5}} {
		const n = 20000
		s, s2 := 0.0, 0.0
		for i := 0; i < n; i++ {
			x := b.sample(rng)
			if x < 0 || x > 1 {
				t.Fatalf("Beta%v drew %g", b, x)
			}
			s += x
			s2 += x * x
		}
		mean := s / n
		v := s2/n - mean*mean
		a, c := b.Alpha, b.Beta
		wantMean := a / (a + c)
		wantVar := a * c / ((a + c) * (a + c) * (a + c + 1))
		if math.Abs(mean-wantMean) > 0.01 || math.Abs(v-wantVar) > 0.01 {
			t.Errorf("Beta%v: mean %.4f var %.4f, want %.4f %.4f", b, mean, v, wantMean, wantVar)
		}
	}
}

func TestQuantize(t *testing.T) {
	for x, want := range map[float64]uint16{-1: 0, 0: 0, 0.5: 32768, 1: 65535, 2: 65535, math.NaN(): 0} {
		if got := quantize(x); got != want {
			t.Errorf("quantize(%g) = %d, want %d", x, got, want)
		}
	}
}
