package scale

import (
	"github.com/placer/placer/evaluate/scale/plan"

	"github.com/placer/placer/graph"
)

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
//     kept. It runs at the FP8 tensor peak (the same dense rate as
//     per-tensor FP8 on Blackwell: Hardware.FP8Tensor). Megatron-Bridge's
//     bf16_with_mxfp8_mixed (src/megatron/bridge/training/
//     mixed_precision.py, v0.4.2): fp8 "e4m3", fp8_recipe "mxfp8",
//     fp8_param_gather with the gradient buffer reused for the MXFP8
//     parameter all-gather (reuse_grad_buf_for_mxfp8_param_ag): MXFP8
//     primary weights, no BF16 copy (evaluate/scale/memory's
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
//     Its GEMMs run at the FP4 tensor peak (Hardware.FP4Tensor: 4x BF16
//     on B200/GB200, 6x on Blackwell Ultra).
//
// In both, as under every FP8 recipe here, the attention core (the
// fused attention kernel), the norms, the embedding, the output layer
// and the router stay BF16: Megatron-Core applies the recipe to
// Transformer Engine's linear layers only. Neither exists on a GPU
// without block-scaled tensor cores (the H100's fourth generation has
// FP8 with per-tensor scales only): refused there (plan.BlockScaled; refused in the plan language).
//
// Left out, assumptions: the scale arrays of the activations saved for
// the backward (under 1/16 of them); the Hadamard transform's own pass
// (Transformer Engine fuses it with the cast); NVFP4's saved activations
// are counted at FP8's byte (an over-count); the tensor-parallel
// all-gather carries BF16 under both (as blockwise FP8's does: pair).

// blockSpeedup is how many times faster a block-scaled GEMM of recipe
// runs than the BF16 GEMM of its shape on pod p: its tensor peak over
// the BF16 peak bf16Peak (at the BF16 GEMMs' efficiency: no Blackwell
// GEMM was measured here), the same forward and backward.
func blockSpeedup(recipe string, p *plan.Pod, bf16Peak float64) float64 {
	if recipe == plan.FP4NV {
		return p.Hardware.FP4Tensor / bf16Peak
	}
	return p.Kernels.FP8Peak / bf16Peak
}

// blockCast is the quantization of a GEMM input of e BF16 elements
// under recipe: one memory-bound pass reading it (2 bytes an element)
// and writing its rowwise and columnwise copies with their block scales:
// MXFP8 2 x (1 + 1/32) bytes, NVFP4 2 x (1/2 + 1/16).
func blockCast(recipe string, e float64) kernel {
	return kernel{class: graph.ClassElementwise, flops: e, read: 2 * e, writes: e * plan.BlockCopyBytes(recipe)}
}
