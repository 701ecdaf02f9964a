package methodstest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/optimize"
)

// Chains builds independent chains of 3 ops whose op times (ms) are given
// per chain, 16 bytes between neighbours: nothing needs to move between
// devices, so the step is the busiest device's sum (the learned placers'
// known optimum; rl17's co-location heuristic makes each chain one group).
func Chains(t testing.TB, ms []float64) *graph.Graph {
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

// ThreeParams builds three parameter-holding ops of 0.4 of capacity each,
// each feeding two MatMuls (so that rl17 makes each its own group): on two
// devices of capacity bytes, the placements that put all three on one
// device run out of memory.
func ThreeParams(t testing.TB, capacity int64) *graph.Graph {
	t.Helper()
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
	return g
}

// CheckFailingSignal checks a learned placer's result on ThreeParams: the
// result fits in capacity, some step sampled an invalid placement, and
// every such step's mean reward is at most its invalid share times fail,
// the failing signal (valid rewards are negative).
func CheckFailingSignal(t testing.TB, res *optimize.Result, capacity int64, fail float64) {
	t.Helper()
	if !res.Eval.Valid() {
		t.Errorf("out of memory: peaks %v of %d", res.Eval.PeakMemory, capacity)
	}
	invalid := 0
	for _, pt := range res.Learning.Curve {
		if pt.Valid < 1 {
			invalid++
			if pt.MeanReward > (1-pt.Valid)*fail {
				t.Errorf("step %d: %.3f valid, mean reward %.3f above %.3f: no failing signal", pt.Step, pt.Valid, pt.MeanReward, (1-pt.Valid)*fail)
			}
		}
	}
	if invalid == 0 {
		t.Error("no invalid sample in 80: the failing signal was not exercised")
	}
}

// CheckSameSeed runs the optimizers newOpt makes for 4 steps on a layered
// DAG of 120 ops on 3 devices, with seeds 5, 5 and 6: the same seed must
// give the same decision and learning curve, another seed another curve,
// and a run must take evaluations evaluations in 4 steps of one point
// each.
func CheckSameSeed(t *testing.T, newOpt func() optimize.Optimizer, evaluations int) {
	t.Helper()
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 120, Width: 8, Seed: 1})
	p, err := NewProblem(g, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	run := func(seed uint64) *optimize.Result {
		res, err := newOpt().Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Steps: 4}, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b, c := run(5), run(5), run(6)
	if !slices.Equal(a.Decision.Device, b.Decision.Device) || a.Eval.StepTime != b.Eval.StepTime {
		t.Errorf("same seed: steps %v and %v", a.Eval.StepTime, b.Eval.StepTime)
	}
	if Curve(a) != Curve(b) {
		t.Error("same seed, different learning curves")
	}
	if Curve(a) == Curve(c) {
		t.Error("seeds 5 and 6 gave the same learning curve")
	}
	if a.Stats.Evaluations != evaluations || a.Stats.Steps != 4 || len(a.Learning.Curve) != 4 {
		t.Errorf("%d evaluations, %d steps, %d points; want %d, 4, 4", a.Stats.Evaluations, a.Stats.Steps, len(a.Learning.Curve), evaluations)
	}
}

// Curve prints a result's learning curve without its wall times.
func Curve(r *optimize.Result) string {
	pts := slices.Clone(r.Learning.Curve)
	for i := range pts {
		pts[i].Elapsed = 0
	}
	return fmt.Sprint(pts)
}

// MeanReward is the mean of the points' mean rewards.
func MeanReward(pts []optimize.CurvePoint) float64 {
	s := 0.0
	for _, p := range pts {
		s += p.MeanReward / float64(len(pts))
	}
	return s
}
