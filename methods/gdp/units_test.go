package gdp

import (
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// TestUnits: a graph with more ops than the bound is contracted to at most
// the bound, no unit mixes two actions of the reference, and a graph
// within the bound keeps the policy's own nodes.
func TestUnits(t *testing.T) {
	g := graphtest.Chains(4, 100, 1e-4, 1<<20) // 400 ops
	p, err := methodstest.RooflineProblem(g, cluster(t, 4), roofline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dev := make([]int, g.NumOps())
	for op := range dev {
		dev[op] = op / 100 // one chain per GPU
	}
	ref := p.Complete(decision.Decision{Device: dev})
	cfg := configFor(small, optimize.AllTasks)
	unit, err := Units(p, ref, 64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if unit == nil {
		t.Fatal("400 ops with a bound of 64: not contracted")
	}
	tgt := policyTarget(cfg, ref)
	first := map[int32]int{}
	for op, u := range unit {
		f, ok := first[u]
		if !ok {
			first[u] = op
			continue
		}
		if tgt.Device[op] != tgt.Device[f] {
			t.Fatalf("unit %d joins ops %d and %d, which the reference places on different devices", u, f, op)
		}
	}
	if len(first) > 64 {
		t.Errorf("%d units for a bound of 64", len(first))
	}
	t.Logf("%d ops -> %d units", g.NumOps(), len(first))
	if unit, err := Units(p, ref, 400, 1); err != nil || unit != nil {
		t.Errorf("bound = op count: units %v, err %v; want nil", unit != nil, err)
	}
}
