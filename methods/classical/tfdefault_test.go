package classical_test

import (
	"reflect"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

func TestTFDefault(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 80, Width: 8, Seed: 3})
	p, err := methodstest.NewProblem(g, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := solve(t, "tf-default", p, optimize.Budget{}) // with the stand-in expert
	want, _ := testExpert(g, 2)
	first := map[int]int{} // co-location repaired: a group follows its first op
	for i := range want {
		if c := g.Colocation(i); c >= 0 {
			if d, ok := first[c]; ok {
				want[i] = d
			} else {
				first[c] = want[i]
			}
		}
	}
	if !reflect.DeepEqual(res.Decision.Device, want) {
		t.Error("not the expert placement")
	}
	if res.Decision.Priority != nil || !reflect.DeepEqual(res.Decision.Fusion, decision.TopologicalFusion(g)) {
		t.Error("not FIFO with the default fusion")
	}
	o := classical.TFDefault{} // p has no expert placement
	r2, err := o.Optimize(t.Context(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r2.Decision.Device, decision.Single(g)) {
		t.Error("without an expert, not the single placement")
	}
}
