package families

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
)

// What Megatron-Core runs for Qwen3-MoE's settings beyond the layer
// placer costs elsewhere: the queries' and keys' RMS norms per head
// (qk_layernorm) and the router's load-balancing loss (aux_loss), with
// the random logits of a benchmark that forces balanced routing. Read
// from the code the published rows ran: Megatron-Bridge v0.2.0 (NeMo
// 25.11) pins Megatron-LM 0d8e0714, v0.3.0 (26.02) b0cc2706, v0.4.0
// (26.04) d7288711, v0.5.0 (26.06) d0b3b775; the functions named below
// are quoted from d7288711 and do the same at each. Bridge's Qwen3-MoE
// provider sets qk_layernorm=True, moe_router_load_balancing_type
// "aux_loss" and moe_aux_loss_coeff 1e-3 (v0.2.0
// src/megatron/bridge/models/qwen/qwen_provider.py
// Qwen3MoEModelProvider; v0.4.0 qwen3_moe_bridge.py provider_bridge);
// its benchmark scripts set moe_router_fusion=True and
// moe_router_force_load_balancing=True (scripts/performance/configs/
// qwen3/qwen3_llm_pretrain.py set_qwen3_common_configs, v0.2.0 to
// v0.5.0; "required for token dropless"), and the model zoo's
// (yanring/Megatron-MoE-ModelZoo model_configs/benchmarking/
// Qwen3-235B-A22B.yaml: aux_loss, 1e-3, --moe-router-fusion;
// best_practice/Qwen3/run_235b.sh at b0b92ff:
// --moe-router-force-load-balancing) the same.

// QKNorm is the RMS norms of a layer's queries and keys per head
// (Attention), on Megatron-Core's layers of a model that has them
// (Config.QKNorm: Qwen3's) without latent attention.
type QKNorm struct{}

var _ cost.AttentionKernels = QKNorm{}

// Name is the trait's registered name.
func (QKNorm) Name() string { return "qk-norm" }

// When is the norms' declaration: a model with them (not MLA's) on
// Megatron-Core's layers.
func (QKNorm) When() cost.When { return qkNormWhen }

var qkNormWhen = cost.When{
	cost.Model("qk-norm", func(m *transformer.Spec) bool { return m.Config.QKNorm }),
	cost.Not(mla), cost.Megatron,
}

// qkNorm is the RMS norms of this GPU's queries and keys, over each
// head's width, where the model has them (Config.QKNorm: Qwen3's) on
// Megatron-Core's layers. SelfAttention.get_query_key_value_tensors
// (megatron/core/transformer/attention.py) splits the projection's
// output and runs q_layernorm on the queries and k_layernorm on the
// keys, each a TENorm of hidden_size_per_attention_head
// (gpt_layer_specs.py: qk_norm, Transformer Engine's RMSNorm under
// normalization "RMSNorm"). Transformer Engine v2.14's RMSNorm
// (pytorch/ops/basic/rmsnorm.py op_forward) takes input_.contiguous():
// the keys, a slice of the split, are copied first (the queries are
// already a copy: their reshape to heads cannot view the split's
// strides), then rmsnorm_fwd reads and writes each tensor once. Its
// op_backward runs rmsnorm_bwd: the output gradient and the input read,
// the input gradient written (the weight's gradient, a head's width,
// reduced inside it). Forward 3 kernels, backward 2. Off Megatron's
// layers (torchtitan's and transformers' Qwen3 blocks were not read
// here) and with latent attention (DeepSeek's norms are its latents')
// none.
func (QKNorm) Attention(c *cost.Shard) (fwd, bwd cost.Phase) {
	m := c.M
	T := float64(c.Plan.TP)
	d := float64(m.HeadDim())
	norm := func(x float64) cost.Kernel {
		return cost.Kernel{Class: graph.ClassReduction, FLOPs: 4 * x, Read: x * cost.BF16, Writes: x * cost.BF16}
	}
	normB := func(x float64) cost.Kernel {
		return cost.Kernel{Class: graph.ClassReduction, FLOPs: 6 * x, Read: 2 * x * cost.BF16, Writes: x * cost.BF16}
	}
	q := c.Tokens * float64(m.Heads) / T * d
	k := c.Tokens * float64(m.KVHeads) / T * d
	copyK := cost.Kernel{Class: graph.ClassDataMovement, Read: k * cost.BF16, Writes: k * cost.BF16}
	fwd = c.RunAll(norm(q), copyK, norm(k))
	bwd = c.RunAll(normB(q), normB(k))
	return fwd, bwd
}
