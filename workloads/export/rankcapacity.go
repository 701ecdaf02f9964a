package export

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// rank-capacity=F (planner/plan/rankcapacity.go: HybridEP's static
// receive budget, Megatron-Core's moe_expert_rank_capacity_factor) is
// written for Megatron-Bridge only: Bridge 0.5.0 pins Megatron-Core
// 0.18.0, whose TransformerConfig has the field and asks for
// use_transformer_engine_op_fuser beside it ("moe_expert_rank_capacity_factor
// requires use_transformer_engine_op_fuser to be enabled"); the
// Megatron-LM export is Megatron-Core 0.16.1's arguments, which have no
// such flag, so it refuses the key (plan.Key.Exports).

// bridgeRankBudget writes st's rank budget as Megatron-Core 0.18.0's
// fields (bridgeExperts).
func bridgeRankBudget(st plan.Settings, set func(string, any)) {
	if st.RankCapacity > 0 {
		set("model.moe_expert_rank_capacity_factor", st.RankCapacity)
		set("model.use_transformer_engine_op_fuser", true)
	}
}

// wholeLayerGraph is whether cuda-graphs=full over model m's dropless
// MoE layers is written as the whole layer graphed (an empty
// cuda_graph_modules, Megatron-Core 0.18.0 transformer_config.py: "An
// empty list means capturing the whole Transformer layer"), not as the
// attn and moe scopes: the drop-padding check ("moe cuda graph is only
// supported with drop-padding MoE") reads the moe scope and the capacity
// factor, not HybridEP's budget, which is what makes the layer static.
func wholeLayerGraph(m transformer.Spec, st plan.Settings) bool {
	return m.MoE() && st.Graphs == plan.GraphsFull && st.RankCapacity > 0 && st.Capacity == 0
}
