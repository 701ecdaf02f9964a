package families

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// What Megatron-Core runs eagerly, outside its fused kernels, for a
// layer with GPT-OSS's settings: the clamp of the experts' GLU
// (activation_func_clamp_value), the experts' output biases
// (add_bias_linear with TEGroupedMLP), the attention output's bias
// without bias_dropout_fusion, and YaRN's rotary embedding. Each is read
// from the code the published rows ran: Megatron-Bridge v0.2.0 (NeMo
// 25.11) pins Megatron-LM 0d8e0714 (core_v0.16.0~4), v0.3.0 (26.02)
// b0cc2706, v0.5.0 (26.06) d0b3b775 (core_v0.18.0~8); the functions
// named below do the same at each.
// Megatron-Bridge's GPTOSSProvider (src/megatron/bridge/models/gpt_oss/
// gpt_oss_provider.py, v0.2.0 to v0.3.1; from v0.4.0 to v0.5.0
// gpt_oss_bridge.py's provider_bridge) sets add_bias_linear=True,
// activation_func=quick_gelu, glu_linear_offset=1.0,
// activation_func_clamp_value=7.0, bias_activation_fusion=True,
// bias_dropout_fusion=False, position_embedding_type="yarn". The op
// sequences were checked with torch's profiler on a CPU (torch 2.11):
// each count below is the ATen kernels it recorded, forward and
// backward.

// YaRNRope is YaRN's unfused rotary embedding in a layer's attention
// (Attention: yarnRope's rule below), on Megatron-Core's layers of a
// model whose rope scaling is YaRN's (GPT-OSS's) without latent
// attention.
type YaRNRope struct{}

// LinearBias is the linear layers' biases Megatron-Core adds outside its
// fused kernels (add_bias_linear: GPT-OSS's): the attention output's
// (Attention) and the experts' (ExpertOutput), on its layers with
// experts, not in an expert loop.
type LinearBias struct{}

// SwiGLUClamp is the clamp of the experts' GLU input (ExpertActivation),
// on Megatron-Core's layers of a model with experts that clamps it
// (Config.SwiGLULimit: GPT-OSS's).
type SwiGLUClamp struct{}

var (
	_ cost.AttentionKernels = YaRNRope{}
	_ cost.AttentionKernels = LinearBias{}
	_ cost.ExpertOutput     = LinearBias{}
	_ cost.ExpertActivation = SwiGLUClamp{}
)

// Name is the trait's registered name.
func (YaRNRope) Name() string { return "yarn-rope" }

// When is the rope's declaration: YaRN's (not MLA's) on Megatron-Core's
// layers, run unfused.
func (YaRNRope) When() cost.When { return yarnWhen }

var (
	yarnWhen = cost.When{
		cost.Model("rope-scaling=yarn", func(m *transformer.Spec) bool { return m.Config.RopeScaling == "yarn" }),
		cost.Not(mla), cost.Megatron,
	}
	mla = cost.Model("mla", func(m *transformer.Spec) bool { return m.MLA() })
)

// Name is the trait's registered name.
func (LinearBias) Name() string { return "linear-bias" }

// When is the biases' declaration: linear biases added outside their
// fused kernels, the experts' where a GPU holds one at least (grouped,
// on Megatron-Core's layers).
func (LinearBias) When() cost.When { return biasWhen }

var biasWhen = cost.When{
	cost.Model("linear-bias", func(m *transformer.Spec) bool { return m.Config.LinearBias }),
	cost.MoE, cost.Megatron,
	cost.Not(cost.Setting("grouped-gemm=off", func(st *plan.Settings) bool { return st.ExpertLoop })),
}

// Name is the trait's registered name.
func (SwiGLUClamp) Name() string { return "swiglu-clamp" }

// When is the clamp's declaration: experts that clamp their GLU input,
// on Megatron-Core's layers.
func (SwiGLUClamp) When() cost.When { return clampWhen }

var clampWhen = cost.When{
	cost.Model("swiglu-limit>0", func(m *transformer.Spec) bool { return m.Config.SwiGLULimit > 0 }),
	cost.MoE, cost.Megatron,
}

// gluClamp is the clamp of the experts' GLU input before its fused
// activation, for rows tokens of cols columns a half (e elements), when
// the model clamps it (Config.SwiGLULimit: GPT-OSS's swiglu_limit 7.0,
// Bridge's activation_func_clamp_value). TEGroupedMLP.forward with
// bias_activation_fusion calls weighted_bias_quick_geglu_impl
// (megatron/core/fusions/fused_bias_geglu.py; so does mlp.py's MLP, which
// SequentialMLP runs per expert), whose activation is one
// compiled kernel (jit_fuser is torch.compile: megatron/core/jit.py) but
// whose clamp runs before it in eager PyTorch: input.chunk(2, -1), the
// gate half clamp(max=v), the linear half clamp(min=-v, max=v), and
// torch.cat of the two. Forward: the two clamps (each reads and writes
// e BF16 elements) and the cat (2e each way): 3 kernels. Backward (the
// cat's is a narrow, no kernel): the gate's clamp_backward a comparison
// (e BF16 in, e bools out) and a where (mask and gradient in, e out),
// the linear half's two comparisons, a logical_and and a where, then
// the chunk's backward concatenating the two gradients (2e each way): 7
// kernels. Its activation itself, with the probabilities' multiply, is
// moe()'s actFn (one kernel each way, as before).
func (SwiGLUClamp) ExpertActivation(c *cost.Shard, rows, cols float64) (fwd, bwd cost.Phase) {
	e := rows * cols
	ew := func(read, write float64) cost.Kernel {
		return cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: read, Writes: write}
	}
	clamp := ew(e*cost.BF16, e*cost.BF16)
	cat := ew(2*e*cost.BF16, 2*e*cost.BF16)
	cmp := ew(e*cost.BF16, e)               // x <= v: a bool a element
	and := ew(2*e, e)                       // two masks into one
	where := ew(e+e*cost.BF16, e*cost.BF16) // the mask and the gradient
	fwd = c.RunAll(clamp, clamp, cat)
	bwd = c.RunAll(cmp, where, cmp, cmp, and, where, cat)
	return fwd, bwd
}

// expertBias is TEGroupedMLP._apply_bias (megatron/core/transformer/
// moe/experts.py): the experts' FC2 is built with skip_bias_add=True, so
// its bias is added after the GEMM in eager PyTorch, expert by expert:
// the rows split by expert, t + b * p for each (the bias scaled by each
// row's routing probability: a multiply to rows_e x h and an add), and
// torch.cat of the results, then .to(dtype) (a no-op: the probabilities
// are BF16, the router's dtype with moe_router_dtype unset, which no
// GPT-OSS recipe sets). Forward, for rows received and local experts:
// per expert 2 kernels, and one cat of rows x h each way. Backward
// (autograd of the same): per expert the multiply's two gradients (the
// output gradient times p, summed over the rows for the bias; times b,
// summed over h for the probability): 2 multiplies and 2 reductions,
// then the splits' backward concatenating the rows' gradients (rows x h)
// and the probabilities' (rows). FC1's bias is added by the grouped
// GEMM's epilogue (skip_bias_add=False; TransformerEngine v2.9
// pytorch/module/grouped_linear.py: use_bias into general_grouped_gemm,
// its gradient from the weight-gradient GEMM's epilogue in BF16), at
// no cost placer counts.
func (LinearBias) ExpertOutput(c *cost.Shard, rows, local, _ float64) (fwd, bwd cost.Phase) {
	if local < 1 {
		return fwd, bwd
	}
	h := float64(c.M.Hidden)
	re := rows / local // one expert's rows
	o := re * h        // one expert's outputs
	ew := func(read, write float64) cost.Kernel {
		return cost.Kernel{Class: graph.ClassElementwise, FLOPs: o, Read: read, Writes: write}
	}
	red := func(read, write float64) cost.Kernel {
		return cost.Kernel{Class: graph.ClassReduction, FLOPs: o, Read: read, Writes: write}
	}
	scaled := ew(re*cost.BF16+h*cost.BF16, o*cost.BF16) // b * p
	add := ew(2*o*cost.BF16, o*cost.BF16)               // t + b*p
	cat := cost.Kernel{Class: graph.ClassDataMovement, Read: rows * h * cost.BF16, Writes: rows * h * cost.BF16}
	fwd = cost.Scale(c.RunAll(scaled, add), local).Plus(c.Run(cat))
	gradB := ew(o*cost.BF16+re*cost.BF16, o*cost.BF16) // gradient x p
	sumB := red(o*cost.BF16, h*cost.BF16)              // over the rows: the bias's gradient
	gradP := ew(o*cost.BF16+h*cost.BF16, o*cost.BF16)  // gradient x b
	sumP := red(o*cost.BF16, re*cost.BF16)             // over h: the probability's gradient
	probsCat := cost.Kernel{Class: graph.ClassDataMovement, Read: rows * cost.BF16, Writes: rows * cost.BF16}
	bwd = cost.Scale(c.RunAll(gradB, sumB, gradP, sumP), local).Plus(c.RunAll(cat, probsCat))
	return fwd, bwd
}

// projBias is the attention output projection's bias where Megatron-Core
// cannot fuse it into the bias-dropout-add: a model with biases and
// grouped experts (TEGroupedMLP asserts that bias_dropout_fusion is off
// with add_bias_linear; Bridge's GPTOSSProvider sets it False). The
// projection returns its bias (skip_bias_add=True), and the unfused
// bias_dropout_add (megatron/core/fusions/fused_bias_dropout.py
// _bias_dropout_add_func) adds it in a kernel of its own (x + bias; the
// dropout at p 0 returns its input) before the residual's add, which
// placer already counts. Backward: the bias's gradient, a reduction of
// the output gradient over the rows. The query/key/value projection's
// bias is in its GEMM's epilogue (skip_bias_add=False).
func (LinearBias) Attention(c *cost.Shard) (fwd, bwd cost.Phase) {
	m := c.M
	h := float64(m.Hidden)
	e := c.Tokens * h * c.SP()
	fwd = c.Run(cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: e*cost.BF16 + h*cost.BF16, Writes: e * cost.BF16})
	bwd = c.Run(cost.Kernel{Class: graph.ClassReduction, FLOPs: e, Read: e * cost.BF16, Writes: h * cost.BF16})
	return fwd, bwd
}

// yarnRope is the rotary embedding of this GPU's queries and keys where
// Megatron-Core runs it unfused: YaRN (Config.RopeScaling "yarn" on
// attention without latents). apply_rotary_pos_emb
// (megatron/core/models/common/embeddings/rope_utils.py) takes TE's fused
// RoPE only with apply_rope_fusion, and not with an mscale other than 1
// ("mscale ... is not supported by TE's fused RoPE"), which YaRN's
// factor 32 gives; Megatron-Bridge's validate_rope_fusion_compatibility
// (src/megatron/bridge/utils/fusions.py) also turns the fusion off for
// any position_embedding_type but "rope". The unfused
// _apply_rotary_pos_emb_bshd runs, for each of Q and K (x elements, s x
// d frequencies in FP32 for s positions): cos and sin of the
// frequencies, each times mscale and cast to BF16 (6 small kernels);
// t * cos, _rotate_half's negation of one half and cat, times sin, the
// add, and the final cat with the (empty) unrotated part: 6 kernels over
// x (the negation over x/2). Backward: the two multiplies, the negation
// (x/2), the chunk's cat, the two gradients' add, and the slice's
// backward (zeros and a copy into them): 7 kernels.
func (YaRNRope) Attention(c *cost.Shard) (fwd, bwd cost.Phase) {
	m := c.M
	T := float64(c.Plan.TP)
	d := float64(m.HeadDim())
	sd := float64(m.Seq) / float64(max(1, c.Plan.CP)) * d
	ew := func(x, read, write float64) cost.Kernel {
		return cost.Kernel{Class: graph.ClassElementwise, FLOPs: x, Read: read, Writes: write}
	}
	trig := ew(sd, sd*4, sd*4) // cos or sin
	scale := ew(sd, sd*4, sd*4)
	cast := ew(sd, sd*4, sd*cost.BF16)
	for _, heads := range []float64{float64(m.Heads) / T, float64(m.KVHeads) / T} {
		x := c.Tokens * heads * d
		b := x * cost.BF16
		mul := ew(x, b+sd*cost.BF16, b)
		neg := ew(x/2, b/2, b/2)
		cat := ew(x, b, b)
		add := ew(x, 2*b, b)
		zeros := ew(x, 0, b)
		fwd = fwd.Plus(c.RunAll(trig, scale, cast, trig, scale, cast, mul, neg, cat, mul, add, cat))
		bwd = bwd.Plus(c.RunAll(mul, neg, cat, mul, add, zeros, cat))
	}
	return fwd, bwd
}
