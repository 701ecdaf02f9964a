package roofline

import (
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// TestFusionTriesEveryInput: an op's inputs are tried in order, a
// producer as often as it feeds the op. c reads p, p2, then p again; p
// also feeds x on the other device. The first try of p is illegal (p has
// two successors, c two predecessors, one edge between them); c then
// joins p2, after which c's group has one incoming edge, so the second
// try of p succeeds: {p, p2, c} and {x}, two kernels. With the fusion
// order topological and not.
func TestFusionTriesEveryInput(t *testing.T) {
	b := graph.NewBuilder("repeat")
	ew := func(name string) graph.Op {
		return graph.Op{Name: name, Type: "Add", Class: graph.ClassElementwise, FLOPs: 1e3, BytesRead: 4e3, BytesWritten: 4e3}
	}
	p, p2, x, c := b.AddOp(ew("p")), b.AddOp(ew("p2")), b.AddOp(ew("x")), b.AddOp(ew("c"))
	b.AddTensor(p, 1000, c)
	b.AddTensor(p2, 1000, c)
	b.AddTensor(p, 1000, c, x)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := Preset("v100")
	cl, _ := NewCluster(h, 2, "")
	m := mustModel(t, g, cl, Options{})
	device := make([]int, 4)
	device[x] = 1
	for _, fusion := range [][]int{decision.TopologicalFusion(g), {0, 0, 0, 5}} {
		d := decision.Decision{Device: device, Fusion: fusion}
		want := refRun(t, g, cl, Options{}, d, nil)
		r, err := NewSimulator(m, nil).Run(d)
		if err != nil {
			t.Fatal(err)
		}
		if r.Kernels != 2 || want.Kernels != 2 {
			t.Errorf("fusion %v: %d kernels (reference %d), want 2: {p, p2, c} and {x}", fusion, r.Kernels, want.Kernels)
		}
		if got := r.Clone(); !sameResult(got, want) {
			t.Errorf("fusion %v: %+v, want %+v", fusion, got, want)
		}
	}
}

// TestBadDecisionErrors: a decision naming a device that does not exist,
// alone or with other faults, fails with exactly decision.Validate's
// error, whether fusion is off, topological or in another order, and on a
// graph numbered out of topological order; and the simulator still gives
// the reference's result for a good decision afterwards.
func TestBadDecisionErrors(t *testing.T) {
	h, _ := Preset("v100")
	c, _ := NewCluster(h, 4, "")
	for _, g := range []*graph.Graph{layeredDAGSpan(600, 20, 2, 5, false), shuffled(layeredDAGSpan(600, 20, 2, 6, false), 7)} {
		m := mustModel(t, g, c, Options{})
		s := NewSimulator(m, nil)
		n := g.NumOps()
		good := make([]int, n)
		for i := range good {
			good[i] = (g.TopoIndex(i) / 7) % 4
		}
		reversed := make([]int, n) // priorities that increase along the topological order
		for i := range reversed {
			reversed[i] = g.TopoIndex(i)
		}
		for _, at := range []int{0, n / 2, n - 1, int(g.Topo()[n-1])} {
			for _, dev := range []int{4, -1, 99} {
				bad := append([]int(nil), good...)
				bad[at] = dev
				for _, d := range []decision.Decision{
					{Device: bad},
					{Device: bad, Fusion: decision.TopologicalFusion(g)},
					{Device: bad, Fusion: reversed},
					{Device: bad, Fusion: []int{1}},
					{Device: bad, Priority: make([]int, n), Transfer: []int{3}},
				} {
					want := d.Validate(g, 4)
					if want == nil {
						t.Fatalf("device %d at op %d: Validate found nothing wrong", dev, at)
					}
					if _, err := s.Run(d); err == nil || err.Error() != want.Error() {
						t.Errorf("device %d at op %d, fusion %d entries: error %v, want %v", dev, at, len(d.Fusion), err, want)
					}
				}
			}
		}
		for _, fusion := range [][]int{nil, decision.TopologicalFusion(g), reversed} {
			d := decision.Decision{Device: good, Fusion: fusion}
			want := refRun(t, g, c, Options{}, d, nil)
			r, err := s.Run(d)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Clone(); !sameResult(got, want) {
				t.Errorf("after the errors, fusion of %d entries: %+v, want %+v", len(fusion), got, want)
			}
		}
	}
}
