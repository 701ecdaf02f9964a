package classical

import (
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
)

// TestLevelStep: one of the policy's levels in the anchor's values.
func TestLevelStep(t *testing.T) {
	for _, c := range []struct {
		xs     []int
		levels int
		want   int
	}{
		{nil, 15, 1},                // no values (FIFO): shifts of 1
		{[]int{5, 5, 5}, 15, 1},     // all equal
		{[]int{1, 151}, 15, 10},     // range 150 over 15 levels
		{[]int{0, 20, 140}, 14, 10}, // fusion: 14 levels above "never"
		{[]int{3, 10}, 15, 1},       // narrower than the levels: at least 1
	} {
		if got := levelStep(c.xs, c.levels); got != c.want {
			t.Errorf("levelStep(%v, %d) = %d, want %d", c.xs, c.levels, got, c.want)
		}
	}
}

// TestAnchorUnitsContract: with fewer units allowed than co-location
// groups, units are contracted to about the bound, every co-location group
// stays inside one unit, and no unit mixes ops the anchor puts on
// different devices.
func TestAnchorUnitsContract(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 400, Width: 10, Seed: 5})
	p, err := methodstest.NewProblem(g, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	anchor := decision.Decision{Device: decision.RoundRobin(g, 3), Priority: topoPriority(g), Fusion: decision.TopologicalFusion(g)}
	all := newUnits(g)
	u, err := anchorUnits(p, anchor, 60, levelStep(anchor.Priority, 15), levelStep(anchor.Fusion, 14), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.members) >= len(all.members) || len(u.members) < 2 {
		t.Errorf("%d units from %d groups, bound 60", len(u.members), len(all.members))
	}
	for k, ms := range u.members {
		for _, v := range ms {
			if u.unitOf[v] != int32(k) {
				t.Fatalf("op %d listed in unit %d, mapped to %d", v, k, u.unitOf[v])
			}
			if anchor.Device[v] != anchor.Device[ms[0]] {
				t.Errorf("unit %d mixes devices %d and %d", k, anchor.Device[ms[0]], anchor.Device[v])
			}
			if c := g.Colocation(int(v)); c >= 0 && u.unitOf[v] != u.unitOf[all.members[all.unitOf[v]][0]] {
				t.Errorf("co-location group %d split", c)
			}
		}
	}
	// Few groups: one unit per group.
	if u, _ := anchorUnits(p, anchor, 0, 1, 1, 1); len(u.members) != len(all.members) {
		t.Errorf("%d units, want one per group: %d", len(u.members), len(all.members))
	}
}
