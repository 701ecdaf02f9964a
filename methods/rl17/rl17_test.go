package rl17

import (
	"context"
	"testing"

	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// TestRL17FindsBalancedSplit: ten independent chains of 9, 8, 7, 6, 5, 4,
// 3, 3, 2 and 1 ms on two GPUs (nothing moves between them): the step is
// the busier GPU's sum, and the optimum splits the 48 ms evenly, 24 ms
// each (9+8+7 = 24). Of the 1,024 placements of the ten groups, 1 in 18
// or so is optimal; the controller must find one and learn: its mean
// reward over the last ten steps beats the first ten's.
func TestRL17FindsBalancedSplit(t *testing.T) {
	g := methodstest.Chains(t, []float64{9, 8, 7, 6, 5, 4, 3, 3, 2, 1})
	p, err := methodstest.NewProblem(g, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	p.Tasks = optimize.Tasks{Placement: true}
	const optimum = 24e-3
	r := &RL17{Config: Config{Hidden: 32, TypeDim: 8, DeviceDim: 8}, Samples: 8, LearningRate: 3e-3}
	res, err := r.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Steps: 60}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	methodstest.Check(t, p, res, optimize.Budget{Steps: 60})
	if st := res.Learning.Settings.(Settings); st.Groups != 10 {
		t.Fatalf("%d groups, want one per chain", st.Groups)
	}
	curve := res.Learning.Curve
	first, last := methodstest.MeanReward(curve[:10]), methodstest.MeanReward(curve[len(curve)-10:])
	t.Logf("best %v after %d steps; mean reward %.4f -> %.4f; entropy %.3f -> %.3f", res.Eval.StepTime, len(curve), first, last, curve[0].Entropy, curve[len(curve)-1].Entropy)
	if !methodstest.Close(res.Eval.StepTime, optimum) {
		t.Errorf("best step %v, want the even split's %v", res.Eval.StepTime, optimum)
	}
	if last < first+0.02 {
		t.Errorf("mean reward %.4f over the first ten steps, %.4f over the last: no learning", first, last)
	}
}

// TestRL17FailingSignal: three parameter-holding ops of 0.4 of a GPU's
// memory each, each feeding two sinks (so that each is a group of its
// own), on two GPUs: a quarter of the placements put all three on one GPU
// and run out of memory. The invalid samples get the failing signal, and
// the result fits.
func TestRL17FailingSignal(t *testing.T) {
	const capacity = int64(1) << 30
	p, err := methodstest.NewProblem(methodstest.ThreeParams(t, capacity), 2, capacity)
	if err != nil {
		t.Fatal(err)
	}
	r := &RL17{Config: Config{Hidden: 16, TypeDim: 4, DeviceDim: 4}, Samples: 8}
	res, err := r.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Steps: 10}, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Learning.Settings.(Settings); st.Groups != 9 {
		t.Fatalf("%d groups, want 9", st.Groups)
	}
	methodstest.CheckFailingSignal(t, res, capacity, DefaultFailReward)
}

// TestRL17SameSeed: the same seed gives the same decision and learning
// curve; another seed another curve.
func TestRL17SameSeed(t *testing.T) {
	methodstest.CheckSameSeed(t, func() optimize.Optimizer {
		return &RL17{Config: Config{Hidden: 16, TypeDim: 4, DeviceDim: 4}, Samples: 4}
	}, 16)
}
