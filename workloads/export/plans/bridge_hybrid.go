package plans

import "github.com/placer/placer/graph/transformer"

// bridgeHybridExpertsRecipe is Megatron-Bridge 0.5.0's recipe of a
// Nemotron-H with blocks of experts (transformer.KindExperts: Nemotron 3,
// config.json model_type nemotron_h with n_routed_experts):
// recipes/nemotronh/nemotron_3_nano.py, whose MambaModelProvider has
// the experts' router (sigmoid scores, the expert bias, grouped GEMMs);
// nemotronh_8b's (bridgeFamilyRecipes) has no experts.
const bridgeHybridExpertsRecipe = "nemotron_3_nano"

// bridgeHybridExperts writes what a hybrid with blocks of experts takes
// beyond bridgeModel's shape, as MambaModelProvider's fields (Bridge
// 0.5.0 models/mamba/mamba_provider.py; nemotron_3_nano's values are
// another model's): the layers' pattern (hybrid_layer_pattern, which
// finalize reads the layers from; hybrid_override_pattern is its
// deprecated name), the Mamba-2 mixer's heads, head width, state and
// groups, and the router as the config.json has it
// (moe_router_score_function and moe_router_enable_expert_bias:
// NemotronHTopkRouter's sigmoid and e_score_correction_bias; its
// routed_scaling_factor as moe_router_topk_scaling_factor), as the
// Megatron-LM export writes them (megatronHybrid, megatronModel).
func bridgeHybridExperts(m transformer.Spec, set func(string, any)) {
	set("model.hybrid_layer_pattern", m.Pattern)
	if nm, _, _ := m.Kinds(); nm > 0 {
		s := m.SSM
		set("model.mamba_num_heads", s.Heads)
		set("model.mamba_head_dim", s.HeadDim)
		set("model.mamba_state_dim", s.State)
		set("model.mamba_num_groups", s.Groups)
	}
	c := m.Config
	if c.RouterScore != "" {
		set("model.moe_router_score_function", c.RouterScore)
		set("model.moe_router_enable_expert_bias", c.ExpertBias)
	}
	if c.RouterScale > 0 {
		set("model.moe_router_topk_scaling_factor", c.RouterScale)
	}
}
