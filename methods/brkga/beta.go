package brkga

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Beta is the Beta(Alpha, Beta) distribution a mutant's gene is drawn
// from (REGAL A.6). Beta{1, 1} is the uniform distribution.
type Beta struct {
	Alpha, Beta float64
}

// Uniform is Beta(1, 1).
var Uniform = Beta{1, 1}

func (b Beta) valid() bool {
	return b.Alpha > 0 && b.Beta > 0 && !math.IsInf(b.Alpha, 0) && !math.IsInf(b.Beta, 0)
}

// BetaFromMeanVar returns the Beta distribution with mean mu in (0, 1)
// and variance v in (0, mu(1-mu)), the parameterisation REGAL's policy
// predicts (A.6): beta = mu(1-mu)^2/v - 1 + mu, alpha = beta mu/(1-mu).
func BetaFromMeanVar(mu, v float64) (Beta, error) {
	if !(mu > 0 && mu < 1) || !(v > 0 && v < mu*(1-mu)) {
		return Beta{}, fmt.Errorf("brkga: no Beta distribution has mean %g and variance %g", mu, v)
	}
	b := mu*(1-mu)*(1-mu)/v - 1 + mu
	return Beta{Alpha: b * mu / (1 - mu), Beta: b}, nil
}

// sample draws from b.
func (b Beta) sample(rng *rand.Rand) float64 {
	if b.Alpha == 1 && b.Beta == 1 {
		return rng.Float64()
	}
	x := gamma(rng, b.Alpha)
	y := gamma(rng, b.Beta)
	if x+y == 0 {
		return 0.5
	}
	return x / (x + y)
}

// gamma draws from Gamma(shape, 1) (Marsaglia & Tsang 2000; shapes below
// one through Gamma(shape+1) x U^(1/shape)).
func gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := 1 - rng.Float64() // (0, 1]
		return gamma(rng, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		var x, v float64
		for {
			x = rng.NormFloat64()
			v = 1 + c*x
			if v > 0 {
				break
			}
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x {
			return d * v
		}
		if math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// quantize maps a key in [0, 1] to the 16-bit value stored in a
// chromosome.
func quantize(x float64) uint16 {
	if !(x > 0) {
		return 0
	}
	if x >= 1 {
		return math.MaxUint16
	}
	return uint16(x*math.MaxUint16 + 0.5)
}
