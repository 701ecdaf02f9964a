package adapters

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// Block is the adapters' parameters of one block of model m on
// one GPU at tensor-parallel degree T: r x (in + out) for each targeted
// layer at its per-GPU widths (transformer.BlockLinearWidths).
func Block(f plan.FineTune, m *transformer.Spec, T int) float64 {
	in, out, _ := transformer.BlockLinearWidths(m, float64(T))
	r := float64(f.LoRARank)
	var p float64
	for i := range in {
		if f.Targets().Has(plan.LoRATargets(1) << i) {
			p += r * (in[i] + out[i])
		}
	}
	return p
}

// LoRA on a model with routed experts, as Megatron-Bridge's PEFT runs it
// (NVIDIA-NeMo/Megatron-Bridge 067f987, src/megatron/bridge/peft/lora.py
// and utils.py). The base is frozen whole: the experts' grouped linear
// layers, the shared experts and the router have no weight gradient.
// Bridge's target_modules names the modules of every block: linear_qkv
// and linear_proj adapt the attention; linear_fc1 and linear_fc2 match
// the dense layers' MLP, the shared experts' (ordinary adapters, the
// "shared_experts" names are not experts: is_expert_linear) and the
// routed experts' grouped linear layers (mlp.experts.linear_fc1/2:
// is_grouped_expert_linear). The router (TopKRouter) is not a default
// target and is left out.
//
// With share_expert_adapters (Bridge's default, True) a grouped expert
// layer gets one ParallelLinearAdapter (is_expert=True) for all the
// local experts of the expert-parallel rank: its two GEMMs run on every
// row the experts' grouped GEMM runs on (the tokens the rank receives,
// concatenated), A of hidden x r and B of r x the layer's output for
// linear_fc1, A of the expert FFN x r and B of r x hidden for
// linear_fc2, the output scaled by alpha / r and added to the grouped
// GEMM's. Its weights are the same on every expert-parallel rank
// (_synchronize_shared_expert_parameters broadcasts them from EP rank
// 0) and kept so by a gradient hook that all-reduces each weight's
// gradient over the expert-parallel group as the backward computes it
// (_allreduce_shared_expert_grad, registered with
// weight.register_hook: every micro-batch), before Megatron-Core's
// expert data-parallel reduction. share_expert_adapters=False
// (GroupedExpertLinearAdapter, one adapter an expert) and
// normalize_moe_lora (rank r / TopK on experts) are not modelled; the
// dense layers' convention for which adapter half is whole on every
// tensor rank (transformer.BlockLinearWidths) holds for the experts' at their expert-tensor
// degree.
//
// The recipes: Qwen3-30B-A3B's LoRA (recipes/qwen/h100/qwen3_moe.py,
// qwen3_30b_a3b_peft_4gpu_h100_bf16_config) adapts the attention only
// (dim 8, alpha 16, target_modules linear_qkv and linear_proj: the
// experts frozen and not adapted), TP 4, EP 4, sequence parallelism,
// 2,048 tokens; GPT-OSS 20B's (recipes/gpt_oss/h100/gpt_oss.py,
// gpt_oss_20b_peft_1gpu_h100_bf16_config) Bridge's LoRA defaults, every
// target, the experts adapted with shared adapters, on one GPU.

// Experts is the parameters of one MoE block's expert
// adapters on one GPU (Bridge's shared adapters: one for all the local
// experts, at expert-tensor degree ETP) and its shared experts' (at
// tensor-parallel degree T), where fc1 and fc2 are targets: r x (in +
// out) of each.
func Experts(f plan.FineTune, m *transformer.Spec, T, ETP int) (routed, shared float64) {
	r := float64(f.LoRARank)
	in, out, _ := transformer.ExpertLinearWidths(m, float64(ETP))
	sin, sout := transformer.SharedExpertLinearWidths(m, float64(T))
	for i, t := range [2]plan.LoRATargets{plan.LoRAFC1, plan.LoRAFC2} {
		if f.Targets().Has(t) {
			routed += r * (in[i] + out[i])
			shared += r * (sin[i] + sout[i])
		}
	}
	return routed, shared
}

// Attention is Block of the attention's targets
// alone (linear_qkv, linear_proj).
func Attention(f plan.FineTune, m *transformer.Spec, T int) float64 {
	g := f
	g.LoRATargets = f.Targets() & (plan.LoRAQKV | plan.LoRAProj)
	if g.LoRATargets == 0 {
		return 0
	}
	return Block(g, m, T)
}

// MoE is the adapters' parameters of one MoE block of model
// m on one GPU: the attention's at tensor-parallel degree T, the routed
// experts' shared adapters at expert-tensor degree ETP and the shared
// experts'.
func MoE(f plan.FineTune, m *transformer.Spec, T, ETP int) float64 {
	routed, shared := Experts(f, m, T, ETP)
	return Attention(f, m, T) + routed + shared
}

// Stage is the adapters' parameters of layers blocks on one
// GPU, dense of them dense blocks (the rest MoE blocks on a model with
// experts), at tensor-parallel degree T and expert-tensor degree ETP.
func Stage(f plan.FineTune, m *transformer.Spec, layers, dense, T, ETP int) float64 {
	if !m.MoE() {
		return float64(layers) * Block(f, m, T)
	}
	return float64(dense)*Block(f, m, T) + float64(layers-dense)*MoE(f, m, T, ETP)
}

// Token is the adapter parameters one token's forward
// multiplies by, summed over model m's blocks (its FLOPs twice this): a
// dense block's adapters; an MoE block's attention adapters, TopK times
// the routed experts' shared adapters (each copy of the token passes
// them) and the shared experts'.
func Token(f plan.FineTune, m *transformer.Spec) float64 {
	L := float64(m.Layers)
	if !m.MoE() {
		return L * Block(f, m, 1)
	}
	dense := float64(m.DenseLayers)
	routed, shared := Experts(f, m, 1, 1)
	moe := Attention(f, m, 1) + float64(m.TopK)*routed + shared
	return dense*Block(f, m, 1) + (L-dense)*moe
}
