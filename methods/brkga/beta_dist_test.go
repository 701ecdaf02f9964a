package brkga

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// betaCases span REGAL's quantized buckets (k = 5: alpha down to 1/30)
// and ordinary shapes.
var betaCases = []Beta{{1, 1}, {2, 8}, {0.5, 0.5}, {0.3, 3}, {20, 5}, {1.0 / 30, 1.0 / 6}, {1.0 / 6, 1.0 / 30}, {5, 5}, {0.9, 1.7}}

// TestBetaMomentsManySeeds checks, for every case and 20 seeds, the
// sample mean and variance of 5,000 draws against gonum's distuv.Beta
// formulas (mean a/(a+b), variance ab/((a+b)^2(a+b+1))), within 5
// standard errors of each estimate.
func TestBetaMomentsManySeeds(t *testing.T) {
	const n, seeds = 5000, 20
	for _, b := range betaCases {
		ref := distuv.Beta{Alpha: b.Alpha, Beta: b.Beta}
		mu, v := ref.Mean(), ref.Variance()
		// Standard error of the mean: sqrt(v/n); of the variance:
		// sqrt((m4 - v^2)/n) with the fourth central moment m4 from the
		// excess kurtosis.
		m4 := (ref.ExKurtosis() + 3) * v * v
		seMean, seVar := math.Sqrt(v/n), math.Sqrt((m4-v*v)/n)
		for s := uint64(0); s < seeds; s++ {
			rng := rand.New(rand.NewPCG(s, 99))
			sum, sum2 := 0.0, 0.0
			for range n {
				x := b.sample(rng)
				if !(x >= 0 && x <= 1) {
					t.Fatalf("Beta%v seed %d drew %v", b, s, x)
				}
				sum += x
				sum2 += x * x
			}
			m := sum / n
			vv := sum2/n - m*m
			if math.Abs(m-mu) > 5*seMean || math.Abs(vv-v) > 5*seVar+1e-12 {
				t.Errorf("Beta(%g, %g) seed %d: mean %.5f var %.5f, want %.5f %.5f (se %.5f %.5f)", b.Alpha, b.Beta, s, m, vv, mu, v, seMean, seVar)
			}
		}
	}
}

// TestBetaKolmogorovSmirnov compares the empirical distribution of 20,000
// draws with gonum's Beta CDF: the KS statistic must stay below the 0.1%
// critical value 1.95/sqrt(n). Draws that round to exactly 1 (Beta(1/6,
// 1/30) puts about a quarter of its mass within 1e-16 of 1, where float64
// has no numbers) are left out of the comparison points; the empirical
// CDF just below them is still compared.
func TestBetaKolmogorovSmirnov(t *testing.T) {
	const n = 20000
	for i, b := range betaCases {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		xs := make([]float64, n)
		for j := range xs {
			xs[j] = b.sample(rng)
		}
		slices.Sort(xs)
		ref := distuv.Beta{Alpha: b.Alpha, Beta: b.Beta}
		d := 0.0
		for j, x := range xs {
			if x == 1 {
				break
			}
			c := ref.CDF(x)
			d = math.Max(d, math.Max(math.Abs(c-float64(j)/n), math.Abs(float64(j+1)/n-c)))
		}
		if crit := 1.95 / math.Sqrt(n); d > crit {
			t.Errorf("Beta(%g, %g): KS statistic %.4f > %.4f", b.Alpha, b.Beta, d, crit)
		}
	}
}

// TestBetaSameSeed: the same seed gives the same draws.
func TestBetaSameSeed(t *testing.T) {
	for _, b := range betaCases {
		r1, r2 := rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(5, 6))
		for range 1000 {
			if x, y := b.sample(r1), b.sample(r2); x != y {
				t.Fatalf("Beta%v: %v then %v from the same seed", b, x, y)
			}
		}
	}
}

// TestBetaFromMeanVar checks the REGAL A.6 parameterization by hand and
// by gonum's moments.
func TestBetaFromMeanVar(t *testing.T) {
	b, err := BetaFromMeanVar(0.5, 1.0/12)
	if err != nil || math.Abs(b.Alpha-1) > 1e-12 || math.Abs(b.Beta-1) > 1e-12 {
		t.Fatalf("mean 1/2 variance 1/12: %+v %v, want Beta(1, 1)", b, err)
	}
	for _, c := range []struct{ mu, v float64 }{{0.2, 0.01}, {0.7, 0.1}, {0.9, 0.08}, {0.5, 0.2}} {
		b, err := BetaFromMeanVar(c.mu, c.v)
		if err != nil {
			t.Fatal(err)
		}
		ref := distuv.Beta{Alpha: b.Alpha, Beta: b.Beta}
		if math.Abs(ref.Mean()-c.mu) > 1e-12 || math.Abs(ref.Variance()-c.v) > 1e-12 {
			t.Errorf("mean %g var %g: Beta(%g, %g) has %g %g", c.mu, c.v, b.Alpha, b.Beta, ref.Mean(), ref.Variance())
		}
	}
	for _, c := range []struct{ mu, v float64 }{{0, 0.1}, {1, 0.1}, {0.5, 0.25}, {0.5, 0}, {math.NaN(), 0.1}} {
		if _, err := BetaFromMeanVar(c.mu, c.v); err == nil {
			t.Errorf("mean %g var %g accepted", c.mu, c.v)
		}
	}
}

// BenchmarkBetaSample compares brkga's sampler with gonum's
// distuv.Beta.Rand on one of REGAL's buckets (alpha 1/30, beta 1/6) and
// on Beta(2, 8).
func BenchmarkBetaSample(b *testing.B) {
	for _, c := range []Beta{{1.0 / 30, 1.0 / 6}, {2, 8}} {
		b.Run("brkga/"+fmtBeta(c), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			s := 0.0
			for range b.N {
				s += c.sample(rng)
			}
			_ = s
		})
		b.Run("gonum/"+fmtBeta(c), func(b *testing.B) {
			d := distuv.Beta{Alpha: c.Alpha, Beta: c.Beta, Src: rand.NewPCG(1, 2)}
			b.ReportAllocs()
			s := 0.0
			for range b.N {
				s += d.Rand()
			}
			_ = s
		})
	}
}

func fmtBeta(c Beta) string {
	if c.Alpha < 1 {
		return "small"
	}
	return "2,8"
}
