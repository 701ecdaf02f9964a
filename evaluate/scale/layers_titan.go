package scale

import (
	"github.com/placer/placer/evaluate/scale/eager"
	"github.com/placer/placer/evaluate/scale/plan"
)

// titanLayers are torchtitan's layers run eager (torchtitan-0.2 with
// compile=false, its default): its Llama TransformerBlock (9dec370) as
// eager PyTorch issues it (LayerTitan: FSDP2's BF16 weights), and its
// MoE (v0.2.0 torchtitan/models/moe/moe.py: MoETitan, torch._grouped_mm
// over the local experts, one host sync with expert parallelism), with
// grouped-gemm=off its use_grouped_mm=False for-loop over the experts
// (one sync more).
type titanLayers struct{ eagerLayers }

var _ eagerStack = titanLayers{}

func (titanLayers) Name() string { return plan.LayersTitan }

func (l titanLayers) MoE(c coster) (fwd, bwd phase) {
	impl, loop := l.experts(c.pl.Run)
	return l.moe(c, impl, loop)
}

func (titanLayers) experts(run plan.Settings) (eager.MoEImpl, bool) {
	return eager.MoETitan, run.ExpertLoop
}
