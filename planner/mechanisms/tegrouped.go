package mechanisms

import (
	"math"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// TEGroupedGEMM is the experts' grouped GEMM as the plan's stack runs it
// (cost.GroupedGEMM): Transformer Engine's GroupedLinear on a Megatron
// stack (a cuBLAS GEMM an expert over four streams, its FP8 casts split
// by expert), else one grouped GEMM (torch._grouped_mm) at its measured
// efficiency; and SequentialMLP's concatenation of the experts' outputs
// where each expert runs its own GEMMs (grouped-gemm=off). Named among
// what priced a step on a Megatron stack's experts, not in an expert
// loop.
type TEGroupedGEMM struct{}

var _ cost.GroupedGEMM = TEGroupedGEMM{}

// Name is the mechanism's registered name.
func (TEGroupedGEMM) Name() string { return "te-grouped-gemm" }

// When is the grouped GEMM's declaration: experts on Megatron-Core's
// layers, grouped (not looped).
func (TEGroupedGEMM) When() cost.When { return teGroupedWhen }

var (
	teGroupedWhen = cost.When{cost.MoE, cost.Megatron, cost.Not(expertLoop)}
	expertLoop    = cost.Setting("grouped-gemm=off", func(st *plan.Settings) bool { return st.ExpertLoop })
)

// Grouped is g, a grouped GEMM over local experts of rows rows in all
// by n, on shard s (groupedGEMM's).
func (TEGroupedGEMM) Grouped(s *cost.Shard, g cost.Kernel, local, rows, n float64) cost.Kernel {
	return teGrouped{s}.groupedGEMM(g, local, rows, n)
}

// Calls is the GEMMs Transformer Engine's grouped GEMM launches from its
// own loop over local experts on shard s (teGroupedCalls').
func (TEGroupedGEMM) Calls(s *cost.Shard, local float64) float64 {
	return teGrouped{s}.teGroupedCalls(local)
}

// SplitCastCalls is the calls its split FP8 casts add in one direction
// on shard s (splitCastCalls').
func (TEGroupedGEMM) SplitCastCalls(s *cost.Shard, local float64) float64 {
	return teGrouped{s}.splitCastCalls(local)
}

// LoopCat is SequentialMLP's torch.cat of the local experts' outputs,
// rows rows of the model's hidden size (grouped-gemm=off:
// megatron/core/transformer/moe/experts.py): one pass over the rows.
func (TEGroupedGEMM) LoopCat(s *cost.Shard, rows float64) cost.Kernel {
	h := float64(s.M.Hidden)
	return cost.Kernel{Class: graph.ClassDataMovement, Read: rows * h * cost.BF16, Writes: rows * h * cost.BF16}
}

// teGrouped is the shard the experts' grouped GEMM is priced on.
type teGrouped struct{ *cost.Shard }

// groupedGEMM is g, a grouped GEMM over local experts of rows rows in
// all by n, at the grouped GEMM's efficiency against a dense GEMM of its
// FLOPs (Kernels.GroupedEff, its forward shape's for the backward too);
// Transformer Engine's (a Megatron stack's, teGroupedCalls) runs one GEMM
// an expert over four streams (Kernels.GroupedLoopEff).
func (c teGrouped) groupedGEMM(g cost.Kernel, local, rows, n float64) cost.Kernel {
	sd := expertSpread(c.Shard, rows/local, local)
	if c.teGroupedCalls(local) > 0 {
		g.FLOPs /= c.Pod.Kernels.GroupedLoopEffSpread(local, rows/local, sd, n, kernels.TEStreams)
		return g
	}
	g.FLOPs /= c.Pod.Kernels.GroupedEffSpread(local, rows/local, sd, n)
	return g
}

// expertSpread is the standard deviation of one local expert's rows
// about their mean per (a rank's local experts sharing its rows) under
// the force-balanced router (RandomRouting's plans: every token's top-k
// a uniformly random k of E): each of the tokens that could reach an
// expert does so with probability k/E, so its rows are binomial, mean
// per and variance per (1 - k/E), and, the rank's total given, (1 -
// 1/local) of that (local exchangeable counts of a fixed sum). 0 where
// the router is not the random one (forceBalanced), or for one local expert.
func expertSpread(s *cost.Shard, per, local float64) float64 {
	if !forceBalanced(s) || local <= 1 || per <= 0 {
		return 0
	}
	p := float64(s.M.TopK) / float64(s.M.Experts)
	return math.Sqrt(per * (1 - p) * (1 - 1/local))
}

// teGroupedCalls is the GEMMs Transformer Engine's grouped GEMM launches
// from its own loop for one grouped GEMM over local experts: one each
// (Megatron-Core core_v0.16.0 experts.py TEGroupedMLP, whose linear_fc1
// and linear_fc2 are TE's GroupedLinear with m_splits the tokens per
// expert; Transformer Engine v2.8 general_grouped_gemm ->
// nvte_multi_tensor_gemm, which without NVTE_USE_CUTLASS_GROUPED_GEMM
// runs multi_stream_cublas_gemm: a cuBLAS GEMM per expert over four
// compute streams), on a Megatron stack with grouped-gemm on. 0
// elsewhere: torch._grouped_mm (torchtitan) is one launch, and
// SequentialMLP's loop (grouped-gemm=off) counts each expert's GEMMs as
// launches of their own.
func (c teGrouped) teGroupedCalls(local float64) float64 {
	if c.Plan.Software.Framework() != plan.FrameworkMegatron || c.Plan.Run.ExpertLoop {
		return 0
	}
	return local
}

// splitCastCalls is the calls Transformer Engine's grouped GEMM adds to
// the FP8 casts of its two inputs in one direction (casts' launches, one
// or two each: the forward's FC1 and FC2 inputs, the backward's two
// output gradients): GroupedLinear quantizes each expert's rows apart
// (v2.8 module/grouped_linear.py tex.split_quantize; csrc/extensions/
// cast.cpp multi_tensor_quantize_impl: one fused kernel for every split
// only under delayed scaling, else each quantizer's quantize in a loop;
// the same in v2.18, whose grouped quantize and cuBLASLt grouped GEMM
// run only with NVTE_GROUPED_LINEAR_USE_FUSED_GROUPED_GEMM=1, and whose
// split_quantize fuses NVFP4's), so local - 1 more per input. 0 in BF16,
// under delayed scaling and NVFP4, and off Transformer Engine's grouped
// GEMM (teGroupedCalls).
func (c teGrouped) splitCastCalls(local float64) float64 {
	if c.FP8Fwd == 0 || c.Plan.FP8 == plan.FP8Delayed || c.Plan.FP8 == plan.FP4NV || c.teGroupedCalls(local) == 0 {
		return 0
	}
	per := 1.0
	if AmaxFirst(c.Plan.FP8) {
		per = 2
	}
	return 2 * (local - 1) * per
}
