package classical_test

import (
	"reflect"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

func TestMETFSpreadsIndependentWork(t *testing.T) {
	// A source feeding 8 independent 1 ms ops and a sink: on 4 devices
	// ETF runs two of them on each (tiny tensors, cheap transfers).
	b := graph.NewBuilder("fan")
	src := b.AddOp(graph.Op{Name: "src", HasTime: true, Time: 1e-6})
	sink := b.AddOp(graph.Op{Name: "sink", HasTime: true, Time: 1e-6})
	var mids []int
	for i := 0; i < 8; i++ {
		mids = append(mids, b.AddOp(graph.Op{Name: string(rune('a' + i)), HasTime: true, Time: 1e-3}))
	}
	b.AddTensor(src, 4, mids...)
	for _, m := range mids {
		b.AddTensor(m, 4, sink)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := methodstest.NewProblem(g, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := solve(t, "m-etf", p, optimize.Budget{})
	per := make([]int, 4)
	for _, m := range mids {
		per[res.Decision.Device[m]]++
	}
	if !reflect.DeepEqual(per, []int{2, 2, 2, 2}) {
		t.Errorf("independent ops per device %v, want 2 each", per)
	}
	if res.Eval.StepTime > 2.2e-3 {
		t.Errorf("step %g, want about 2 ms", res.Eval.StepTime)
	}
	checkTopological(t, g, res.Decision.Priority)
}

func TestMETFSchedulesAGivenPlacement(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 200, Width: 10, Seed: 10})
	p, err := methodstest.NewProblem(g, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	p.Tasks = optimize.Tasks{Scheduling: true}
	p.Base = decision.Decision{Device: decision.RoundRobin(g, 3)}
	res := solve(t, "m-etf", p, optimize.Budget{})
	if !reflect.DeepEqual(res.Decision.Device, p.Base.Device) {
		t.Error("placement changed")
	}
	checkTopological(t, g, res.Decision.Priority)
}

// TestMETFNothingFits: when no placement fits in memory, m-ETF still
// schedules every op (ops whose co-location group is already placed go
// to its device) and returns an out-of-memory decision, and SA, which
// starts from it, runs too; before, it stalled with "none ready".
func TestMETFNothingFits(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 160, Width: 8, Seed: 3})
	p, err := methodstest.NewProblem(g, 4, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"m-etf", "sa"} {
		res := solve(t, name, p, optimize.Budget{Evaluations: 20})
		if !res.Eval.OOM {
			t.Errorf("%s: a 1 KiB device fits the graph?", name)
		}
	}
}
