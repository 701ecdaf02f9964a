package nn

import "math"

// Adam is the Adam optimizer (Kingma & Ba 2015) over a network's
// parameters, with bias correction.
type Adam struct {
	Beta1, Beta2, Eps float64 // 0 = 0.9, 0.999, 1e-8
	m, v              [][]float32
	t                 int
}

// Step applies one update with step size lr from the parameters'
// gradients, then zeroes the gradients.
func (a *Adam) Step(params []*Param[float32], lr float64) {
	b1, b2, eps := a.Beta1, a.Beta2, a.Eps
	if b1 == 0 {
		b1 = 0.9
	}
	if b2 == 0 {
		b2 = 0.999
	}
	if eps == 0 {
		eps = 1e-8
	}
	if a.m == nil {
		a.m = make([][]float32, len(params))
		a.v = make([][]float32, len(params))
		for i, p := range params {
			a.m[i] = make([]float32, len(p.W))
			a.v[i] = make([]float32, len(p.W))
		}
	}
	a.t++
	c1 := 1 - math.Pow(b1, float64(a.t))
	c2 := 1 - math.Pow(b2, float64(a.t))
	step := lr * math.Sqrt(c2) / c1
	for i, p := range params {
		m, v := a.m[i], a.v[i]
		for j, g := range p.G {
			gf := float64(g)
			mj := b1*float64(m[j]) + (1-b1)*gf
			vj := b2*float64(v[j]) + (1-b2)*gf*gf
			m[j], v[j] = float32(mj), float32(vj)
			p.W[j] -= float32(step * mj / (math.Sqrt(vj) + eps))
			p.G[j] = 0
		}
	}
}

// State returns Adam's moments and step count (for checkpoints).
func (a *Adam) State() (m, v [][]float32, t int) { return a.m, a.v, a.t }

// SetState restores moments saved by State.
func (a *Adam) SetState(m, v [][]float32, t int) { a.m, a.v, a.t = m, v, t }

// ClipGradNorm scales the gradients so that their global L2 norm is at
// most max, and returns the norm before clipping.
func ClipGradNorm(params []*Param[float32], max float64) float64 {
	sum := 0.0
	for _, p := range params {
		for _, g := range p.G {
			sum += float64(g) * float64(g)
		}
	}
	norm := math.Sqrt(sum)
	if max > 0 && norm > max {
		s := float32(max / norm)
		for _, p := range params {
			for j := range p.G {
				p.G[j] *= s
			}
		}
	}
	return norm
}
