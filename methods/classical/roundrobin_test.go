package classical_test

import (
	"reflect"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

func TestRoundRobinDeals(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 90, Width: 9, Seed: 2})
	p, err := methodstest.NewProblem(g, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := solve(t, "round-robin", p, optimize.Budget{})
	if !reflect.DeepEqual(res.Decision.Device, decision.RoundRobin(g, 3)) {
		t.Error("not decision.RoundRobin")
	}
}
