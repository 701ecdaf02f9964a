package classical

import (
	"context"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// handChain is a chain of atoms with the given compute, memory and cut
// costs (cut[i]: the cut before atom i; cut[0] is ignored).
func handChain(times, mem, cut []float64) *chain {
	n := len(times)
	ch := &chain{atoms: make([][]int32, n), time: make([]float64, n+1), mem: make([]float64, n+1), cut: make([]float64, n+1)}
	for i := range n {
		ch.atoms[i] = []int32{int32(i)}
		ch.time[i+1] = ch.time[i] + times[i]
		ch.mem[i+1] = ch.mem[i] + mem[i]
		if i > 0 {
			ch.cut[i] = cut[i]
		}
	}
	return ch
}

// TestDPBottleneckHand: times 3,1,1,1,1,3 with a cut cost of 0.5. Two
// blocks: cutting before atom 3 gives 5 | 5+0.5; before 2, 4 | 6.5.
// Three blocks: 3+1 | 1+1+1 (+0.5) | 3 (+0.5) has bottleneck 4, and every
// other split is worse (3 | 1+1+1+1 | 3 gives 4.5).
func TestDPBottleneckHand(t *testing.T) {
	ch := handChain([]float64{3, 1, 1, 1, 1, 3}, make([]float64, 6), []float64{0, 0.5, 0.5, 0.5, 0.5, 0.5})
	inf := math.Inf(1)
	for _, c := range []struct {
		k    int
		want []int
	}{{1, []int{}}, {2, []int{3}}, {3, []int{2, 5}}} {
		if got := ch.bottleneck(c.k, inf); !slices.Equal(got, c.want) {
			t.Errorf("%d blocks: cuts %v, want %v", c.k, got, c.want)
		}
	}
	// An expensive cut moves the split: with the cut before atom 3 costing
	// 3, two blocks cut before atom 2 (4 | 6.5) or 4 (6 | 4+0.5).
	ch = handChain([]float64{3, 1, 1, 1, 1, 3}, make([]float64, 6), []float64{0, 0.5, 0.5, 3, 0.5, 0.5})
	if got := ch.bottleneck(2, inf); !slices.Equal(got, []int{4}) {
		t.Errorf("expensive middle cut: cuts %v, want [4]", got)
	}
}

// TestDPSumHand: four atoms of one memory unit each, a limit of two, and
// cuts costing 1, 5, 1. Two blocks must cut in the middle (cost 5); three
// blocks cut before atoms 1 and 3 (cost 2), which is cheaper; without a
// limit one block costs nothing.
func TestDPSumHand(t *testing.T) {
	ch := handChain([]float64{1, 1, 1, 1}, []float64{1, 1, 1, 1}, []float64{0, 1, 5, 1})
	for _, c := range []struct {
		k     int
		limit float64
		want  []int
	}{{2, 2, []int{2}}, {3, 2, []int{1, 3}}, {4, 2, []int{1, 3}}, {4, math.Inf(1), []int{}}, {1, 2, nil}} {
		if got := ch.sum(c.k, c.limit); !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("%d blocks, limit %g: cuts %v, want %v", c.k, c.limit, got, c.want)
		}
	}
	// Memory also bounds the bottleneck split: 3 blocks of at most 2.
	if got := ch.bottleneck(2, 1); got != nil {
		t.Errorf("two blocks of one atom each cannot hold four: cuts %v", got)
	}
}

// TestDPChainCosts: newChain on a graph. Op 0 -> 1 -> 2 with op 0 also
// feeding 2, ops 0 and 2 co-located: the atoms are {0, 2} then {1}, and
// the one cut carries both tensors (0's output to 1, 1's output to the
// group).
func TestDPChainCosts(t *testing.T) {
	b := graph.NewBuilder("tri")
	for _, name := range []string{"a", "b", "c"} {
		b.AddOp(graph.Op{Name: name, Type: "Op", HasTime: true, Time: 1e-3, Colocation: map[string]string{"a": "g", "c": "g"}[name]})
	}
	b.AddTensor(0, 1000, 1, 2)
	b.AddTensor(1, 3000, 2)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ch := newChain(g, g.Topo(), []float64{1, 2, 4}, []int64{10, 20, 40}, 0.5, 0.001)
	if !reflect.DeepEqual(ch.atoms, [][]int32{{0, 2}, {1}}) {
		t.Fatalf("atoms %v", ch.atoms)
	}
	if want := []float64{0, 5, 7}; !slices.Equal(ch.time, want) {
		t.Errorf("time prefix %v, want %v", ch.time, want)
	}
	if want := []float64{0, 50, 70}; !slices.Equal(ch.mem, want) {
		t.Errorf("memory prefix %v, want %v", ch.mem, want)
	}
	// Both tensors cross: 2 x 0.5 + 4000 x 0.001.
	if want := 5.0; !methodstest.Close(ch.cut[1], want) {
		t.Errorf("cut %g, want %g", ch.cut[1], want)
	}
	if got := ch.placement([]int{1}); !slices.Equal(got, []int{0, 1, 0}) {
		t.Errorf("placement %v", got)
	}
}

// TestDPFourChains: four equal independent chains on four devices, laid
// out one after another in topological order: the bottleneck split puts
// one chain on each device, the optimum (one chain's time).
func TestDPFourChains(t *testing.T) {
	const length, opTime = 5, 1e-3
	p, err := methodstest.NewProblem(graphtest.Chains(4, length, opTime, 16), 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := dpRun(t, p, 1)
	if !methodstest.Close(res.Eval.StepTime, length*opTime) {
		t.Errorf("step %g, want %g (placement %v)", res.Eval.StepTime, length*opTime, res.Decision.Device)
	}
}

func dpRun(t *testing.T, p *optimize.Problem, seed uint64) *optimize.Result {
	t.Helper()
	res, err := DP{}.Optimize(context.Background(), p, &optimize.Settings{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	methodstest.Check(t, p, res, optimize.Budget{})
	return res
}

// TestDPRandomGraphs: on random layered graphs (co-location groups
// included) with ample and with tight memory, the result is a checked
// decision, never slower than one device when that fits, valid when one
// device is, and the same on every run.
func TestDPRandomGraphs(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		g := graphtest.LayeredDAG(graphtest.Layered{Ops: 150 + 20*int(seed), Width: 4 + int(seed), Seed: seed})
		for _, tight := range []bool{false, true} {
			devices := 2 + int(seed)%3
			var capacity int64
			if tight {
				capacity = g.Stats().ParamBytes * 2 / int64(devices)
			}
			p, err := methodstest.NewProblem(g, devices, capacity)
			if err != nil {
				t.Fatal(err)
			}
			single, err := p.Evaluator.Evaluate(context.Background(), p.Complete(decision.Decision{Device: decision.Single(g)}))
			if err != nil {
				t.Fatal(err)
			}
			res := dpRun(t, p, seed)
			if single.Valid() && (!res.Eval.Valid() || res.Eval.StepTime > single.StepTime) {
				t.Errorf("seed %d tight %v: %g (valid %v) worse than one device's %g", seed, tight, res.Eval.StepTime, res.Eval.Valid(), single.StepTime)
			}
			if again := dpRun(t, p, seed+100); !reflect.DeepEqual(again.Decision, res.Decision) {
				t.Errorf("seed %d tight %v: two runs differ", seed, tight)
			}
		}
	}
}

// TestDPMemoryForcesSplit: the memory-bound graph does not fit on one
// device; the split does.
func TestDPMemoryForcesSplit(t *testing.T) {
	for _, devices := range []int{2, 3} {
		g, capacity := graphtest.MemoryBound(devices)
		p, err := methodstest.NewProblem(g, devices, capacity)
		if err != nil {
			t.Fatal(err)
		}
		if res := dpRun(t, p, 1); res.Eval.OOM {
			t.Errorf("%d devices: out of memory: peaks %v of %d", devices, res.Eval.PeakMemory, capacity)
		}
	}
}

// TestDPGradientPaired: a -> b -> gradients/b_grad/x -> gradients/a_grad/y.
// Paired, each gradient follows its forward op: a, a's gradient, b, b's
// gradient; a graph without gradient ops has no paired order.
func TestDPGradientPaired(t *testing.T) {
	b := graph.NewBuilder("fwdbwd")
	names := []string{"a", "b", "gradients/b_grad/x", "gradients/a_grad/y"}
	for _, name := range names {
		b.AddOp(graph.Op{Name: name, Type: "Op", HasTime: true, Time: 1e-3})
	}
	for i := 0; i+1 < len(names); i++ {
		b.AddTensor(i, 8, i+1)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	got, ok := gradientPaired(g, g.Topo())
	if want := []int32{0, 3, 1, 2}; !ok || !slices.Equal(got, want) {
		t.Errorf("paired %v (%v), want %v", got, ok, want)
	}
	if len(dpOrders(g)) != 6 {
		t.Errorf("%d orders, want 6", len(dpOrders(g)))
	}
	chain := graphtest.Chains(1, 3, 1e-3, 8)
	if _, ok := gradientPaired(chain, chain.Topo()); ok || len(dpOrders(chain)) != 3 {
		t.Error("a graph without gradients has a paired order")
	}
}
