package scale

import (
	"github.com/placer/placer/evaluate/scale/eager"
	"github.com/placer/placer/evaluate/scale/plan"
)

// hfLayers are Hugging Face transformers' layers run eager (hf-eager,
// hf-eager-bf16): LlamaDecoderLayer (5.24, attn_implementation "sdpa")
// as eager PyTorch issues it (LayerHF), and Qwen3MoeSparseMoeBlock as
// 5.24 runs it by default (grouped_mm: MoEHFGrouped) or, with
// grouped-gemm=off (Settings.ExpertLoop), its "eager" loop over the
// experts (MoEHFLoop: two host syncs an expert hit and one more).
type hfLayers struct{ eagerLayers }

var _ eagerStack = hfLayers{}

func (hfLayers) Name() string { return plan.LayersHF }

func (l hfLayers) MoE(c coster) (fwd, bwd phase) {
	impl, loop := l.experts(c.Plan.Run)
	return l.moe(c, impl, loop)
}

func (hfLayers) experts(run plan.Settings) (eager.MoEImpl, bool) {
	if run.ExpertLoop {
		return eager.MoEHFLoop, false
	}
	return eager.MoEHFGrouped, false
}
