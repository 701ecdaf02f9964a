package scale

import (
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/scale/eager"

	"github.com/placer/placer/evaluate/scale/plan"
)

// This file is docs/stacks.md's worked example of adding a stack: its
// layer costs in one file (this one) and one registration line
// (addStack's call in TestAddedStack; in the package, a line of
// layerCosters and the stack's row in Stacks).

// hookedLayers is the layers of hf-eager-bf16 run with a Python hook on
// every block (a logger's or a profiler's forward and backward hooks):
// transformers' eager layers as hfLayers costs them, and the host held
// for a fixed time before each block's kernels in each direction, the
// GPU idle meanwhile (the host's wait, exposed). The kernels alone
// (noHost: Result's LayerForward and LayerBackward) are hfLayers'.
type hookedLayers struct {
	hfLayers
	hook float64 // seconds the host spends in the hook, a block and direction
}

func (hookedLayers) Name() string { return "transformers-hooked" }

func (l hookedLayers) Dense(c coster) (fwd, bwd phase) {
	fwd, bwd = l.hfLayers.Dense(c)
	return l.held(c, fwd), l.held(c, bwd)
}

func (l hookedLayers) MoE(c coster) (fwd, bwd phase) {
	fwd, bwd = l.hfLayers.MoE(c)
	return l.held(c, fwd), l.held(c, bwd)
}

// held is p with the hook's time on the host, the GPU waiting for it.
func (l hookedLayers) held(c coster, p phase) phase {
	if c.noHost {
		return p
	}
	p.busy += l.hook
	p.hostExposed += l.hook
	return p
}

// addStack registers stack ns with its layer costs lc for the test: the
// registration a stack of the package makes with its line in
// layerCosters and its row in Stacks, undone when the test ends.
func addStack(t *testing.T, ns plan.NamedStack, lc LayerCoster) {
	t.Helper()
	stacks, costers := plan.Stacks, layerCosters.costers
	if err := layerCosters.register(lc); err != nil {
		t.Fatal(err)
	}
	plan.Stacks = append(slices.Clip(plan.Stacks), ns)
	t.Cleanup(func() { plan.Stacks, layerCosters.costers = stacks, costers })
}

// TestAddedStack: a stack added in one file and one registration is
// chosen by stack=NAME and costs a plan as its layer costs say. Llama 3
// 8B at seq 8192 and batch 16 on one Grand Teton node, dp=8 and mbs 2
// (one micro-batch a GPU): under hf-eager-hooked, hf-eager-bf16 with a
// 1 ms hook, each of the 32 blocks waits 1 ms on its host forward and 1
// ms backward, so the step's compute and its exposed host time are 64 ms
// above hf-eager-bf16's, every other figure (its kernels alone, its
// memory) the same; the stack line names it as hf-eager-bf16's is named.
func TestAddedStack(t *testing.T) {
	addStack(t, plan.NamedStack{Name: "hf-eager-hooked", Settings: plan.Settings{Dispatcher: plan.DispatcherAllToAll, Graphs: plan.GraphsOff, Eager: true, Layers: "transformers-hooked"},
		Source: "the test's: hf-eager-bf16 with a forward and backward hook of 1 ms on every block"},
		hookedLayers{hfLayers: hfLayers{eagerLayers{eager.LayerHF}}, hook: 1e-3})
	m := mustSpec(t, "llama3-8b:seq=8192,batch=16")
	// At the burst clock: the host's waits would also raise the clock
	// the power limit allows (TestBalancedStep), which is not what this
	// test adds up.
	p, err := plan.ParsePod("grand-teton:1,power=off")
	if err != nil {
		t.Fatal(err)
	}
	eval := func(strategy string) Result {
		s, err := plan.ParseStrategy(strategy)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Evaluate(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base, hooked := eval("dp=8,mbs=2,stack=hf-eager-bf16"), eval("dp=8,mbs=2,stack=hf-eager-hooked")
	const want = 1 * 32 * 2 * 1e-3 // micro-batches x blocks x directions x hook
	if m.Layers != 32 || hooked.Plan.NumMicro != 1 {
		t.Fatalf("%d layers, %d micro-batches: the hand count takes 32 and 1", m.Layers, hooked.Plan.NumMicro)
	}
	if got := hooked.Compute - base.Compute; !near(got, want) {
		t.Errorf("compute %.6f s over hf-eager-bf16's %.6f, want %.6f over", hooked.Compute, base.Compute, want)
	}
	if got := hooked.HostExposed - base.HostExposed; !near(got, want) {
		t.Errorf("host exposed %.6f s over hf-eager-bf16's %.6f, want %.6f over", hooked.HostExposed, base.HostExposed, want)
	}
	if hooked.LayerForward != base.LayerForward || hooked.LayerBackward != base.LayerBackward || hooked.Memory != base.Memory {
		t.Errorf("a layer alone %g + %g s, memory %d; want hf-eager-bf16's %g + %g s, %d",
			hooked.LayerForward, hooked.LayerBackward, hooked.Memory, base.LayerForward, base.LayerBackward, base.Memory)
	}
	if got, want := hooked.Plan.Stack().String(), "hf-eager-hooked: Hugging Face transformers' layers, eager: its layers costed as the ATen ops eager PyTorch issues"; got != want {
		t.Errorf("stack line %q, want %q", got, want)
	}
	// Its layers' description is hf-eager-bf16's: the same ops (the
	// hook launches no kernel), its stack's name in it.
	if got := hooked.LayerCosting; got == "" || got != strings.Replace(base.LayerCosting, "(hf-eager-bf16)", "(hf-eager-hooked)", 1) {
		t.Errorf("layer costing %q,\nwant hf-eager-bf16's %q with the stack's name", got, base.LayerCosting)
	}
	// Registered once: the same name again is refused.
	if err := layerCosters.register(hookedLayers{}); err == nil {
		t.Error("a second transformers-hooked registered")
	}
}
