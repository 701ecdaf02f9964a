package plan

import (
	"fmt"
	"math"
	"strconv"
)

// rank-capacity=F is Megatron-Core's moe_expert_rank_capacity_factor: a
// static token budget for each expert-parallel rank's receive buffer
// under the flex dispatcher's HybridEP backend, what lets a dropless MoE
// layer be captured in a CUDA graph (cuda-graphs=full). Read at
// NVIDIA/Megatron-LM d98e8a6 (2026-08-22):
//
//   - megatron/core/transformer/transformer_config.py
//     moe_expert_rank_capacity_factor: "the per-rank token budget ...
//     With the 'hybridep' backend, tokens exceeding this budget are
//     dropped"; it "requires moe_flex_dispatcher_backend to be 'hybridep'
//     or 'ncclep'" and, with hybridep, use_transformer_engine_op_fuser or
//     moe_use_grouped_tensor (Megatron-Core 0.18.0, Megatron-Bridge
//     0.5.0's pin: hybridep and the op fuser only);
//   - megatron/core/transformer/moe/token_dispatcher.py
//     _HybridEPManager.setup_metadata: budget = int(tokens x
//     moe_router_topk x factor), rounded up to pad_multiple, and
//     num_permuted_tokens = budget, so that dispatch() neither copies the
//     received count to the host nor waits for it ("else: ... HybridEP
//     sizes buffers dynamically (CPU sync in dispatch)");
//   - moe_utils.py get_align_size_for_quantization: 256 "TE's
//     grouped-tensor and fused grouped-MLP kernels require 256-token
//     alignment" (the op fuser the budget needs);
//   - megatron/training/training.py: with the factor set the step runs
//     under PagedStashRunner, which reruns a step whose dispatch went
//     over the budget eagerly without it (paged_stash.py
//     prepare_for_rerun: "go dropless"), so the routing stays dropless.
//
// The transformer_config.py check that refuses graphing a dropless MoE
// layer ("moe cuda graph is only supported with drop-padding MoE")
// reads moe_expert_capacity_factor, not this budget; it asserts on a
// per-layer graph whose scope names moe, and a whole-layer scope (an
// empty cuda_graph_modules) or the full_iteration implementation passes
// it. Placer's cuda-graphs=full is the whole layer graphed.

// RankAlign is the rows a rank's budget is rounded up to:
// get_align_size_for_quantization's 256 under the Transformer Engine op
// fuser the budget requires.
const RankAlign = 256

// rankCapacityKey is the key rank-capacity=F (Keys).
var rankCapacityKey = Key{Name: "rank-capacity", Aliases: []string{"moe-expert-rank-capacity-factor", "moe_expert_rank_capacity_factor"},
	Values: "F", Default: "none", Help: "HybridEP's static receive budget a rank (tokens x top-k x F): a dropless MoE layer CUDA graphs can hold",
	Doc: docStacks, Exports: []string{ExportBridge}, group: groupRest,
	set: func(s *Strategy, v string, _ map[string]bool) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 1 && f <= 64) {
			return fmt.Errorf("%q: want a budget factor from 1 to 64 (the received token copies over the even share)", v)
		}
		s.Software.RankCapacity = f
		return nil
	},
	write: func(s Strategy) string {
		if s.Software.RankCapacity > 0 {
			return strconv.FormatFloat(s.Software.RankCapacity, 'g', -1, 64)
		}
		return ""
	}}

// RankBudget is the receive buffer's rows of one expert-parallel rank
// for nl tokens into its dispatcher a micro-batch, under rank-capacity
// (0 without): int(nl x topk x F) rounded up to RankAlign, as
// _HybridEPManager.setup_metadata sizes num_permuted_tokens.
func (pl *Plan) RankBudget(nl float64, topk int) float64 {
	f := pl.Run.RankCapacity
	if f <= 0 {
		return 0
	}
	b := math.Floor(nl * float64(topk) * f)
	return math.Ceil(b/RankAlign) * RankAlign
}

// checkRankCapacity refuses, in one line, a rank budget the code does
// not run: without HybridEP (the budget is _HybridEPManager's), beside
// capacity routing (drop_and_pad sizes the buffer itself), or below the
// plan's stated imbalance (every step over budget, rerun eager by
// PagedStashRunner: the budget would buy nothing).
func (pl *Plan) checkRankCapacity(written asWritten) error {
	f := pl.Run.RankCapacity
	switch {
	case f == 0:
		return nil
	case !pl.Run.HybridEP:
		return fmt.Errorf("strategy %s: rank-capacity=%g without dispatcher=hybridep: Megatron-Core's moe_expert_rank_capacity_factor is HybridEP's receive budget (\"requires moe_flex_dispatcher_backend to be 'hybridep'\")", written, f)
	case pl.Run.ExpertLoop:
		return fmt.Errorf("strategy %s: rank-capacity=%g with grouped-gemm=off: the budget runs under Transformer Engine's op fuser, whose grouped MLP is one grouped GEMM (\"requires use_transformer_engine_op_fuser\")", written, f)
	case pl.Run.Capacity > 0:
		return fmt.Errorf("strategy %s: rank-capacity=%g with routing=capacity:%g: capacity routing pads every expert to its capacity already; leave one of them", written, f, pl.Run.Capacity)
	case pl.Imbalance > f:
		return fmt.Errorf("strategy %s: rank-capacity=%g below imbalance=%g: the most loaded rank goes over its budget every step and the step is rerun eager (Megatron-Core's PagedStashRunner)", written, f, pl.Imbalance)
	}
	return nil
}
