package scale

import (
	"math"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph"
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
func (c *coster) qkNorm() (fwd, bwd phase) {
	m := c.M
	if !m.Config.QKNorm || m.MLA() || !c.megatronLayers() {
		return fwd, bwd
	}
	T := float64(c.Plan.TP)
	d := float64(m.HeadDim())
	norm := func(x float64) kernel {
		return kernel{Class: graph.ClassReduction, FLOPs: 4 * x, Read: x * bf16, Writes: x * bf16}
	}
	normB := func(x float64) kernel {
		return kernel{Class: graph.ClassReduction, FLOPs: 6 * x, Read: 2 * x * bf16, Writes: x * bf16}
	}
	q := c.Tokens * float64(m.Heads) / T * d
	k := c.Tokens * float64(m.KVHeads) / T * d
	copyK := kernel{Class: graph.ClassDataMovement, Read: k * bf16, Writes: k * bf16}
	fwd = c.runAll(norm(q), copyK, norm(k))
	bwd = c.runAll(normB(q), normB(k))
	return fwd, bwd
}

// auxLoss is the router's load-balancing loss for nl tokens on one GPU
// with Megatron-Core's fused router (TopKRouter.routing in
// megatron/core/transformer/moe/router.py, moe_router_fusion on), where
// the model balances by an auxiliary loss (Config.AuxLoss > 0; not
// GPT-OSS's, which Megatron-Bridge trains with none). Forward: the
// scores for the loss (moe_utils.py compute_routing_scores_for_aux_loss
// -> Transformer Engine's fused_compute_score_for_moe_aux_loss: the
// logits read, the scores and the routing map written), the tokens per
// expert (get_tokens_per_expert_and_token_count: routing_map.sum(dim=0),
// then an all-reduce of the E counts over the tensor x context group,
// none on one GPU), the loss (switch_load_balancing_loss_func -> TE's
// fused_moe_aux_loss: the scores read by one cluster of 8 blocks into a
// scalar), and attach_and_log_load_balancing_loss's scalars
// (save_to_aux_losses_tracker: loss / coeff and the tracker's add; the
// loss times the token count for MoEAuxLossAutoScaler): 6 kernels.
// Backward: MoEAuxLossAutoScaler.backward's ones_like and multiply, the
// token count's multiply, fused_moe_aux_loss's backward (the scores'
// gradient written), the scores' backward (the logits' gradient
// written), and that gradient's add to the top-k's: 6 kernels. With
// balance forced (moe_router_force_load_balancing: a plan on a
// Megatron stack that states no imbalance and drops no token),
// apply_random_logits's RandomSTE replaces the logits with
// logits.clone().normal_() (2 kernels; its backward passes the gradient
// through). With the router unfused (moe_router_fusion off) the same
// functions run in eager PyTorch (megatron-core 0.16.1 moe_utils.py):
// compute_routing_scores_for_aux_loss(fused=False) is a softmax, a topk,
// zeros_like, .int(), scatter and .bool() (6 kernels for the fused 1)
// and switch_load_balancing_loss_func(fused=False) probs.sum(dim=0), the
// product with the counts, its sum and the scalar factor (4 for 1): 8
// kernels more forward; the backward the same 6 (autograd's nodes of the
// eager ops: a sum's expand, the products' multiplies, the softmax's
// backward). tools/mcoreops/count.py counts these on a CPU (aux_loss
// against none, the same layer: 12 forward, 6 backward, without the
// tracker's add and the per-token multiply, which the MoE layer built
// alone does not run).
func (c *coster) auxLoss(nl float64) (fwd, bwd phase) {
	m := c.M
	if m.Config.AuxLoss <= 0 || m.Config.ModelType == "gpt_oss" || !c.megatronLayers() {
		return fwd, bwd
	}
	E := float64(m.Experts)
	s := nl * E * 4 // an FP32 tensor of nl x E
	ew := func(read, write float64) kernel {
		return kernel{Class: graph.ClassElementwise, FLOPs: nl * E, Read: read, Writes: write}
	}
	scalar := kernel{Class: graph.ClassElementwise, FLOPs: 1, Read: 4, Writes: 4}
	scores := ew(s, s+nl*E) // the scores and the routing map (a bool a score)
	counts := kernel{Class: graph.ClassReduction, FLOPs: nl * E, Read: nl * E, Writes: E * 8}
	loss := kernel{Class: graph.ClassReduction, FLOPs: 2 * nl * E, Read: s, Writes: 4}
	sc, ls := []kernel{scores}, []kernel{loss}
	if c.Plan.Run.UnfusedRouter {
		// softmax, topk (values and int64 indices), zeros_like, .int(),
		// scatter, .bool(); the probabilities' sum over the tokens, its
		// product with the counts, their sum, the scalar factor.
		k := float64(m.TopK)
		sc = []kernel{ew(s, s), ew(s, nl*k*12), ew(0, s), ew(s, s), ew(s, s), ew(s, nl*E)}
		ls = []kernel{ew(s, E*4), ew(E*12, E*4), ew(E*4, 4), ew(4, 4)}
	}
	fwd = c.runAll(append(append(sc, counts), append(ls, scalar, scalar, scalar)...)...)
	fwd = fwd.Plus(c.tpCPReduce(E * 8))
	bwd = c.runAll(scalar, scalar, scalar, ew(4, s), ew(2*s, s), ew(2*s, s))
	if c.Plan.Imbalance <= 1 && c.Plan.Run.Capacity == 0 {
		fwd = fwd.Plus(c.runAll(ew(s, s), ew(0, s)))
	}
	return fwd, bwd
}

// tpCPReduce is an all-reduce of b bytes over the tensor x context
// group (Megatron's tp_cp_group: tensor ranks innermost, then context),
// on the compute stream: nothing with one rank or without collectives.
func (c *coster) tpCPReduce(b float64) phase {
	g := c.Plan.TP * max(1, c.Plan.CP)
	if g <= 1 || c.NoComm {
		return phase{}
	}
	grp := plan.Group{PerNode: g, Nodes: 1}
	if per := c.Pod.PerNode; g > per {
		grp = plan.Group{PerNode: per, Nodes: (g + per - 1) / per}
	}
	ct, _ := c.Pod.Collective(roofline.AllReduce, grp, b)
	return phase{Busy: ct, TPAll: ct, TPExposed: ct, Launches: 1}
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
func (c *coster) quantPadding(rows, nl float64) (fwd, bwd phase) {
	if c.FP8Fwd == 0 || !c.megatronLayers() || c.Plan.Run.ExpertLoop || c.Plan.Run.HybridEP {
		return fwd, bwd
	}
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
	x := rows * float64(c.M.Hidden) * bf16
	pad := kernel{Class: graph.ClassDataMovement, Read: x, Writes: x}
	probs := kernel{Class: graph.ClassDataMovement, Read: rows * bf16, Writes: rows * bf16}
	fwd = c.runAll(pad, probs, pad)
	bwd = c.runAll(pad, pad, probs)
	return fwd, bwd
}
