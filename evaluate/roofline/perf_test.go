package roofline

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// shuffled rebuilds g with its ops (and tensors) numbered in a random
// order, as graphs imported from frameworks often are.
func shuffled(g *graph.Graph, seed uint64) *graph.Graph {
	rng := rand.New(rand.NewPCG(seed, 5))
	n := g.NumOps()
	perm := rng.Perm(n) // old -> new
	inv := make([]int, n)
	for i, p := range perm {
		inv[p] = i
	}
	b := graph.NewBuilder(g.Name() + "-shuffled")
	for _, i := range inv {
		b.AddOp(*g.Op(i))
	}
	for _, t := range rng.Perm(g.NumTensors()) {
		ts := *g.Tensor(t)
		ts.Producer = perm[ts.Producer]
		cons := make([]int, len(ts.Consumers))
		for k, c := range ts.Consumers {
			cons[k] = perm[c]
		}
		ts.Consumers = cons
		b.AddTensorFull(ts)
	}
	for _, e := range g.Control() {
		b.AddControl(perm[e.From], perm[e.To])
	}
	sg, err := b.Build()
	if err != nil {
		panic(err)
	}
	return sg
}

// BenchmarkSimulate80kLocalShuffled is BenchmarkSimulate80kLocal on the
// same graph numbered in a random order (the decision follows the ops).
func BenchmarkSimulate80kLocalShuffled(b *testing.B) {
	g := shuffled(layeredDAGSpan(80000, 200, 4, 42, false), 1)
	h, _ := Preset("v100")
	c, _ := NewCluster(h, 8, "")
	m, err := NewModel(g, c, Options{})
	if err != nil {
		b.Fatal(err)
	}
	d := decision.Decision{Device: make([]int, g.NumOps()), Fusion: decision.TopologicalFusion(g)}
	for i := range d.Device {
		d.Device[i] = (g.TopoIndex(i) % 200) / 25
	}
	benchRun(b, m, d)
}

// TestShuffledMatchesReference: a graph numbered out of topological order
// (renumbered inside the Model) gives the reference's result and timeline.
func TestShuffledMatchesReference(t *testing.T) {
	g := shuffled(layeredDAGSpan(3000, 40, 3, 8, false), 2)
	h, _ := Preset("h100")
	c, _ := NewCluster(h, 4, "")
	m := mustModel(t, g, c, Options{})
	d := decision.Decision{Device: make([]int, g.NumOps()), Fusion: decision.TopologicalFusion(g)}
	for i := range d.Device {
		d.Device[i] = (g.TopoIndex(i) % 40) / 10
	}
	rtl, tl := &Timeline{}, &Timeline{}
	want := refRun(t, g, c, Options{}, d, rtl)
	r, err := NewSimulator(m, tl).Run(d)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Clone(); !sameResult(got, want) || !sameTimeline(tl, rtl) {
		t.Fatalf("shuffled graph: %+v, want %+v", got, want)
	}
}

// TestLongQueues: one device and wide layers, so that the ready queues
// wrap around and grow, with and without priorities; against the
// reference.
func TestLongQueues(t *testing.T) {
	g := layeredDAGSpan(3000, 300, 0, 4, false)
	h, _ := Preset("a100")
	for _, devs := range []int{1, 2} {
		c, _ := NewCluster(h, devs, "")
		m := mustModel(t, g, c, Options{})
		rng := rand.New(rand.NewPCG(4, 4))
		for k := 0; k < 4; k++ {
			d := randomDecision(g, devs, rng, k&1 == 1, k&2 == 2, false)
			want := refRun(t, g, c, Options{}, d, nil)
			r, err := NewSimulator(m, nil).Run(d)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Clone(); !sameResult(got, want) {
				t.Fatalf("devices %d decision %d: %+v, want %+v", devs, k, got, want)
			}
		}
	}
}

func BenchmarkSimulateShuffledSizes(b *testing.B) {
	for _, n := range []int{4000, 80000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			g := shuffled(layeredDAGSpan(n, 200, 4, 42, false), 3)
			h, _ := Preset("v100")
			c, _ := NewCluster(h, 8, "")
			m, _ := NewModel(g, c, Options{})
			d := decision.Decision{Device: make([]int, g.NumOps()), Fusion: decision.TopologicalFusion(g)}
			for i := range d.Device {
				d.Device[i] = (g.TopoIndex(i) % 200) / 25
			}
			s := NewSimulator(m, nil)
			s.Run(d)
			cpuLoop(b, func() { s.Run(d) })
		})
	}
}

// BenchmarkSimulate80kFusionOrder is BenchmarkSimulate80kLocal with the
// fusion priorities in a random order (as a learned policy gives them),
// so that the fusion pass sorts the ops and takes them in that order
// instead of the topological one.
func BenchmarkSimulate80kFusionOrder(b *testing.B) {
	m, d := benchSetupSpan(b, 4)
	rng := rand.New(rand.NewPCG(9, 9))
	d.Fusion = rng.Perm(len(d.Device))
	benchRun(b, m, d)
}
