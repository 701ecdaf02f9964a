package classical_test

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/optimize"
)

// testExpert is a stand-in expert placement: contiguous runs of the
// topological order of equal op count, one per device.
func testExpert(g *graph.Graph, devices int) ([]int, error) {
	dev := make([]int, g.NumOps())
	for k, v := range g.Topo() {
		dev[v] = k * devices / g.NumOps()
	}
	return dev, nil
}

// withExpert returns a copy of p with the stand-in expert placement.
func withExpert(p *optimize.Problem) *optimize.Problem {
	q := *p
	q.Expert, _ = testExpert(p.Graph, p.Devices())
	return &q
}
