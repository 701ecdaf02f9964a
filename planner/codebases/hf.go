package codebases

import (
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/eager"
	"github.com/placer/placer/planner/plan"
)

// HF are Hugging Face transformers' layers run eager (hf-eager,
// hf-eager-bf16): LlamaDecoderLayer (5.24, attn_implementation "sdpa")
// as eager PyTorch issues it (LayerHF), and Qwen3MoeSparseMoeBlock as
// 5.24 runs it by default (grouped_mm: MoEHFGrouped) or, with
// grouped-gemm=off (Settings.ExpertLoop), its "eager" loop over the
// experts (MoEHFLoop: two host syncs an expert hit and one more).
type HF struct{ Eager }

var _ EagerStack = HF{}

func (HF) Name() string { return plan.LayersHF }

// When is transformers' declaration: a stack run eager whose layers are
// its.
func (HF) When() cost.When { return hfWhen }

var hfWhen = cost.When{eagerLayers, cost.Setting("layers=transformers", func(st *plan.Settings) bool { return st.Layers == plan.LayersHF })}

func (l HF) MoE(b cost.Blocks) (fwd, bwd phase) {
	c := b.Base()
	impl, loop := l.Experts(c.Plan.Run)
	return l.MoEWith(b, impl, loop)
}

func (HF) Experts(run plan.Settings) (eager.MoEImpl, bool) {
	if run.ExpertLoop {
		return eager.MoEHFLoop, false
	}
	return eager.MoEHFGrouped, false
}
