package kernels

// AMD Instinct's kernels (ROCm: hipBLASLt's GEMMs, AITER's flash
// attention over Composable Kernel, RCCL), modelled from published
// measurements: nothing here measured an AMD GPU, and nothing is fitted
// to a published step time. planner/plan/pod's Instinct pods
// (instinct.go) take them into their Node; a profile from the user's own
// GPU replaces them.
//
// hipKittens are measured kernel benchmarks: HazyResearch/HipKittens
// (arXiv 2511.08083) at commit f09e9685c4c6aaa41fb3ebd4fe4ca664938589e1
// (2025-11-20), its analysis/ JSON files, each kernel timed with events
// after 500 warm-up iterations, 100 timed (analysis/baselines/README.md),
// the AMD libraries' kernels as its baselines:
//   - bf16_gemm/mi325x/mi325x_bf16_gemm.json and
//     bf16_gemm/mi350x/mi355x_bf16_gemm.json, "tflops_pytorch":
//     torch.matmul in BF16 (hipBLASLt on ROCm) at M = N = K = 8,192 on an
//     MI325X (785.30 TFLOP/s) and an MI355X (1,521.25);
//   - fp8_gemm/mi350x/mi355x_fp8_gemm.json, "tflops_hipblaslt": hipBLASLt's
//     FP8 GEMM at 8,192 on the MI355X (3,233.19 TFLOP/s);
//   - attn/fwd/benchmark/mi355x_mha_causal_fwd.json,
//     mi355x_d64_mha_causal_fwd.json and attn/bkwd/benchmark/
//     mi355x_mha_bkwd_causal.json, "tflops_ref": AITER's flash_attn_func
//     (aiter.flash_attn_func, AMD's assembly and CK kernels), BF16,
//     causal, batch 16, 16 heads, 8,192 tokens, FLOPs counted as
//     AttentionRate counts them (4 b s^2 h d / 2 forward, 2.5 times that
//     backward: test_python.py's flops): forward 1,173.23 TFLOP/s at head
//     dimension 128 and 492.6 at 64, backward 1,034.1 at 128 (no backward
//     at 64 published).
var hipKittens = struct {
	cdna3BF16, cdna4BF16, cdna4FP8 float64
	fwd128, fwd64, bwd128          float64
}{
	cdna3BF16: 785.3037036419687e12,
	cdna4BF16: 1521.2544125131246e12,
	cdna4FP8:  3233.19e12,
	fwd128:    1173.2294583211096e12,
	fwd64:     492.6e12,
	bwd128:    1034.1e12,
}

// The dense BF16 peaks of hipKittens' GPUs (roofline's mi325x and
// mi355x): 304 CUs x 2,100 MHz x 2,048 and 256 x 2,400 x 4,096.
const (
	cdna3BF16Peak = 1307.4e12
	cdna4BF16Peak = 2516.6e12
)

// InstinctGEMM is the fraction of the BF16 peak an Instinct GPU's GEMMs
// reach (cdna 3 or 4): hipBLASLt's measured square GEMM of 8,192 (the
// hidden size of a 70B Llama's shards) over the peak, 0.6007 on the
// MI325X (CDNA 3), 0.6045 on the MI355X (CDNA 4). The MI300X takes the
// MI325X's (the same die and library; its 750 W limit against the
// MI325X's 1,000 W is not modelled: no held-load figure of either).
func InstinctGEMM(cdna int) float64 {
	if cdna >= 4 {
		return hipKittens.cdna4BF16 / cdna4BF16Peak
	}
	return hipKittens.cdna3BF16 / cdna3BF16Peak
}

// InstinctFP8 is an Instinct GPU's per-tensor FP8 GEMM speedup over BF16
// (Node's FP8Fwd and FP8Bwd: the forward's and the gradients' GEMMs
// alike, hipBLASLt accumulating in FP32 either way): on CDNA 4 hipBLASLt's
// measured FP8 over BF16 at 8,192, 3,233.19 / 1,521.25 = 2.1254 (above
// the peaks' 2: the FP8 kernel is nearer its peak); on CDNA 3 no
// published FP8 GEMM measurement was found: 0, the peaks' ratio (2).
func InstinctFP8(cdna int) float64 {
	if cdna >= 4 {
		return hipKittens.cdna4FP8 / hipKittens.cdna4BF16
	}
	return 0
}

// InstinctAttention is AITER's flash attention (the flash-attention
// kernel ROCm ships; backend "flash", what attention=flash names) on an
// Instinct GPU of BF16 peak bf16: on the MI355X its measured rates
// (hipKittens); on another Instinct GPU the same share of its own peak
// (forward 0.4662 at head dimension 128 and 0.1957 at 64, backward
// 0.4109), assumed: no published flash-attention measurement of an
// MI300X or MI325X was found. Rates only, no per-element, tail or launch
// terms (as a100FlashAttention): the kernel's rate at 8,192 tokens, so
// that short calls are if anything costed fast.
func InstinctAttention(bf16 float64) *Attention {
	r := bf16 / cdna4BF16Peak
	return &Attention{Backend: "flash",
		Fwd: AttentionRate{HeadDims: []int{64, 128}, Rates: []float64{hipKittens.fwd64 * r, hipKittens.fwd128 * r}},
		Bwd: AttentionRate{HeadDims: []int{128}, Rates: []float64{hipKittens.bwd128 * r}}}
}

// XGMIShare is the share of an Infinity Fabric (xGMI) link's rated
// bandwidth RCCL moves: "approximately 48 GB/s per link" of its 64,
// "about 75% of the theoretical peak" (CRC and protocol overhead), on
// the MI300X (ROCm blog "Understanding RCCL Bandwidth and xGMI
// Performance on AMD Instinct MI300X", 2025-03-02,
// https://rocm.blogs.amd.com/software-tools-optimization/mi300x-rccl-xgmi/
// README.html, read 2026-11-29); the same share is assumed on the
// MI355X's links.
const XGMIShare = 48.0 / 64
