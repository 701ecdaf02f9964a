package classical_test

import (
	"reflect"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

func TestSingleKeepsBaseSchedule(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 60, Width: 6, Seed: 1})
	p, err := methodstest.NewProblem(g, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	prio := make([]int, g.NumOps())
	for i := range prio {
		prio[i] = i % 7
	}
	p.Base = decision.Decision{Device: decision.RoundRobin(g, 4), Priority: prio}
	res := solve(t, "single", p, optimize.Budget{})
	if !reflect.DeepEqual(res.Decision.Device, decision.Single(g)) {
		t.Error("not all on device 0")
	}
	if !reflect.DeepEqual(res.Decision.Priority, prio) {
		t.Error("Base priorities not kept")
	}
	if res.Stats.Evaluations != 1 || res.Stats.Status != optimize.Converged {
		t.Errorf("stats %+v", res.Stats)
	}
}
