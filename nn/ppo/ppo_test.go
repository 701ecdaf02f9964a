package ppo

import (
	"math"
	"testing"

	"github.com/placer/placer/nn"
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

// recorder is a one-weight model that records how Update drives it: each
// loss adds 1 to the weight's gradient and reports KL.
type recorder struct {
	w        *nn.Param[float32]
	kl       float64
	forwards int
	released int
	batches  []Batch
}

func (r *recorder) Params() []*nn.Param[float32] { return []*nn.Param[float32]{r.w} }

func (r *recorder) Forward() (Pass, error) { r.forwards++; return recPass{r}, nil }

type recPass struct{ r *recorder }

func (p recPass) Loss(b Batch) (Loss, error) {
	p.r.batches = append(p.r.batches, b)
	p.r.w.G[0] += 1
	return Loss{ApproxKL: p.r.kl}, nil
}

func (p recPass) Release() { p.r.released++ }

func TestUpdateDrivesModel(t *testing.T) {
	rewards := []float64{1, 2, 3, 4}
	ro := Rollout{OldLogProbs: []float64{-1, -1, -1, -1}, Rewards: rewards, Baseline: math.NaN()}
	adv := Advantages(rewards, math.NaN())
	cases := []struct {
		name     string
		s        Settings
		kl       float64
		epochs   int
		forwards int // the first pass serves the first minibatch
		lohi     [][2]int
	}{
		{"two epochs of two minibatches", Settings{Epochs: 2, Minibatches: 2, TargetKL: -1, LearningRate: 0.1}, 0, 2, 3, [][2]int{{0, 2}, {2, 4}, {0, 2}, {2, 4}}},
		{"KL stops after the first epoch", Settings{Epochs: 3, Minibatches: 2, TargetKL: 0.01, LearningRate: 0.1}, 0.5, 1, 1, [][2]int{{0, 2}, {2, 4}}},
		{"more minibatches than samples", Settings{Epochs: 1, Minibatches: 9, TargetKL: -1, LearningRate: 0.1}, 0, 1, 3, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{w: nn.NewParam[float32]("w", 1, 1), kl: c.kl}
			st, err := Update(r, &nn.Adam{}, ro, recPass{r}, c.s)
			if err != nil {
				t.Fatal(err)
			}
			if st.Epochs != c.epochs || r.forwards != c.forwards || r.released != len(c.lohi) || len(r.batches) != len(c.lohi) {
				t.Fatalf("epochs %d, forwards %d, released %d, batches %d; want %d, %d, %d, %d",
					st.Epochs, r.forwards, r.released, len(r.batches), c.epochs, c.forwards, len(c.lohi), len(c.lohi))
			}
			for i, b := range r.batches {
				lo, hi := c.lohi[i][0], c.lohi[i][1]
				if b.Lo != lo || b.Hi != hi || len(b.Advantages) != hi-lo || b.Advantages[0] != adv[lo] || b.Returns[hi-lo-1] != rewards[hi-1] {
					t.Errorf("batch %d = %+v, want samples %d to %d", i, b, lo, hi)
				}
				if b.ClipEps != 0.2 || b.ValueCoef != 0.5 || b.EntropyCoef != 0.01 {
					t.Errorf("batch %d coefficients %v %v %v, want the defaults 0.2 0.5 0.01", i, b.ClipEps, b.ValueCoef, b.EntropyCoef)
				}
			}
			// A constant gradient of 1 makes every Adam step the learning
			// rate (bias-corrected moments 1 and 1).
			if want := -0.1 * float64(len(c.lohi)); math.Abs(float64(r.w.W[0])-want) > 1e-5 {
				t.Errorf("weight %v after %d steps, want %v", r.w.W[0], len(c.lohi), want)
			}
		})
	}
	if _, err := Update(&recorder{w: nn.NewParam[float32]("w", 1, 1)}, &nn.Adam{}, Rollout{OldLogProbs: []float64{0}, Rewards: []float64{1, 2}}, nil, Settings{}); err == nil {
		t.Error("a rollout of 2 rewards and 1 log-probability was taken")
	}
}
