package memory

import (
	"strings"

	"github.com/placer/placer/planner/plan"
)

// moeActivations is what one MoE block keeps for its backward on one GPU
// for one micro-batch besides its attention's, bytes: the router's FP32
// scores, the block's input, and on the most loaded rank the permuted
// tokens (FC1's input, gathered over the expert-tensor group), FC1's
// output (the activation's input), FC2's input, and for the routing
// weights' gradient either FC2's output (the combine's input) or, where
// the stack applies the weights in the experts' activation
// (probsInActivation), the permuted weights the activation saves; the
// shared experts' as a dense MLP's on the GPU's tokens.
func (c *counter) moeActivations() float64 {
	a, _, _, _ := c.moeActivationParts()
	return a
}

// moeActivationParts is moeActivations' total and three of its parts,
// bytes: the block's input (the norm's output the router and the shared
// experts read), what moe_act frees (FC2's input, the activation's
// output, and a clamped model's clamped copy) and the shared experts'
// activations.
func (c *counter) moeActivationParts() (a, input, mid, shared float64) {
	m, pl := c.m, c.pl
	h, E, k := float64(m.Hidden), float64(m.Experts), float64(m.TopK)
	nl := c.tokens / float64(pl.TP)
	recv := nl * k * pl.LoadFactor()
	if b := pl.RankBudget(nl, m.TopK); b > recv {
		// HybridEP's static receive buffer (rank-capacity=F): every
		// tensor the experts keep has its rows, received or not.
		recv = b
	}
	rows := recv * float64(pl.ETP)
	cols := float64(m.ExpertFFN) / float64(pl.ETP)
	up := cols
	if m.SwiGLU() {
		up = 2 * cols
	}
	in, mid := rows*h*bf16, rows*cols*bf16 // the expert GEMMs' inputs
	if b := c.gemmInputBytes(); b != bf16 {
		// Kept in FP8 (Transformer Engine's GroupedLinear saves each
		// input's column-wise copy: gemmInputBytes).
		in, mid = in/bf16*b, mid/bf16*b
	}
	input = nl * h * bf16
	weights := recv * h * bf16 // FC2's output, which the unpermutation saves
	if probsInActivation(&pl) {
		weights = rows * 4 // the FP32 routing weights the activation saves
	}
	a = nl*E*4 + input + in + rows*up*bf16 + mid + weights
	if m.Config.SwiGLULimit > 0 && pl.Software.Framework() == plan.FrameworkMegatron {
		// GPT-OSS's clamp before the fused activation
		// (fused_bias_geglu.py weighted_bias_quick_geglu_impl, which
		// TEGroupedMLP and SequentialMLP's MLP call): the clamps'
		// backward keeps FC1's output and the activation's function its
		// clamped copy (torch.cat of the clamped halves, saved by
		// WeightedQuickGeGLUFunction), a second rows x up in BF16. Under
		// moe_act the checkpoint keeps FC1's output alone: freed with
		// FC2's input (mid).
		clamped := rows * up * bf16
		a += clamped
		mid += clamped
	}
	if sh := float64(m.SharedExperts) * float64(m.ExpertFFN); sh > 0 {
		shared = nl * sh * (2 + 1) * bf16
		a += shared
	}
	return a, input, mid, shared
}

// probsInActivation is whether plan pl's stack multiplies the routing
// weights into the experts' activation, not into the unpermutation:
// Megatron-Core from core_r0.12.0 (NVIDIA/Megatron-LM 2659630721,
// "Memory efficient token permutation"; core_v0.16.0
// megatron/core/transformer/moe/experts.py: TEGroupedMLP's
// weighted_bias_swiglu_impl and SequentialMLP's
// activation_func_with_probs take permuted_probs, and
// token_dispatcher.py calls unpermute without probs).
// fused_bias_swiglu.py's WeightedSwiGLUFunction saves its input and the
// weights, so FC2's output is freed once combined where before the
// unpermutation kept it for the weights' gradient. The stacks on such a
// release: megatron-core-0.16, and Megatron-Bridge's (v0.1.0rc3 pins
// megatron-core >=0.14.0a0,<0.15.0 and v0.2.0 >=0.15.0a0 in
// pyproject.toml). placer's default stack and model-zoo-moe-dev (a
// moe_dev branch of 2025, its commit unnamed) keep the older count.
func probsInActivation(pl *plan.Plan) bool {
	st := pl.Software.Stack
	return st == "megatron-core-0.16" || strings.HasPrefix(st, "megatron-bridge-")
}
