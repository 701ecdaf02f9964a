package codebases

import (
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/eager"
	"github.com/placer/placer/planner/memory"
	"github.com/placer/placer/planner/plan"
)

// LlamaPy are a plain PyTorch loop's layers (torch-eager,
// torch-eager-bf16, compile=off on a stack without eager layers of its
// own): placer_torch.profile.layers' Block as eager PyTorch issues it
// (LayerLlamaPy) and its Experts, a bmm over the local experts at forced
// balance (MoELlamaPy, no host sync).
type LlamaPy struct{ Eager }

var _ EagerStack = LlamaPy{}

func (LlamaPy) Name() string { return plan.LayersLlamaPy }

// When is layers.py's declaration: a stack run eager whose layers are
// its, or that names none.
func (LlamaPy) When() cost.When { return llamaPyWhen }

var llamaPyWhen = cost.When{eagerLayers, cost.Setting("layers=llama.py", func(st *plan.Settings) bool {
	return st.Layers == "" || st.Layers == plan.LayersLlamaPy
})}

func (l LlamaPy) MoE(b cost.Blocks) (fwd, bwd phase) {
	c := b.Base()
	impl, loop := l.Experts(c.Plan.Run)
	return l.MoEWith(b, impl, loop)
}

func (LlamaPy) Experts(plan.Settings) (eager.MoEImpl, bool) { return eager.MoELlamaPy, false }

// EagerOneGPUMemoryError is the measured error of a plain PyTorch plan's
// traced peak on one GPU: the largest |predicted - measured| / measured
// over the 7 plans that ran of measurements/2026-11-27-h100/llamasweep.jsonl
// (Llama 3.2 1B on an H100 80GB HBM3, torch 2.11), allocated and
// reserved alike, rounded up to a tenth of a percent: micro-batch 2 with
// full recomputation's reserved, 35.49 GB against 34.85 (+1.82%).
// TestLlamaSweepMemoryError holds it to that file.
const EagerOneGPUMemoryError = 0.019

// eagerTrace is layers.py's model's code base with the traced peak's
// measured error (EagerOneGPUMemoryError).
func (l LlamaPy) EagerTrace() memory.EagerTrace {
	return memory.EagerTrace{Layer: l.Code, Error: plan.RegimeError{Frac: EagerOneGPUMemoryError, Source: "plain PyTorch on one GPU, traced: the largest error of measurements/2026-11-27-h100/llamasweep.jsonl's 7 plans that ran"}}
}
