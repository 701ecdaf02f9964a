package mechanisms

import (
	"math"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// FP8Padding is Transformer Engine's padding of each local expert's rows
// to the quantized grouped GEMM's alignment (ExpertOutput), on
// Megatron-Core's grouped experts whose GEMMs run in FP8 or FP4, not in
// an expert loop nor under HybridEP. Where capacity routing already
// aligns every expert's rows it adds nothing, though its declaration says it
// applies.
type FP8Padding struct{}

var _ cost.ExpertOutput = FP8Padding{}

// Name is the mechanism's registered name.
func (FP8Padding) Name() string { return "fp8-expert-padding" }

// When is the padding's declaration: grouped experts in FP8 or FP4 on
// Megatron-Core's layers, neither looped nor dispatched by HybridEP.
func (FP8Padding) When() cost.When { return fp8PaddingWhen }

var fp8PaddingWhen = cost.When{
	cost.MoE, cost.FP8, cost.Megatron,
	cost.Not(expertLoop),
	cost.Not(cost.Setting("dispatcher=hybridep", func(st *plan.Settings) bool { return st.HybridEP })),
}

// quantPadding is TEGroupedMLP's padding of each local expert's rows to
// the quantized GEMM's alignment (megatron/core/transformer/moe/
// experts.py: under fp8 or fp4, forward calls quantization_padding on
// the permuted tokens and on their probabilities, and
// quantization_unpadding on the output; Transformer Engine v2.14
// pytorch/module/fp8_padding.py Fp8Padding: 16 rows, 32 under MXFP8,
// returning its input untouched only when every expert's count is
// already aligned, which the random routing of a benchmark leaves to
// chance, so it is counted as run), where the router does not pad the
// counts itself (moe_router_padding_for_quantization, which no Qwen3
// benchmark recipe of Megatron-Bridge v0.2.0 to v0.5.0 sets and placer
// does not model). Each is one fused_multi_row_padding or _unpadding
// kernel over rows x h BF16 (the probabilities: rows, BF16, the
// router's dtype with moe_router_dtype unset), read once and written
// once (the few padded rows left out); the backward of each is the
// other's kernel on the gradient: 3 kernels each way. None in BF16, with
// SequentialMLP (grouped-gemm=off), off Megatron's layers, with the flex
// dispatcher's HybridEP backend (dispatcher=hybridep: HybridEP pads each
// expert's count in its dispatch under fp8 or fp4: token_dispatcher.py
// _HybridEPManager, pad_multiple from get_align_size_for_quantization,
// at b0cc2706, d7288711 and d0b3b775, so the GEMMs' padding finds them
// aligned; DeepEP, dispatcher=flex, does not pad without
// moe_router_padding_for_quantization, so its rows are padded here), and where
// capacity routing pads every expert to an aligned count
// (apply_router_token_dropping with pad_to_capacity: each source rank's
// get_capacity(nl x TopK, E, factor) = ceil(nl x TopK / E x factor)
// rows an expert, EP x ETP of them gathered: 25.09's token-dropping
// rows at 4,096 or 8,192 tokens give 256 or 512, aligned).
func (FP8Padding) ExpertOutput(c *cost.Shard, rows, _, nl float64) (fwd, bwd cost.Phase) {
	if f := c.Plan.Run.Capacity; f > 0 {
		align := 16.0
		if c.Plan.FP8 == plan.FP8MX {
			align = 32
		}
		per := math.Ceil(nl*float64(c.M.TopK)/float64(c.M.Experts)*f) * float64(c.Plan.EP*c.Plan.ETP)
		if math.Mod(per, align) == 0 {
			return fwd, bwd
		}
	}
	x := rows * float64(c.M.Hidden) * cost.BF16
	pad := cost.Kernel{Class: graph.ClassDataMovement, Read: x, Writes: x}
	probs := cost.Kernel{Class: graph.ClassDataMovement, Read: rows * cost.BF16, Writes: rows * cost.BF16}
	fwd = c.RunAll(pad, probs, pad)
	bwd = c.RunAll(pad, pad, probs)
	return fwd, bwd
}
