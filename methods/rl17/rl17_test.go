package rl17

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// chains builds independent chains of 3 ops whose op times (ms) are given
// per chain; the paper's heuristic makes each chain one group.
func chains(t *testing.T, ms []float64) *graph.Graph {
	t.Helper()
	b := graph.NewBuilder("partition")
	for c, d := range ms {
		prev := -1
		for i := range 3 {
			v := b.AddOp(graph.Op{Name: fmt.Sprintf("c%d/%d", c, i), Type: "Op", HasTime: true, Time: d / 3 * 1e-3, BytesWritten: 16})
			if prev >= 0 {
				b.AddTensor(prev, 16, v)
			}
			prev = v
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRL17FindsBalancedSplit: ten independent chains of 9, 8, 7, 6, 5, 4,
// 3, 3, 2 and 1 ms on two GPUs (nothing moves between them): the step is
// the busier GPU's sum, and the optimum splits the 48 ms evenly, 24 ms
// each (9+8+7 = 24). Of the 1,024 placements of the ten groups, 1 in 18
// or so is optimal; the controller must find one and learn: its mean
// reward over the last ten steps beats the first ten's.
func TestRL17FindsBalancedSplit(t *testing.T) {
	g := chains(t, []float64{9, 8, 7, 6, 5, 4, 3, 3, 2, 1})
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
	mean := func(pts []optimize.CurvePoint) float64 {
		s := 0.0
		for _, p := range pts {
			s += p.MeanReward / float64(len(pts))
		}
		return s
	}
	first, last := mean(curve[:10]), mean(curve[len(curve)-10:])
	t.Logf("best %v after %d steps; mean reward %.4f -> %.4f; entropy %.3f -> %.3f", res.Eval.StepTime, len(curve), first, last, curve[0].Entropy, curve[len(curve)-1].Entropy)
	if !methodstest.Close(res.Eval.StepTime, optimum) {
		t.Errorf("best step %v, want the even split's %v", res.Eval.StepTime, optimum)
	}
	if last < first+0.02 {
		t.Errorf("mean reward %.4f over the first ten steps, %.4f over the last: no learning", first, last)
	}
}

// TestReward: the reward of hand-made results.
func TestReward(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    evaluate.Result
		want float64
	}{
		{"valid", evaluate.Result{StepTime: 4e-3}, -2},
		{"at-the-reference", evaluate.Result{StepTime: 1e-3}, -1},
		{"out-of-memory", evaluate.Result{StepTime: 1e-3, OOM: true}, -7},
		{"co-location-broken", evaluate.Result{StepTime: 1e-3, ColocationViolations: 1}, -7},
		{"zero-step", evaluate.Result{}, -7},
	} {
		if got := Reward(optimize.StepTime, &tc.r, 1e-3, -7); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRL17FailingSignal: three parameter-holding ops of 0.4 of a GPU's
// memory each, each feeding two sinks (so that each is a group of its
// own), on two GPUs: a quarter of the placements put all three on one GPU
// and run out of memory. The invalid samples get the failing signal, and
// the result fits.
func TestRL17FailingSignal(t *testing.T) {
	const capacity = int64(1) << 30
	b := graph.NewBuilder("params")
	for i := range 3 {
		v := b.AddOp(graph.Op{Name: fmt.Sprint("param", i), Type: "Variable", HasTime: true, Time: 1e-4, ParamBytes: capacity * 2 / 5, BytesWritten: 1 << 10})
		x := b.AddOp(graph.Op{Name: fmt.Sprint("use", i, "a"), Type: "MatMul", HasTime: true, Time: 1e-3, BytesWritten: 1 << 10})
		y := b.AddOp(graph.Op{Name: fmt.Sprint("use", i, "b"), Type: "MatMul", HasTime: true, Time: 1e-3, BytesWritten: 1 << 10})
		b.AddTensor(v, 1<<10, x, y)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := methodstest.NewProblem(g, 2, capacity)
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
	if !res.Eval.Valid() {
		t.Errorf("out of memory: peaks %v of %d", res.Eval.PeakMemory, capacity)
	}
	invalid := 0
	for _, pt := range res.Learning.Curve {
		// Valid rewards are negative, so the mean is at most the
		// invalid share times the failing signal.
		if pt.Valid < 1 {
			invalid++
			if pt.MeanReward > (1-pt.Valid)*DefaultFailReward {
				t.Errorf("step %d: %.3f valid, mean reward %.3f above %.3f: no failing signal", pt.Step, pt.Valid, pt.MeanReward, (1-pt.Valid)*DefaultFailReward)
			}
		}
	}
	if invalid == 0 {
		t.Error("no invalid sample in 80: the failing signal was not exercised")
	}
}

// TestRL17SameSeed: the same seed gives the same decision and learning
// curve; another seed another curve.
func TestRL17SameSeed(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 120, Width: 8, Seed: 1})
	p, err := methodstest.NewProblem(g, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	run := func(seed uint64) *optimize.Result {
		r := &RL17{Config: Config{Hidden: 16, TypeDim: 4, DeviceDim: 4}, Samples: 4}
		res, err := r.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Steps: 4}, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b, c := run(5), run(5), run(6)
	if !slices.Equal(a.Decision.Device, b.Decision.Device) || a.Eval.StepTime != b.Eval.StepTime {
		t.Errorf("same seed: steps %v and %v", a.Eval.StepTime, b.Eval.StepTime)
	}
	if curve(a) != curve(b) {
		t.Error("same seed, different learning curves")
	}
	if curve(a) == curve(c) {
		t.Error("seeds 5 and 6 gave the same learning curve")
	}
	if a.Stats.Evaluations != 16 || a.Stats.Steps != 4 || len(a.Learning.Curve) != 4 {
		t.Errorf("%d evaluations, %d steps, %d points; want 16, 4, 4", a.Stats.Evaluations, a.Stats.Steps, len(a.Learning.Curve))
	}
}

// curve prints a result's learning curve without its wall times.
func curve(r *optimize.Result) string {
	pts := slices.Clone(r.Learning.Curve)
	for i := range pts {
		pts[i].Elapsed = 0
	}
	return fmt.Sprint(pts)
}
