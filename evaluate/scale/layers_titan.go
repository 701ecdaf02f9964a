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

// titanCompiled is torchtitan's model compiled (compile=on): torch.compile
// wraps each TransformerBlock alone (9dec370
// parallelisms/parallelize_llama.py apply_compile: torch.compile of every
// child of model.layers, fullgraph=True), so the blocks are costed as
// fused kernels (fusedLayers) while the final norm, the output layer and
// the loss run eager as torchtitan writes them (train.py loss_fn:
// cross_entropy of pred.flatten(0, 1).float(), an FP32 copy of the
// logits; loss_parallel at T > 1): eagerOutput of its code.
type titanCompiled struct{ fusedLayers }

func (titanCompiled) Output(c coster) (fwd, bwd phase) { return c.eagerOutput(eager.LayerTitan) }
