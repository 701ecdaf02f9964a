package classical_test

import (
	"context"
	"testing"

	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// solve runs method name on p with budget and seed 1, checks the result
// with the conformance checks, and returns it.
func solve(t *testing.T, name string, p *optimize.Problem, b optimize.Budget) *optimize.Result {
	t.Helper()
	o, err := methods.New(name, methods.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := o.Optimize(context.Background(), withExpert(p), &optimize.Settings{Budget: b, Seed: 1})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	methodstest.Check(t, p, res, b)
	return res
}

// nonLearned lists the registry's methods that are not learned and place
// one replica (the methods that split the batch need a graph with one).
func nonLearned() []string {
	var n []string
	for _, e := range methods.All() {
		if e.Kind != methods.Learned && !e.Splits {
			n = append(n, e.Name)
		}
	}
	return n
}

// splitters are the methods that can put independent work on different
// devices on their own (not the fixed placements).
var splitters = []string{"random", "metis", "gp-dfs", "m-topo", "m-etf", "local-search", "sa", "brkga", "dp", "local-search-anchored", "sa-anchored"}

// memoryAware are the methods that must avoid running out of memory when
// a placement that fits exists.
var memoryAware = splitters

// TestEqualChainsSplit: two equal independent chains on two devices. A
// method that can split must put one chain on each device, and the step is
// exactly one chain.
func TestEqualChainsSplit(t *testing.T) {
	const length, opTime = 4, 1e-3
	p, err := methodstest.NewProblem(graphtest.Chains(2, length, opTime, 16), 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range splitters {
		t.Run(name, func(t *testing.T) {
			res := solve(t, name, p, optimize.Budget{Evaluations: 1500})
			if !methodstest.Close(res.Eval.StepTime, length*opTime) {
				t.Errorf("step %g, want one chain: %g (placement %v)", res.Eval.StepTime, length*opTime, res.Decision.Device)
			}
		})
	}
}

// TestPureChainNoGain: on a single chain no placement beats one device.
func TestPureChainNoGain(t *testing.T) {
	p, err := methodstest.NewProblem(graphtest.Chains(1, 12, 1e-3, 1<<20), 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	single := solve(t, "single", p, optimize.Budget{}).Eval.StepTime
	for _, name := range nonLearned() {
		t.Run(name, func(t *testing.T) {
			res := solve(t, name, p, optimize.Budget{Evaluations: 300})
			if res.Eval.StepTime < single*(1-1e-12) {
				t.Errorf("step %g beats one device's %g on a chain", res.Eval.StepTime, single)
			}
		})
	}
}

// TestMemoryForcesSplit: parameters that fit only when spread. One device
// runs out of memory; the memory-aware methods must not.
func TestMemoryForcesSplit(t *testing.T) {
	for _, devices := range []int{2, 3} {
		g, capacity := graphtest.MemoryBound(devices)
		p, err := methodstest.NewProblem(g, devices, capacity)
		if err != nil {
			t.Fatal(err)
		}
		if !solve(t, "single", p, optimize.Budget{}).Eval.OOM {
			t.Fatal("the memory-bound graph fits on one device")
		}
		for _, name := range memoryAware {
			t.Run(name, func(t *testing.T) {
				res := solve(t, name, p, optimize.Budget{Evaluations: 500})
				if res.Eval.OOM {
					t.Errorf("%d devices: out of memory: peaks %v, capacity %d", devices, res.Eval.PeakMemory, capacity)
				}
			})
		}
	}
}

// TestTightLayeredFits: a layered DAG with memory for 40% of its
// parameters per device (of four): the memory-aware heuristics fit it.
func TestTightLayeredFits(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 400, Width: 16, Seed: 11})
	p, err := methodstest.NewProblem(g, 4, g.Stats().ParamBytes*2/5)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"metis", "m-topo", "m-etf"} {
		if res := solve(t, name, p, optimize.Budget{}); res.Eval.OOM {
			t.Errorf("%s: out of memory: peaks %v of %d", name, res.Eval.PeakMemory, p.Capacity())
		}
	}
}
