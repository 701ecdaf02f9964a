package regal

import (
	"math"
	"math/rand/v2"

	"github.com/placer/placer/methods/brkga"
	"github.com/placer/placer/nn"
)

// Action is one draw of the bandit's arms for a graph: per node and gene
// group, the mean bucket M and the variance bucket V (node-major: node v's
// group j at v*Groups+j).
type Action struct {
	M, V []uint8
}

// MeanVar is the mean and variance of buckets (m, v) (REGAL A.6):
// mu = (m+1)/(k_m+1), sigma2 = mu(1-mu)(v+1)/(k_v+1).
func MeanVar(cfg Config, m, v int) (mu, sigma2 float64) {
	cfg = cfg.withDefaults()
	mu = float64(m+1) / float64(cfg.MeanBuckets+1)
	sigma2 = mu * (1 - mu) * float64(v+1) / float64(cfg.VarBuckets+1)
	return mu, sigma2
}

// BucketBeta is the Beta distribution of buckets (m, v).
func BucketBeta(cfg Config, m, v int) brkga.Beta {
	mu, s2 := MeanVar(cfg, m, v)
	b, err := brkga.BetaFromMeanVar(mu, s2)
	if err != nil { // unreachable: 0 < mu < 1 and 0 < s2 < mu(1-mu)
		panic(err)
	}
	return b
}

// softmax writes the probabilities of logits z into p and returns
// log(sum exp z) (computed from the maximum, in float64).
func softmax[T nn.Float](z []T, p []float64) float64 {
	mx := math.Inf(-1)
	for _, v := range z {
		mx = math.Max(mx, float64(v))
	}
	s := 0.0
	for i, v := range z {
		p[i] = math.Exp(float64(v) - mx)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
	return mx + math.Log(s)
}

// draw samples an index from probabilities p.
func draw(p []float64, rng *rand.Rand) int {
	u := rng.Float64()
	for i, q := range p {
		u -= q
		if u < 0 {
			return i
		}
	}
	return len(p) - 1
}

// Sample draws an action from the logits (N x Outputs) with rng; greedy
// takes each categorical's most likely bucket instead (ties: the lowest).
func Sample[T nn.Float](cfg Config, logits []T, N int, rng *rand.Rand, greedy bool) Action {
	cfg = cfg.withDefaults()
	G, C, km := cfg.Groups(), cfg.Choices(), cfg.MeanBuckets
	a := Action{M: make([]uint8, N*G), V: make([]uint8, N*G)}
	p := make([]float64, max(km, cfg.VarBuckets))
	pick := func(z []T) uint8 {
		if greedy {
			best := 0
			for i := range z {
				if z[i] > z[best] {
					best = i
				}
			}
			return uint8(best)
		}
		softmax(z, p[:len(z)])
		return uint8(draw(p[:len(z)], rng))
	}
	for v := range N {
		for g := range G {
			z := logits[(v*G+g)*C : (v*G+g+1)*C]
			a.M[v*G+g] = pick(z[:km])
			a.V[v*G+g] = pick(z[km:])
		}
	}
	return a
}

// Grad writes into dlogits the gradient of the REINFORCE loss
//
//	L = -(adv * sum log p(a) + entropy * sum H) / (N * Groups)
//
// over every categorical (mean and variance of each node's gene groups),
// and returns the mean log-probability and the mean entropy per gene
// group (each the sum of its two categoricals'). The loss is normalized
// per gene group so that the step size does not depend on the graph's
// size.
func Grad[T nn.Float](cfg Config, logits []T, N int, a Action, adv, entropy float64, dlogits []T) (logp, ent float64) {
	cfg = cfg.withDefaults()
	G, C, km := cfg.Groups(), cfg.Choices(), cfg.MeanBuckets
	norm := 1 / float64(N*G)
	p := make([]float64, max(km, cfg.VarBuckets))
	one := func(z, dz []T, act int) {
		q := p[:len(z)]
		lse := softmax(z, q)
		h := 0.0
		for i, pi := range q {
			if pi > 0 {
				h -= pi * (float64(z[i]) - lse)
			}
		}
		logp += float64(z[act]) - lse
		ent += h
		for i, pi := range q {
			lp := float64(z[i]) - lse
			d := adv * pi // d(-adv log p_a)/dz_i = -adv(1[i=a] - p_i)
			if i == act {
				d -= adv
			}
			d += entropy * pi * (lp + h) // d(-entropy H)/dz_i
			dz[i] = T(d * norm)
		}
	}
	for v := range N {
		for g := range G {
			o := (v*G + g) * C
			one(logits[o:o+km], dlogits[o:o+km], int(a.M[v*G+g]))
			one(logits[o+km:o+C], dlogits[o+km:o+C], int(a.V[v*G+g]))
		}
	}
	return logp * norm, ent * norm
}

// Betas lays out an action as BRKGA's per-gene mutant distributions for
// layout l (brkga.NewLayout of the problem): device j's affinity of op o
// is node unitOf[o]'s group j mod Devices, its priority the node's last
// group; transfer and fusion priorities stay uniform (REGAL A.6 fixes
// the tensor genes to Beta(1, 1)).
func Betas(cfg Config, a Action, unitOf []int32, l brkga.Layout) []brkga.Beta {
	cfg = cfg.withDefaults()
	G := cfg.Groups()
	out := make([]brkga.Beta, l.Len())
	for i := range out {
		out[i] = brkga.Uniform
	}
	for o := range l.Ops {
		v := int(unitOf[o])
		if l.Placement {
			for d := range l.Devices {
				k := v*G + d%cfg.Devices
				out[l.Affinity(o, d)] = BucketBeta(cfg, int(a.M[k]), int(a.V[k]))
			}
		}
		if l.Scheduling {
			k := v*G + G - 1
			out[l.Priority(o)] = BucketBeta(cfg, int(a.M[k]), int(a.V[k]))
		}
	}
	return out
}
