package gdp

import (
	"context"
	"math"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/nn/graphsage"
)

// stateGraph is a -> b -> d and a -> c -> d, with b and d on device 0 and
// c on device 1, and the schedule worked out by hand in TestStateHints.
func stateGraph(t *testing.T) (*graph.Graph, []int, evaluate.Result, evaluate.Schedule) {
	t.Helper()
	b := graph.NewBuilder("diamond")
	for _, n := range []string{"a", "b", "c", "d"} {
		b.AddOp(graph.Op{Name: n, Type: "MatMul"})
	}
	ta := b.AddTensor(0, 2048, 1, 2) // a -> b, c (2 KiB)
	b.AddTensor(1, 4096, 3)          // b -> d (4 KiB, stays on device 0)
	tc := b.AddTensor(2, 1024, 3)    // c -> d (1 KiB)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	device := []int{0, 0, 1, 0}
	res := evaluate.Result{StepTime: 4, DeviceBusy: []float64{4, 0.5},
		PeakMemory: []int64{60 << 10, 10 << 10}, Capacity: []int64{100 << 10, 100 << 10}}
	sc := evaluate.Schedule{
		Kernels: []evaluate.Kernel{
			{Device: 0, Ops: []int32{0}, Start: 0, End: 1},
			{Device: 0, Ops: []int32{1}, Start: 1, End: 3},
			{Device: 1, Ops: []int32{2}, Start: 1.5, End: 2},
			{Device: 0, Ops: []int32{3}, Start: 3, End: 4},
		},
		Transfers: []evaluate.Transfer{
			{Tensor: ta, Src: 0, Dst: 1, Bytes: 2048, Start: 1, End: 1.5},
			{Tensor: tc, Src: 1, Dst: 0, Bytes: 1024, Start: 2, End: 2.5},
		},
	}
	return g, device, res, sc
}

// TestStateHints checks the state hints of a hand-made schedule. The
// critical path is a, b, d (no float); c could end 0.5 s later, since d
// waits for b until 3 s and c's tensor arrives at 2.5 s. Device 1 idles
// 3.5 of the 4 s. Tensor a crosses to device 1 (2 KiB, counted for a and
// c), tensor c back to device 0 (1 KiB, for c and d).
func TestStateHints(t *testing.T) {
	g, device, res, sc := stateGraph(t)
	//              slack   critical  start   idle   headroom cross
	want := [][NumStateHints]float64{
		{0, 1e6, 0, 0, 40, 2},         // a
		{0, 2e6, 1e6, 0, 40, 0},       // b
		{5e5, 0, 1.5e6, 3.5e6, 90, 3}, // c
		{0, 1e6, 3e6, 0, 40, 1},       // d
	}
	got := stateHints(g, graphsage.NewNodes(g, false), device, &res, &sc)
	for o := range want {
		for j := range NumStateHints {
			if w, h := want[o][j], got[o*NumStateHints+j]; math.Abs(w-h) > 1e-6*math.Max(1, math.Abs(w)) {
				t.Errorf("op %s, hint %d: %v, want %v", g.Op(o).Name, j, h, w)
			}
		}
	}

	// With a and b one unit, each of them carries half its value, so
	// that the unit's feature (the sum over its ops) is their mean.
	nd, err := graphsage.NewNodesFrom(g, []int32{0, 0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	half := stateHints(g, nd, device, &res, &sc)
	for o := range 4 {
		f := 1.0
		if o < 2 {
			f = 0.5
		}
		for j := range NumStateHints {
			if w, h := f*want[o][j], half[o*NumStateHints+j]; math.Abs(w-h) > 1e-6*math.Max(1, math.Abs(w)) {
				t.Errorf("unit {a, b}: op %s, hint %d: %v, want %v", g.Op(o).Name, j, h, w)
			}
		}
	}
}

// TestStateHintsSimulated: on simulated schedules of random decisions,
// every hint is finite and non-negative, some kernel has no float (the
// critical path exists), no float exceeds the step, and the critical
// kernels' durations add up to at most the step time on their devices
// together.
func TestStateHintsSimulated(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 48, Width: 6, Seed: 3})
	p, err := methodstest.NewProblem(g, 3, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	sch, err := scheduler(p)
	if err != nil {
		t.Fatal(err)
	}
	nd := graphsage.NewNodes(g, false)
	for seed := range 5 {
		dev := make([]int, g.NumOps())
		for i := range dev {
			dev[i] = (i*7 + seed*3 + i/5) % 3
		}
		d := p.Complete(decision.Decision{Device: dev})
		res, sc, err := sch.Schedule(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		h := stateHints(g, nd, d.Device, &res, &sc)
		crit := 0.0
		for o := range g.NumOps() {
			row := h[o*NumStateHints : (o+1)*NumStateHints]
			for j, v := range row {
				if !(v >= 0) || math.IsInf(v, 0) {
					t.Fatalf("seed %d, op %d, hint %d = %v", seed, o, j, v)
				}
			}
			if row[stateSlack] > res.StepTime*1e6*(1+1e-9) {
				t.Errorf("seed %d, op %d: float %v us beyond the step %v s", seed, o, row[stateSlack], res.StepTime)
			}
		}
		for _, k := range sc.Kernels {
			if h[int(k.Ops[0])*NumStateHints+stateCritical] > 0 {
				crit += k.End - k.Start
			}
		}
		if crit <= 0 || crit > res.StepTime*(1+1e-9) {
			t.Errorf("seed %d: critical kernels take %v s of a %v s step", seed, crit, res.StepTime)
		}
	}
}

// BenchmarkStateHintsGNMT4 is what go-scored pays to read its current
// decision's schedule on gnmt4 (TensorFlow's defaults): the schedule (one
// recording simulation) and the state hints.
func BenchmarkStateHintsGNMT4(b *testing.B) {
	p, ref := benchProblem(b, "gnmt4", 4)
	sch, err := scheduler(p)
	if err != nil {
		b.Fatal(err)
	}
	d := p.Complete(ref)
	b.ReportAllocs()
	for b.Loop() {
		res, sc, err := sch.Schedule(context.Background(), d)
		if err != nil {
			b.Fatal(err)
		}
		stateHints(p.Graph, nil, d.Device, &res, &sc)
	}
}

// BenchmarkEvaluateGNMT4 is one evaluation of the same decision, for
// scale.
func BenchmarkEvaluateGNMT4(b *testing.B) {
	p, ref := benchProblem(b, "gnmt4", 4)
	d := p.Complete(ref)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Evaluator.Evaluate(context.Background(), d); err != nil {
			b.Fatal(err)
		}
	}
}
