package classical_test

import (
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// cutBytes is the tensor bytes crossing devices (once per tensor and
// destination device).
func cutBytes(p *optimize.Problem, dev []int) int64 {
	g := p.Graph
	var cut int64
	for t := 0; t < g.NumTensors(); t++ {
		ts := g.Tensor(t)
		seen := map[int]bool{dev[ts.Producer]: true}
		for _, c := range ts.Consumers {
			if !seen[dev[c]] {
				seen[dev[c]] = true
				cut += ts.Bytes
			}
		}
	}
	return cut
}

func TestMETISBalancesComputeAndCutsLittle(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 2000, Width: 40, Seed: 6, Measured: true})
	p, err := methodstest.NewProblem(g, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := solve(t, "metis", p, optimize.Budget{})
	load := make([]float64, 4)
	total := 0.0
	for i, d := range res.Decision.Device {
		load[d] += p.Cost.OpTime(i)
		total += p.Cost.OpTime(i)
	}
	for d, l := range load {
		if l > 1.03*total/4+1e-12 {
			t.Errorf("device %d holds %.1f%% of the compute", d, 100*l/total)
		}
	}
	cut := cutBytes(p, res.Decision.Device)
	rr := cutBytes(p, decision.RoundRobin(g, 4))
	if cut*10 > rr {
		t.Errorf("cut %d bytes, round-robin cuts %d: want a tenth or less", cut, rr)
	}
	t.Logf("cut %d bytes (round-robin %d), loads %v", cut, rr, load)
}
