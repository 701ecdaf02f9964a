package mechanisms

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// The block-scaled recipes (MXFP8, NVFP4) are rules of FP8Casts, the one
// plug-in of the plan's low-precision recipe (cost.LowPrecision): their
// GEMMs' speedups (BlockSpeedups) and their casts (BlockCast), which its
// Speedups and casts read where the plan's recipe is one of them. They
// are no plug-in of their own: a step in them is priced by fp8-casts.

// Block-scaled precisions: Blackwell's fifth-generation tensor cores
// multiply operands that carry a scale per small block of elements, the
// formats of the OCP Microscaling (MX) specification v1.0 and NVIDIA's
// NVFP4:
//   - MXFP8 (fp8=mxfp8): FP8 E4M3 elements, one E8M0 (power-of-two)
//     scale per 32 consecutive elements along the GEMM's reduction
//     dimension. Transformer Engine's MXFP8BlockScaling recipe
//     (transformer_engine.common.recipe, TE 2.x) quantizes each GEMM
//     input in one pass, no tensor-wide amax, writing a rowwise copy
//     (blocks along rows, for the forward and data-gradient GEMMs) and a
//     columnwise copy (blocks along columns, for the weight-gradient
//     GEMM): the scales cannot be transposed with the data, so both are
//     kept. Its GEMMs run at a published speedup over BF16, a little
//     below per-tensor FP8's (kernels.BlackwellBlockScaled; the same dense
//     peak, Hardware.FP8Tensor). Megatron-Bridge's
//     bf16_with_mxfp8_mixed (src/megatron/bridge/training/
//     mixed_precision.py, v0.4.2): fp8 "e4m3", fp8_recipe "mxfp8",
//     fp8_param_gather with the gradient buffer reused for the MXFP8
//     parameter all-gather (reuse_grad_buf_for_mxfp8_param_ag): MXFP8
//     primary weights, no BF16 copy (planner/memory's
//     bridgeBlockParams).
//   - NVFP4 (fp4=nvfp4): FP4 E2M1 elements, one FP8 E4M3 scale per 16
//     elements and an FP32 scale per tensor. NVIDIA's recipe, as the
//     torchao NVFP4 training tracker lists it (pytorch/ao, "NVFP4 Training
//     Tracker", after
//     NVIDIA's "Pretraining Large Language Models with NVFP4", arXiv
//     2509.25149): the forward, data-gradient and weight-gradient GEMMs
//     of the linear layers all in NVFP4 (1x16 activation and gradient
//     blocks, 16x16 weight blocks), a random Hadamard transform on the
//     weight-gradient GEMM's inputs, stochastic rounding on the
//     gradients. Megatron-Bridge's bf16_with_nvfp4_mixed (v0.4.2): fp4
//     "e2m1", fp4_recipe "nvfp4", fp4_param_gather (from v0.4.2 on:
//     NVFP4 primary weights, bridgeBlockParams); no BF16 first or last
//     layers (only nemotron_3_super_bf16_with_nvfp4_mixed keeps some).
//     Its GEMMs run at a published share of the FP4 tensor peak
//     (kernels.BlackwellBlockScaled; Hardware.FP4Tensor: 4x BF16 on
//     B200/GB200, 6x on Blackwell Ultra).
//
// In both, as under every FP8 recipe here, the attention core (the
// fused attention kernel), the norms, the embedding, the output layer
// and the router stay BF16: Megatron-Core applies the recipe to
// Transformer Engine's linear layers only. Neither exists on a GPU
// without block-scaled tensor cores (the H100's fourth generation has
// FP8 with per-tensor scales only): refused there (plan.BlockScaled; refused in the plan language).
//
// Left out, assumptions: the scale arrays of the activations saved for
// the backward (under 1/16 of them); the Hadamard transform's arithmetic
// (Transformer Engine fuses it with the cast: blockCast); NVFP4's saved activations
// are counted at FP8's byte (an over-count); the tensor-parallel
// all-gather carries BF16 under both (as blockwise FP8's does: pair).

// BlockSpeedups is how many times faster a block-scaled GEMM of recipe
// runs than the BF16 GEMM of its shape on pod p, forward and backward:
// its kernels' (kernels.Node.BlockScaledSpeedups: on Blackwell, published
// kernel benchmarks of MXFP8 and NVFP4 GEMMs against BF16 ones), at the
// BF16 GEMMs' efficiency.
func BlockSpeedups(recipe string, p *plan.Pod, bf16Peak float64) (fwd, bwd float64) {
	return p.Kernels.BlockScaledSpeedups(recipe == plan.FP4NV, bf16Peak, p.Hardware.FP4Tensor)
}

// BlockCast is the quantization of a GEMM input of e BF16 elements
// under recipe: one memory-bound pass reading it (2 bytes an element)
// and writing its rowwise and columnwise copies with their block scales:
// MXFP8 2 x (1 + 1/32) bytes, NVFP4 2 x (1/2 + 1/16). Transformer Engine
// v2.18 (transformer_engine/pytorch/csrc/quantizer.cpp, the NVFP4
// quantizer's quantize): MXFP8's scale is each block's own power of
// two, no amax first; NVFP4 first reads the tensor for its amax and that
// of its Hadamard transform (nvte_hadamard_transform_amax: the
// per-tensor FP32 scales), then one fused kernel
// (nvte_quantize_with_hadamard_transform) writes the rowwise copy and
// the columnwise one after the 16x16 random Hadamard transform, with
// stochastic rounding for gradients (NVFP4BlockScaling in transformer_
// engine/common/recipe/__init__.py: RHT on inputs' and gradients'
// columnwise copies, the weight-gradient GEMM's operands; 2D 16x16
// blocks for weights): the cast's compute hides under its traffic, the
// amax pass costed by cast (AmaxFirst).
func BlockCast(recipe string, e float64) cost.Kernel {
	return cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 2 * e, Writes: e * plan.BlockCopyBytes(recipe)}
}
