package seq2seq

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/nntest"
)

// bounded is a Logits for the tests: 2 tanh(z / 1.5).
type bounded struct{}

func (bounded) Apply(z []float64, _, _ int, _ bool, dz []float64) {
	for j, v := range z {
		th := math.Tanh(v / 1.5)
		z[j] = 2 * th
		if dz != nil {
			dz[j] = 2 / 1.5 * (1 - th*th)
		}
	}
}

// variants are the controller's four uses: one sequence for every sample
// (rl17) or one per sample (hdp), with the scores as logits (rl17) or
// shaped ones (hdp).
var variants = []struct {
	name   string
	shared bool
	lg     Logits[float64]
}{
	{"shared", true, nil},
	{"shared-logits", true, bounded{}},
	{"per-sample", false, nil},
	{"per-sample-logits", false, bounded{}},
}

// problem is a small controller in float64 with random parameters, its
// input for k samples of n steps, random placements and weights.
func problem(shared bool) (c *Controller[float64], in Input[float64], devs [][]int, w []float64) {
	const n, k, inDim, devices = 5, 3, 4, 3
	r := rand.New(rand.NewPCG(3, 4))
	c = New[float64]("test", inDim, 5, 2, devices, r)
	c.InitDevices(r)
	for _, p := range c.Params() {
		for i := range p.W {
			p.W[i] += 0.2 * (2*r.Float64() - 1)
		}
	}
	b := k
	if shared {
		b = 1
	}
	in = Input[float64]{X: nntest.Rand(r, n*b*inDim), Steps: n, Shared: shared}
	devs = make([][]int, k)
	w = make([]float64, k)
	for s := range k {
		devs[s] = make([]int, n)
		for t := range devs[s] {
			devs[s][t] = r.IntN(devices)
		}
		w[s] = 2*r.Float64() - 1
	}
	return c, in, devs, w
}

// TestControllerGradient checks Reinforce's gradient (every parameter and
// the encoder's input) against central finite differences of its loss, in
// each variant.
func TestControllerGradient(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			c, in, devs, w := problem(v.shared)
			ps := c.Params()
			dx := make([]float64, len(in.X))
			loss := nntest.KeepGrads(ps, func() float64 {
				var ar nn.Arena[float64]
				return c.Reinforce(&ar, in, devs, w, v.lg, nil)
			})
			ps.ZeroGrad()
			var ar nn.Arena[float64]
			c.Reinforce(&ar, in, devs, w, v.lg, dx)
			targets := append(nntest.ParamTargets(ps), nntest.Target{Name: "x", X: in.X, Grad: dx})
			if n := nntest.Check(t, loss, targets, 25, 1e-5, 1e-5, 1e-8); n < 150 {
				t.Fatalf("only %d entries compared", n)
			}
		})
	}
}

// TestControllerSampleLogProb: the log-probabilities of the placements as
// sampled equal the teacher-forced ones of Reinforce (whose loss with
// w = -1 for one sample, 0 for the others, is that sample's
// log-probability), and probs sees every decision's distribution.
func TestControllerSampleLogProb(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			c, in, _, _ := problem(v.shared)
			const k = 3
			var ar nn.Arena[float64]
			calls := 0
			devs, logp := c.Sample(&ar, rand.New(rand.NewPCG(5, 6)), in, k, v.lg, func(row []float64) {
				calls++
				if s := row[0] + row[1] + row[2]; math.Abs(s-1) > 1e-12 {
					t.Errorf("probabilities %v sum to %v", row, s)
				}
			})
			if calls != k*in.Steps {
				t.Errorf("%d distributions seen, want %d", calls, k*in.Steps)
			}
			for s := range k {
				w := make([]float64, k)
				w[s] = -1
				got := c.Reinforce(&ar, in, devs, w, v.lg, nil)
				if math.Abs(got-logp[s]) > 1e-9*math.Abs(logp[s]) {
					t.Errorf("sample %d: teacher-forced log-probability %v, sampled %v", s, got, logp[s])
				}
			}
			c.Params().ZeroGrad()
		})
	}
}
