package scale

import (
	"github.com/placer/placer/evaluate/scale/eager"
	"github.com/placer/placer/evaluate/scale/memory"
	"github.com/placer/placer/evaluate/scale/plan"
)

// llamaPyLayers are a plain PyTorch loop's layers (torch-eager,
// torch-eager-bf16, compile=off on a stack without eager layers of its
// own): placer_torch.profile.layers' Block as eager PyTorch issues it
// (LayerLlamaPy) and its Experts, a bmm over the local experts at forced
// balance (MoELlamaPy, no host sync).
type llamaPyLayers struct{ eagerLayers }

var _ eagerStack = llamaPyLayers{}

func (llamaPyLayers) Name() string { return plan.LayersLlamaPy }

func (l llamaPyLayers) MoE(c coster) (fwd, bwd phase) {
	impl, loop := l.experts(c.Plan.Run)
	return l.moe(c, impl, loop)
}

func (llamaPyLayers) experts(plan.Settings) (eager.MoEImpl, bool) { return eager.MoELlamaPy, false }

var _ stepTracer = llamaPyLayers{}

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
func (l llamaPyLayers) eagerTrace() memory.EagerTrace {
	return memory.EagerTrace{Layer: l.code, Error: plan.RegimeError{Frac: EagerOneGPUMemoryError, Source: "plain PyTorch on one GPU, traced: the largest error of measurements/2026-11-27-h100/llamasweep.jsonl's 7 plans that ran"}}
}
