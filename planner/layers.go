package planner

import (
	"fmt"

	"github.com/placer/placer/planner/codebases"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/eager"
	"github.com/placer/placer/planner/plan"
)

// LayerCoster is what a stack's code costs of a training step's layers:
// one transformer block, dense or with experts, and the two ends of the
// model, the embedding and the output layer with its loss. It is the one
// seam between the plan (the model, the plan's shard shapes, the
// hardware and its measurements, all held by the coster it is given) and
// the kernels a stack issues for them (DESIGN §13: the same layer under
// two stacks is two lists of kernels, not one list and a fudge factor).
//
// Each method costs one micro-batch on one GPU of the plan's tensor
// group, at the coster's shard shape (c.pl.TP, c.pl.SequenceParallel,
// c.tokens, the experts' EP and ETP), and returns its forward and its
// backward as phases: the kernels' time (busy), the tensor-, context-
// and expert-parallel communication (all and exposed), the kernels and
// collectives the host launches, the CUDA graphs it replays and the
// device-to-host synchronizations it waits on. Where the coster says
// noComm (a block's kernels alone) no communication is costed; where it
// says noHost the host's wait is left out.
//
//   - Dense and MoE are a block's, its selective or full recomputation
//     included in the backward and the host's wait exposed in both
//     (coster.join does both for a block of two halves). Dense is a
//     block with a dense MLP: every block of a dense model, the dense
//     blocks before the experts in a model with experts. MoE is a block
//     whose MLP is routed experts.
//   - Embedding and Output are the first stage's lookup and the last
//     stage's final norm, output layer and loss, their host's wait not
//     exposed (the caller exposes it).
//
// A stack's layer costs are a code base (cost.CodeBase), one
// implementation in a file of its own in planner/codebases
// (fused.go, llamapy.go, ...), handed the coster's blocks (cost.Blocks),
// registered by name in layerCosters and chosen by the plan's stack
// (layerCoster). A profile wraps them (profiledLayers), answering where
// it measured.
type LayerCoster = cost.CodeBase

// codeBase is layer costs as a plug-in of the one registry of plug-ins
// (cost.Registry): registered under the layer costs' name, it prices a
// shard whose plan's stack runs them (layerCoster), so that a code base
// is named in a figure's provenance as a family or a mechanism is.
type codeBase struct{ LayerCoster }

// Prices reports whether shard s's plan runs b's layer costs.
func (b codeBase) Prices(s *cost.Shard) bool { return layerCoster(&s.Plan.Run).Name() == b.Name() }

// newLayerRegistry registers lcs in order (cost.Registry: refusing an
// empty or a duplicate name).
func newLayerRegistry(lcs ...LayerCoster) (*cost.Registry, error) {
	ps := make([]cost.Plugin, len(lcs))
	for i, lc := range lcs {
		ps[i] = codeBase{lc}
	}
	return cost.NewRegistry(ps...)
}

// lookupLayers is the layer costs registered in r as name (nil: none).
func lookupLayers(r *cost.Registry, name string) LayerCoster {
	if b, ok := r.Lookup(name).(codeBase); ok {
		return b.LayerCoster
	}
	return nil
}

// stackRows is layer costs that bring the named stacks running them: a
// stack added in one file, its row (plan.NamedStack) beside its layer
// costs, added to plan.Stacks when they are registered (addStacks).
type stackRows interface {
	Stacks() []plan.NamedStack
}

// addStacks adds the named stacks lc brings (stackRows) to plan.Stacks,
// refusing a stack whose settings do not run lc's layers eager, or a
// name taken.
func addStacks(lc LayerCoster) error {
	sr, ok := lc.(stackRows)
	if !ok {
		return nil
	}
	for _, ns := range sr.Stacks() {
		if !ns.Settings.Eager || ns.Settings.Layers != lc.Name() {
			return fmt.Errorf("stack %q brought by layer costs %q runs layers %q (eager %t), not them", ns.Name, lc.Name(), ns.Settings.Layers, ns.Settings.Eager)
		}
		if err := plan.AddStack(ns); err != nil {
			return err
		}
	}
	return nil
}

// layerCosters are the stacks' layer costs, the code bases, one
// registration line each in a cost.Registry (a duplicate name, of layer
// costs or of a stack they bring, stops the program at its start, and the
// package's tests with it).
var layerCosters = mustLayerRegistry(
	codebases.Fused{},
	codebases.LlamaPy{Eager: codebases.Eager{Code: eager.LayerLlamaPy}},
	codebases.HF{Eager: codebases.Eager{Code: eager.LayerHF}},
	codebases.Titan{Eager: codebases.Eager{Code: eager.LayerTitan}},
)

func mustLayerRegistry(lcs ...LayerCoster) *cost.Registry {
	r, err := newLayerRegistry(lcs...)
	for _, lc := range lcs {
		if err == nil {
			err = addStacks(lc)
		}
	}
	if err != nil {
		panic(err)
	}
	return r
}

// layerCoster is the layer costs a plan of settings st runs: its stack's
// eager layers (Layers; layers.py's where it names none) where they run
// eager (compile=off, or an eager stack's default), else the fused
// kernels'.
func layerCoster(st *plan.Settings) LayerCoster {
	if !st.Eager {
		if st.Layers == plan.LayersTitan {
			return codebases.TitanCompiled{}
		}
		return lookupLayers(layerCosters, plan.LayersFused)
	}
	name := st.Layers
	if name == "" {
		name = plan.LayersLlamaPy
	}
	return lookupLayers(layerCosters, name)
}

// part is one half of a block (cost.Part).
type part = cost.Part

// Join is the block of attention half a and MLP or experts half f (an
// MoE block's with moe), forward and backward: CUDA graphs replay what
// the plan graphs of it, the backward runs the recomputation the plan
// asks for (selective: the halves' rec; full: the whole forward), and
// the host's wait is exposed in each direction (unless c.noHost).
func (c *coster) Join(a, f part, moe bool) (fwd, bwd phase) {
	af, ab, ar := a.Fwd, a.Bwd, a.Rec
	mf, mb, mr := f.Fwd, f.Bwd, f.Rec
	if g := c.Plan.Run.Graphs; g == plan.GraphsDense || g == plan.GraphsFull {
		// The attention and a dense layer's MLP are replayed from their
		// graphs; an MoE layer stays eager unless the whole layer is
		// graphed (capacity routing: resolveSoftware).
		af, ab, ar = graphed(af), graphed(ab), graphed(ar)
		if !moe || g == plan.GraphsFull {
			mf, mb, mr = graphed(mf), graphed(mb), graphed(mr)
		}
	}
	fwd, bwd = af.Plus(mf), mb.Plus(ab)
	switch c.Plan.Recompute {
	case plan.SelectiveRecompute:
		bwd = bwd.Plus(ar.Plus(mr))
	case plan.FullRecompute:
		bwd = bwd.Plus(fwd)
	}
	if c.NoHost {
		return fwd, bwd
	}
	h := &c.Pod.Kernels.Host
	return expose(c.Points, h, fwd, false), expose(c.Points, h, bwd, true)
}

// The coster's blocks, as a code base asks them (cost.Blocks): its
// shard, the fused kernels' halves, ends and attention kernel.
var _ cost.Blocks = (*coster)(nil)

func (c *coster) Base() *cost.Shard                { return &c.Shard }
func (c *coster) AttnBlock() (fwd, bwd, rec phase) { return c.attnBlock() }
func (c *coster) MLPBlock() (fwd, bwd, rec phase)  { return c.mlpBlock() }
func (c *coster) MoEBlock() (fwd, bwd, rec phase)  { return c.moeBlock() }
func (c *coster) CoreAttention() (fwd, bwd phase)  { return c.coreAttention() }
func (c *coster) Embedding() (fwd, bwd phase)      { return c.embedding() }
func (c *coster) FusedOutput() (fwd, bwd phase)    { return c.fusedOutput() }
func (c *coster) DispatchComm(recv, rows, nl float64) phase {
	return dispatcherOf(&c.Shard).DispatchComm(recv, rows, nl)
}

// blocks is a copy of c as the blocks a code base is handed (a code
// base's costs are c's, whatever they change of their copy).
func (c *coster) blocks() cost.Blocks {
	cc := *c
	return &cc
}

// layersOf is the layer costs a coster of a plan of settings run on pod
// p asks: the stack's (Settings.layerCoster), the profile's
// measurements in their place where p has a profile (profiledLayers).
func layersOf(run *plan.Settings, p *plan.Pod) LayerCoster {
	lc := layerCoster(run)
	if p != nil && p.Profile != nil {
		return profiledLayers{stack: lc}
	}
	return lc
}

// layerCosts is the layer costs c asks: those newCoster chose, or for a
// coster built field by field layersOf's.
func (c *coster) layerCosts() LayerCoster {
	if c.layers != nil {
		return c.layers
	}
	return layersOf(&c.Plan.Run, c.Pod)
}

// layer is one transformer block's forward and backward for one
// micro-batch on one GPU, its recomputation in the backward included: in
// a model with experts an MoE block.
func (c *coster) layer() (fwd, bwd phase) {
	if c.M.Hybrid() {
		return c.hybridLayer() // cost_mamba.go
	}
	if c.M.MoE() {
		return c.layerCosts().MoE(c.blocks())
	}
	return c.layerCosts().Dense(c.blocks())
}

// block is a transformer block as the plan's stack costs it (no
// profile): with moe an MoE block, else a dense one.
func (c *coster) block(moe bool) (fwd, bwd phase) {
	if c.M.Hybrid() {
		return c.hybridLayer()
	}
	st := layerCoster(&c.Plan.Run)
	if moe {
		return st.MoE(c.blocks())
	}
	return st.Dense(c.blocks())
}

// output is the output layer and its loss as the plan's stack costs it
// (no profile).
func (c *coster) output() (fwd, bwd phase) { return layerCoster(&c.Plan.Run).Output(c.blocks()) }
