package classical_test

import (
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// checkTopological fails unless every op's priority is below each of its
// predecessors' (the priorities are a topological order).
func checkTopological(t *testing.T, g *graph.Graph, prio []int) {
	t.Helper()
	for v := 0; v < g.NumOps(); v++ {
		for _, u := range g.Preds(v) {
			if prio[u] <= prio[v] {
				t.Fatalf("op %s (priority %d) does not come after its predecessor %s (%d)", g.Op(v).Name, prio[v], g.Op(int(u)).Name, prio[u])
			}
		}
	}
}

func TestGPDFSDepthFirst(t *testing.T) {
	// a -> b -> c and a -> d -> e: depth first runs a b c d e.
	b := graph.NewBuilder("fork")
	ids := map[string]int{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		ids[n] = b.AddOp(graph.Op{Name: n, HasTime: true, Time: 1e-3})
	}
	b.AddTensor(ids["a"], 8, ids["b"], ids["d"])
	b.AddTensor(ids["b"], 8, ids["c"])
	b.AddTensor(ids["d"], 8, ids["e"])
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := methodstest.NewProblem(g, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := solve(t, "gp-dfs", p, optimize.Budget{})
	pr := res.Decision.Priority
	for i, n := range []string{"a", "b", "c", "d", "e"} {
		if pr[ids[n]] != 5-i {
			t.Fatalf("priorities %v: want a b c d e", pr)
		}
	}
	big := graphtest.LayeredDAG(graphtest.Layered{Ops: 300, Width: 12, Seed: 8})
	p, err = methodstest.NewProblem(big, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	res = solve(t, "gp-dfs", p, optimize.Budget{})
	checkTopological(t, big, res.Decision.Priority)
}
