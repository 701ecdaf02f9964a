package hardware

import "github.com/placer/placer/graph"

// The GeForce RTX 3090 (GA102, Ampere, 2020): the GPU of timm's published
// training benchmark (results/benchmark-train-amp-*-rtx3090.csv in
// huggingface/pytorch-image-models; docs/timm-bench.md), a consumer card.
// Its figures, each from the source named beside it:
//
//   - [toms]: Tom's Hardware's RTX 3090 specification table, as
//     https://holynerdvana.blogspot.com/2022/10/nvidia-geforce-rtx-3090-specifications.html
//     reproduces it: GA102, 82 SMs, 10,496 CUDA cores, 328 tensor cores,
//     boost clock 1,695 MHz, 24 GB GDDR6X at 19.5 Gbps on a 384-bit bus,
//     936 GB/s, FP32 35.6 TFLOPS, "FP16 TFLOPS (Sparsity) 142 (285)"
//     (the tensor cores with FP16 accumulation: 142 dense), 350 W.
//   - [tpu]: TechPowerUp's database entry, as
//     https://gpu.spicedreamphone.com/en/gpu/a40-pcie-vs-geforce-rtx-3090
//     reproduces it: FP16 (half, without tensor cores) 35.58 TFLOPS
//     (1:1), FP32 35.58, FP64 556.0 GFLOPS (1:64), boost 1,695 MHz,
//     82 SMs, 24 GB, 936.2 GB/s, PCIe 4.0 x16, 350 W.
//   - [ga102]: NVIDIA's Ampere GA102 GPU architecture whitepaper
//     (https://docslib.org/doc/759549/nvidia-ampere-ga102-gpu-architecture-whitepaper;
//     Appendix A, "GeForce RTX 3090"): GeForce GA10x tensor cores run
//     FP16 and BF16 with FP32 accumulation at half the FP16-accumulate
//     rate (the data-center A100 and the professional A40 run both at
//     the full rate), TF32 at half that again, INT8 at twice the FP16
//     rate. The table's own figures were not legible through the tools
//     this project reads with; the dense rates below are 142.33 TFLOPS
//     (82 SMs x 4 tensor cores x 256 FP16 FLOPs a clock x 1.695 GHz,
//     [toms]' 142) halved for FP32 accumulation: 71.16, TF32 35.58, INT8
//     284.65 TOPS. The same ratios hold in the RTX 3090 Ti's table at
//     https://hmc-tech.com/gpu/nvidia-geforce-rtx-4090-d-vs-nvidia-geforce-rtx-3090-ti
//     (84 SMs at 1,860 MHz: 159.99 TFLOPS FP16 accumulate, 80 with FP32
//     accumulate, BF16 80, TF32 40).
//
// PyTorch's FP16 matmuls and convolutions (autocast's, timm's AMP) and
// every BF16 one accumulate in FP32 (cuBLAS's CUBLAS_COMPUTE_32F, cuDNN's
// float accumulation), so FP16Tensor is the FP32-accumulate rate, 71.16:
// half the figure a GeForce table leads with. The host link is PCIe 4.0
// x16 at the A100 preset's attained 25 GB/s; the card's NVLink bridge
// (two cards) is not modelled: topology pcie. Power (350 W) has no field
// of a Hardware; the clock it holds under that limit is not modelled.
const (
	rtx3090Boost         = 1.695e9 // Hz, [toms] [tpu]
	rtx3090SMs           = 82      // [toms] [tpu]
	rtx3090TensorPerSM   = 4       // 328 tensor cores / 82 SMs, [toms]
	rtx3090FP16AccPerClk = 256     // FP16 FLOPs a tensor core a clock, FP16 accumulation (GA10x: half A100's 512)
)

// rtx3090FP16Acc is the dense FP16 tensor rate with FP16 accumulation,
// 142.33 TFLOP/s ([toms]: 142).
var rtx3090FP16Acc = rtx3090SMs * rtx3090TensorPerSM * rtx3090FP16AccPerClk * rtx3090Boost

func init() {
	presets["rtx3090"] = Hardware{
		Name: "rtx3090", FP64: 0.556 * tera, FP32: 35.58 * tera, FP16: 35.58 * tera,
		FP16Tensor: rtx3090FP16Acc / 2, TF32: rtx3090FP16Acc / 4, INT8Tensor: rtx3090FP16Acc * 2,
		MemBandwidth: 936 * giga, Memory: 24 * gib,
		Launch: defaultLaunch, ComputeEff: defaultComputeEff, MemEff: defaultMemEff,
		PCIeGen: 4, PCIeBandwidth: 25 * giga, PCIeLatency: 15e-6, Topology: "pcie",
		Source: "GeForce RTX 3090: Tom's Hardware's and TechPowerUp's specification tables; NVIDIA Ampere GA102 whitepaper (FP32 accumulation at half rate)",
	}
}

// rtx3090DepthwiseMaxTaps is the largest depthwise kernel the carried-over
// rates hold for: the H100 timed 3x3 and 5x5 ones (h100Depthwise).
const rtx3090DepthwiseMaxTaps = 25

// rtx3090Kernels is the rtx3090 preset h with what is carried over to it
// from kernels measured on the H100 (h100, the h100 preset):
//
//   - PyTorch's own depthwise convolution kernels (CudaDepthwise2d, which
//     runs every depthwise convolution cuDNN does not:
//     convlayout.CuDNNDepthwise) at the H100's measured rates
//     (h100Depthwise, h100DepthwiseBwd) times the ratio of the two GPUs'
//     FP32 rates, 66.9 / 35.58 = 1.8803 (132 SMs at 1.98 GHz against 82
//     at 1.695, each SM 128 FP32 lanes): the H100 timed them at 1.5 to 3
//     TFLOP/s and 0.2 to 0.8 of its 3.35 TB/s, FP32 and BF16 alike, so
//     that neither its tensor cores nor its memory bound them but its
//     SMs' instruction rate, which the FP32 rate measures; up to 5x5
//     kernels (rtx3090DepthwiseMaxTaps), the largest timed.
//   - cuBLAS's GEMMs at the fraction of the tensor peak they reached on
//     the H100 (h100MeasuredGEMMEff) in place of the default matmul
//     efficiency (0.75, an assumption): a large FP16 GEMM reaches about
//     the same fraction of any of these GPUs' tensor peak (on an L20,
//     cuBLAS's HGEMM 105-115 of 119.5 TFLOP/s, 0.88-0.96, as
//     github.com/DefTruth/CUDA-Learn-Notes' hgemm README measured it).
//   - cuDNN's dense convolutions at that same fraction (DenseConvEff) in
//     place of the default convolution efficiency (0.6, an assumption):
//     cuDNN runs a tensor-core convolution, forward and both gradients,
//     as an implicit GEMM (NVIDIA's Convolutional Layers User's Guide;
//     the sm80 kernels' names, sm80_xmma_fprop_implicit_gemm_*,
//     *_dgrad_implicit_gemm_*, *_wgrad_implicit_gemm_*), the GEMM's
//     tensor-core mainloop over an operand gathered from the activation,
//     and CUTLASS's implicit GEMM convolutions, built from its GEMM's
//     blocks, run ResNet-50's layers about as fast as cuDNN's on an A100
//     (CUTLASS's README, 2.9 to 3.x). Grouped and depthwise convolutions
//     keep the default: not one GEMM.
func rtx3090Kernels(h, h100 Hardware) Hardware {
	r := h100.FP32 / h.FP32
	h.Depthwise = [2]float64{h100Depthwise[0] * r, h100Depthwise[1] * r}
	h.DepthwiseBwd = [2]float64{h100DepthwiseBwd[0] * r, h100DepthwiseBwd[1] * r}
	h.DepthwiseMaxTaps = rtx3090DepthwiseMaxTaps
	h.ComputeEff[graph.ClassMatMul] = h100MeasuredGEMMEff
	h.DenseConvEff = h100MeasuredGEMMEff
	return h
}

// h100MeasuredGEMMEff is the matmul efficiency `placer hw bench --profile`
// measured on an H100 SXM (2026-11-25; ../shared/data/h100/
// hw-bench-2026-11-25.json, compute_eff[matmul]): its BF16 GEMMs at
// 0.9093 of the 989.4 TFLOP/s dense peak (TestRTX3090GEMMEffMeasured).
const h100MeasuredGEMMEff = 0.9093348772470476
