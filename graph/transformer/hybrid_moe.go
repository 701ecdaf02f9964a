package transformer

import (
	"fmt"
	"strings"
)

// A hybrid's layers of experts (Nemotron 3: transformers 5.24.0's
// NemotronHConfig, layers_block_type "moe", hybrid_override_pattern
// 'E'): each block an RMS norm, a router and the experts, and the
// residual (transformers v5.24.0
// src/transformers/models/nemotron_h/modeling_nemotron_h.py: NemotronHBlock
// of block_type "moe" is a NemotronHMoE): NemotronHTopkRouter's weight
// (n_routed_experts x hidden; its e_score_correction_bias is a buffer,
// no parameter), NemotronHExperts' up_proj and down_proj
// (n_routed_experts x moe_intermediate_size x hidden each: squared-ReLU
// experts without a gate, as the model's MLP), and shared_experts, a
// NemotronHMLP of moe_shared_expert_intermediate_size (read as
// Spec.SharedExperts experts of ExpertFFN). The latent projections
// (moe_latent_size) are refused where set.
const KindExperts = 'E' // a block of experts (no attention in its block)

// expertLayers is how many of a hybrid m's layers are blocks of experts.
func expertLayers(m Spec) int { return strings.Count(m.Pattern, string(KindExperts)) }

// hybridExpertParams is one of a hybrid m's blocks of experts: its norm,
// its router, every routed expert and the shared ones.
func hybridExpertParams(m Spec) int64 {
	return int64(m.Hidden) + RouterParams(m) + int64(m.Experts+m.SharedExperts)*ExpertParams(m)
}

// hybridExpertFLOPs is one token's forward matmul FLOPs through one of a
// hybrid m's blocks of experts: its TopK routed and its shared experts'
// (the router's left out, as Megatron-LM leaves it: moeMatmulFLOPs).
func hybridExpertFLOPs(m Spec) float64 { return moeMatmulFLOPs(m) }

// checkHybridExperts reports the first inconsistency between a hybrid
// m's blocks of experts and its experts' shape: experts without an E
// layer or E layers without experts, or dense_layers (a hybrid's
// pattern says which layers are dense).
func checkHybridExperts(m Spec) error {
	e := expertLayers(m)
	switch {
	case e > 0 && !m.MoE():
		return fmt.Errorf("pattern=%s: %d layers of experts (E) without experts", m.Pattern, e)
	case e == 0 && m.MoE():
		return fmt.Errorf("experts=%d with pattern=%s: no layer of experts (E)", m.Experts, m.Pattern)
	case m.DenseLayers > 0:
		return fmt.Errorf("dense_layers=%d with pattern=%s: the pattern says which layers have experts", m.DenseLayers, m.Pattern)
	}
	return nil
}
