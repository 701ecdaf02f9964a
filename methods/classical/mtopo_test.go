package classical_test

import (
	"testing"

	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

func TestMTopoContiguous(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 300, Width: 10, Seed: 9, Measured: true})
	p, err := methodstest.NewProblem(g, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := solve(t, "m-topo", p, optimize.Budget{})
	checkTopological(t, g, res.Decision.Priority)
	// Ops outside co-location groups run in contiguous device order along
	// the topological order, and every device gets some work.
	last := 0
	used := map[int]bool{}
	for _, v := range g.Topo() {
		d := res.Decision.Device[v]
		used[d] = true
		if g.Colocation(int(v)) >= 0 {
			continue
		}
		if d < last {
			t.Fatalf("op %s on device %d after device %d", g.Op(int(v)).Name, d, last)
		}
		last = d
	}
	if len(used) != 4 {
		t.Errorf("devices used: %v", used)
	}
}
