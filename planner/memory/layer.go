package memory

import (
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// layerMemory is what stageMemory's stages of one tensor-parallel degree
// share, bytes for one micro-batch: one layer's activations (a block's
// of the model's kind, and in a model with experts a dense block's
// before them), a block's without recomputation (a prediction module's:
// Step.Prediction), and the input a recomputing layer keeps; under torchtitan's per-op
// checkpointing, what one block's recomputed forward holds; kept, what
// of a layer's activations CPU offload leaves on the GPU (recipe.go).
type layerMemory struct{ perLayer, perDense, wholeBlock, layerInput, recomputing, kept float64 }

// layerMemory is c's layerMemory (stageMemory's), computed once for all
// the stages of its degree.
func (c *counter) layerMemory() layerMemory {
	if c.m.Hybrid() {
		return c.hybridMemory() // mixers.go
	}
	if c.m.Mixed() {
		return c.mixerMemory() // mixers.go
	}
	m, pl := &c.m, &c.pl
	T := float64(pl.TP)
	n, h := c.tokens, float64(m.Hidden)
	heads := float64(m.Heads)
	unit := n * h // s b h
	in := c.gemmInputBytes()
	attn, mlp, replicated := blockUnits(m, in, !c.dropoutFree(), c.attention)
	if pl.FP8 != "" && !pl.Titan() && !pl.Run.Eager {
		attn += in * projFP8Input(m, c.attention != nil)
	}
	// The recipe's FP8 attention, FP8 activation storage, LoRA's frozen
	// base (recipe.go).
	attn, mlp, replicated, rb := c.recipeBlock(attn, mlp, replicated, in)
	norms := 2 * float64(m.NormsPerBlock()) // the norms' inputs: two, or Gemma's four
	perLayer := (norms + attn + mlp) * unit
	perDense := perLayer // a dense block's in a model with experts
	switch {
	case m.MoE():
		// Attention as a dense block's (sequence-parallel where T > 1:
		// Resolve requires it); the experts' on this GPU's tokens
		// (moeActivations). Its dense blocks before the experts, all of
		// their activations sequence-parallel likewise.
		perLayer = (norms+attn)*unit/T + c.moeActivations()
		perDense /= T
	case pl.SequenceParallel:
		perLayer /= T
	case pl.TP > 1:
		perLayer = replicated*unit + (norms+attn+mlp-replicated)*unit/T
	}
	if pl.Titan() && !m.MoE() {
		perLayer += c.titanBlockExtra()
		perDense = perLayer
	}
	if rb.whole > 0 {
		perLayer += rb.whole * unit
		perDense = perLayer
	}
	kept := rb.whole*unit + (rb.kept+rb.masks)*unit*c.sp()
	if !pl.SequenceParallel && pl.TP > 1 {
		kept = rb.whole*unit + rb.kept*unit/T + rb.masks*unit
	}
	wholeBlock := perLayer // a prediction module's block: not recomputed
	mods := pl.Recomputes()
	if mods.Has(plan.RecomputeCoreAttn) {
		// The attention output, recomputed.
		out := 2 * unit / T
		if c.attention != nil {
			out = c.attention.OutputUnits(*m) * unit / T
		}
		perLayer -= out
		perDense -= out
	} else if c.pod.Kernels.UnfusedAttention && pl.CP <= 1 && !pl.Titan() {
		// Unfused attention's softmax output, dropout mask and dropout
		// output, 5 bytes a score (Korthikanti's 5 a s / h). Not under
		// torchtitan, whose attention is scaled_dot_product_attention
		// (models/llama/model.py), flash attention on A100 and H100
		// alike: a pod's unfused kernels stand for its time only.
		perLayer += 5 * n * heads / T * float64(m.Seq)
		perDense += 5 * n * heads / T * float64(m.Seq)
	}
	if mods&^plan.RecomputeCoreAttn != 0 {
		// The other modules selective recomputation names.
		perLayer -= c.recomputeSaved(m.MoE())
		perDense -= c.recomputeSaved(false)
	}
	var recomputing float64
	if pl.Titan() && pl.Recompute == plan.SelectiveRecompute && !m.MoE() {
		// One block's forward recomputed before its backward holds
		// what the block keeps without recomputation.
		recomputing = perLayer
		perLayer = c.titanOpSAC()
		perDense = perLayer
	}
	layerInput := 2 * unit
	if pl.SequenceParallel {
		layerInput /= T
	}
	return layerMemory{perLayer: perLayer, perDense: perDense, wholeBlock: wholeBlock, layerInput: layerInput, recomputing: recomputing, kept: kept}
}

// titanBlockExtra is what a torchtitan block keeps for its backward
// beyond layerMemory's Megatron-Core count, bytes for one micro-batch
// on one GPU
// (pytorch/torchtitan at 9dec370):
//   - with sequence parallelism, its attention's and its MLP's inputs
//     whole: apply_tp (parallelize_llama.py) gives attention and
//     feed_forward PrepareModuleInput(input_layouts Shard(1),
//     desired_input_layouts Replicate()), so the norms' outputs are
//     all-gathered before wq, wk, wv and w1, w3, which save the
//     gathered tensor (Megatron-Core saves the sequence-parallel shard
//     and gathers it again in the backward). 2 units each, 1 with
//     Float8 (Float8ColwiseParallel casts to float8 before the
//     all-gather, and the float8 matmul saves its float8 input);
//   - with fewer key/value heads than heads, the keys and values
//     scaled_dot_product_attention saves at every head: Attention.forward
//     (models/llama/model.py) calls repeat_kv on them before it, a
//     copy of heads/kv_heads times the projections' outputs.
func (c *counter) titanBlockExtra() float64 {
	m, pl := &c.m, &c.pl
	T := float64(pl.TP)
	unit := c.tokens * float64(m.Hidden)
	var extra float64
	if pl.TP > 1 && pl.SequenceParallel {
		in := 2.0 + 2 // the attention's and the MLP's gathered inputs
		if plan.KeepsFP8Inputs(pl.FP8) {
			in = 1 + 1
		}
		extra += in * unit * (1 - 1/T)
	}
	if kv, heads := float64(m.KVHeads), float64(m.Heads); kv > 0 && kv < heads {
		d, h := float64(m.HeadDim()), float64(m.Hidden)
		extra += 2 * 2 * (heads - kv) * d / h * unit / T
	}
	return extra
}

// titanOpSAC is one block's activations under torchtitan's selective
// per-op checkpointing (selective_ac_option "op"; pytorch/torchtitan
// torchtitan/parallelisms/parallelize_llama.py at 9dec370: _save_list
// and _get_custom_policy), bytes for one micro-batch on one GPU: the
// checkpoint keeps the block's input, and the policy the outputs of the
// flash attention (its output, BF16, and its log-sum-exp, FP32 a head
// and token), of the reduce-scatters (sequence parallelism's, one after
// the attention and one after the MLP) and of every other matmul of
// the block, counted in its order: wq, wk, wv, wo, w1, w3, w2 (the 1st,
// 3rd, 5th and 7th kept: wq's, wv's, w1's and w2's outputs, each on
// this GPU's shard; w2's row-parallel output whole before its
// reduction). Float8Linear's matmul is aten.mm too (the policy sees it
// before torchao's subclass dispatches it), so Float8 counts alike.
// The rest is recomputed.
func (c *counter) titanOpSAC() float64 {
	m, pl := &c.m, &c.pl
	T := float64(pl.TP)
	h, f := float64(m.Hidden), float64(m.FFN)
	heads, kv, d := float64(m.Heads), float64(m.KVHeads), float64(m.HeadDim())
	units := 2*c.sp() + // the block's input
		2*heads*d/h/T + 2*kv*d/h/T + // wq's and wv's outputs
		2*heads*d/h/T + 4*heads/h/T + // the attention's output and log-sum-exp
		2*f/h/T + 2 // w1's output, w2's
	if pl.TP > 1 && pl.SequenceParallel {
		units += 2 * 2 / T // the two reduce-scatters' outputs
	}
	return units * c.tokens * h
}

// recomputeSaved is the bytes of one block's activations (an MoE
// block's with moe, else a dense block's) that selective
// recomputation's modules other than the core attention free, for one
// micro-batch on one GPU (layerMemory's): a family's attention's
// (Attention.RecomputeFreed); layernorm the output of the norms that are
// modules of their own (an MoE block's norm before its experts: the
// experts' input); mlp a
// dense MLP's saved tensors but the dropout mask (FC1's input, the
// activation's input, FC2's input; its checkpoint keeps the block's
// residual, counted as the norm's input); moe everything moeActivations
// counts but the experts' input; moe_act FC2's input (the activation's
// output); shared_experts the shared experts'. Held while one layer
// recomputes: not counted (a few of its tensors, not the stage's).
func (c *counter) recomputeSaved(moe bool) float64 {
	m, pl := &c.m, &c.pl
	mods := pl.Recomputes()
	T := float64(pl.TP)
	unit := c.tokens * float64(m.Hidden) // s b h
	in := c.gemmInputBytes()
	// rep units replicated over the tensor group without sequence
	// parallelism, shard units split over it.
	split := func(rep, shard float64) float64 {
		if pl.SequenceParallel {
			return (rep + shard) * unit / T
		}
		return rep*unit + shard*unit/T
	}
	var saved float64
	if c.attention != nil {
		for _, p := range c.attention.RecomputeFreed(*m, mods, in) {
			saved += split(p[0], p[1])
		}
	}
	if moe {
		a, input, mid, shared := c.moeActivationParts()
		if mods.Has(plan.RecomputeLayerNorm) {
			saved += input
		}
		switch {
		case mods.Has(plan.RecomputeMoE):
			saved += a - input // its checkpoint keeps the input
		default:
			if mods.Has(plan.RecomputeMoEAct) {
				saved += mid
			}
			if mods.Has(plan.RecomputeSharedExperts) {
				saved += shared
			}
		}
		return saved
	}
	if mods.Has(plan.RecomputeMLP) {
		_, mlp, _ := blockUnits(m, in, !c.dropoutFree(), c.attention)
		fc1In, mask := in, 1.0 // FC1's input (FP8: one byte), the dropout mask (SwiGLU's block has none)
		if m.SwiGLU() || m.Act == "relu2" || c.dropoutFree() {
			mask = 0
		}
		saved += split(fc1In, mlp-mask-fc1In)
	}
	return saved
}

// blockUnits is what one block keeps for its backward in units of s b h
// bytes (layerMemory's), before any split over the tensor group: its
// attention's, its MLP's, and of both what stays replicated over the
// tensor group without sequence parallelism; in the bytes an element of
// a GEMM's saved input takes (gemmInputBytes': 2 in BF16, 1 in FP8),
// dropout whether the block has a hidden dropout (dropoutFree), at a
// family's attention in place of the block's own (nil: the block's own).
func blockUnits(m *transformer.Spec, in float64, dropout bool, at Attention) (attn, mlp, replicated float64) {
	h, f := float64(m.Hidden), float64(m.FFN)
	heads, kv := float64(m.Heads), float64(m.KVHeads)
	mask := 1.0 // the dropout after the attention's output projection (and a GeLU MLP's)
	if !dropout {
		mask = 0
	}
	// Per layer, in units of s b h bytes (Korthikanti's 34 for GPT):
	// layer norm inputs 4, attention: its input 2, Q K V, its output 2,
	// dropout mask 1; MLP: its input 2, the activation's input and the
	// second GEMM's input (2 f/h each; SwiGLU 4 f/h and 2 f/h), mask 1.
	// The GEMMs' inputs (QKV's, FC1's, FC2's) in bytes of in: Transformer
	// Engine keeps their FP8 copies for the weight gradients; the
	// attention's output stays BF16 (flash attention's backward reads
	// it).
	attn = in + 2*(heads+2*kv)/heads + 2 + mask
	if m.Head > 0 {
		d := float64(m.HeadDim())
		attn = in + 2*(heads+2*kv)*d/h + 2*heads*d/h + mask
	}
	lat := 0.0 // a family's attention's latents (replicated over the tensor group without sp)
	if at != nil {
		attn, lat = at.Units(*m, in, mask)
	}
	mlp = in + 2*f/h + in*f/h + mask
	switch {
	case m.SwiGLU():
		mlp = in + 4*f/h + in*f/h
	case m.Act == "relu2":
		mlp = in + 2*f/h + in*f/h // Nemotron's squared ReLU: GeLU's, without a dropout mask
	}
	// The norms' inputs (2 units each: Gemma's post-norms too), the two
	// column-parallel inputs, masks, latents.
	replicated = 2*float64(m.NormsPerBlock()) + in + in + 1 + mask + lat
	return attn, mlp, replicated
}

// gemmInputBytes is the bytes an element of a GEMM's input takes as the
// GEMM saves it for its weight gradient under c's plan: 2 in BF16 (and
// under torchao's rowwise recipes), one under torchtitan's Float8 and on
// eager stacks, and under Transformer Engine (Megatron-Core's stacks)
// the recipe's column-wise copy (plan.SavedInputBytes: 1 + 1/32 under
// MXFP8, 1/2 + 1/16 under NVFP4).
func (c *counter) gemmInputBytes() float64 {
	switch {
	case !plan.KeepsFP8Inputs(c.pl.FP8):
		return bf16
	case c.pl.Titan() || c.pl.Run.Eager:
		return 1
	}
	return plan.SavedInputBytes(c.pl.FP8)
}

// dropoutFree is whether c's blocks run without a hidden dropout, so
// keep no dropout mask (the attention's after its output projection, the
// embedding's): Megatron-Bridge's providers of the llama family's models
// (Llama, Qwen, GPT-OSS, DeepSeek, Mistral) set hidden_dropout = 0.0
// (NVIDIA-NeMo/Megatron-Bridge v0.3.0 src/megatron/bridge/models/
// llama/llama_provider.py LlamaModelProvider, qwen/qwen_provider.py,
// gpt_oss/gpt_oss_provider.py), and at p = 0 dropout returns its input
// and makes no mask (PyTorch aten/src/ATen/native/Dropout.cpp
// _dropout_impl: "if (p == 0 || !train ...) return input"; under
// torch.compile, torch/_decomp/decompositions.py dropout returns
// input.clone() where p is 0). Megatron-Core's own default is 0.1
// (TransformerConfig.hidden_dropout), which Bridge's GPTModelProvider
// keeps: not GPT.
func (c *counter) dropoutFree() bool {
	if c.pl.NoHiddenDropout { // hidden-dropout=0: plan/recipe.go
		return true
	}
	return strings.HasPrefix(c.pl.Software.Stack, "megatron-bridge-") && c.m.Family != "gpt"
}

// projFP8Input is the FP8 copy of the attention's output that
// Transformer Engine's Linear saves for the output projection's weight
// gradient, in units of s b h bytes (split over the tensor group like
// the output): one byte an element, beside the BF16 output flash
// attention saves for its own backward (blockUnits'). TransformerEngine
// v2.8 transformer_engine/pytorch/module/linear.py _Linear.forward:
// under FP8 the input is quantized (input_quantizer, column-wise usage
// where backward_needs_input), its row-wise data discarded
// (update_usage(rowwise_usage=False, columnwise_usage=True)) and the
// quantized tensor saved (saved_inputmat = inputmat; prepare_for_saving).
// Megatron-Core's attention hands linear_proj the attention's BF16
// output (TE's DotProductAttention without fp8_dpa), so the cast is a
// tensor of its own. QKV's and FC1's inputs (LayerNormLinear: ln_out,
// saved quantized, layernorm_linear.py) and FC2's (blockUnits) are the
// only copies of theirs.
func projFP8Input(m *transformer.Spec, family bool) float64 {
	if m.Head > 0 || family {
		return float64(m.Heads) * float64(m.HeadDim()) / float64(m.Hidden)
	}
	return 1
}
