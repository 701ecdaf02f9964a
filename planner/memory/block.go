package memory

import (
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// layerMem is what stageMemory's stages of one tensor-parallel degree
// share, bytes for one micro-batch: one layer's activations (a block's
// of the model's kind, and in a model with experts a dense block's
// before them), a block's without recomputation (a prediction module's:
// Step.Prediction), and the input a recomputing layer keeps; under torchtitan's per-op
// checkpointing, what one block's recomputed forward holds; kept, what
// of a layer's activations CPU offload leaves on the GPU (recipe.go).
type layerMem struct{ perLayer, perDense, wholeBlock, layerInput, recomputing, kept float64 }

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
