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

// amdMAF is AMD's published Max-Achievable FLOPs (MAF) of its CDNA 3
// parts, each with the median clock its GEMM held: ROCm blog "Measuring
// Max-Achievable FLOPs - Part 2" (Sander, Masters, Poursartip, Ho,
// 2025-02-28; ROCm/rocm-blogs at commit
// d957560caad3fa312521119366c7f15a1b7bfb5b, blogs/software-tools-
// optimization/measuring-max-achievable-flops-part2/README.md, Table 1;
// https://rocm.blogs.amd.com/software-tools-optimization/measuring-max-
// achievable-flops-part2/README.html). Each is hipblaslt-bench (hipBLASLt
// at commit db8e93b4fd6c785d4ce6cac11cc3b0ad613ece8b, its Appendix B) on
// one large GEMM (4,096 x 4,864 x 32,896 in BF16 and FP16, 4,096 x 3,648 x
// 32,896 in FP8 e4m3fnuz), inputs of a normal-like spread (trig_float),
// cold caches, run for about a second on a thermally stable GPU, timed on
// the GPU, the clock the lowest XCD's median (HIPBLASLT_BENCH_FREQ=1):
// what the GPU holds at its board power limit (750 W MI300X, 1,000 W
// MI325X), against the 2,100 MHz peak the datasheets' FLOPs assume.
//
//	           FP16               BF16               FP8
//	MI300X   654 TF (1,115 MHz)  708 TF (1,207 MHz)  1,273 TF (1,230 MHz)
//	MI325X   794 TF (1,354 MHz)  843 TF (1,447 MHz)  1,519 TF (1,464 MHz)
var amdMAF = struct {
	mi300x, mi325x struct{ fp16, bf16, fp8, fp16MHz, bf16MHz, fp8MHz float64 }
}{
	mi300x: struct{ fp16, bf16, fp8, fp16MHz, bf16MHz, fp8MHz float64 }{654e12, 708e12, 1273e12, 1115, 1207, 1230},
	mi325x: struct{ fp16, bf16, fp8, fp16MHz, bf16MHz, fp8MHz float64 }{794e12, 843e12, 1519e12, 1354, 1447, 1464},
}

// InstinctGEMM is the fraction of the BF16 peak an Instinct GPU's GEMMs
// reach (cdna 3 or 4): hipBLASLt's measured square GEMM of 8,192 (the
// hidden size of a 70B Llama's shards) over the peak, 0.6007 on the
// MI325X (CDNA 3), 0.6045 on the MI355X (CDNA 4), each at the clock its
// board holds under load (500 warm-up runs before the 100 timed). On
// CDNA 3 that is the MI325X's held clock, 1,447 MHz (amdMAF: its BF16
// GEMM's median clock at 1,000 W); the MI300X holds less under its 750 W
// (InstinctHeld), which its pod's power limit prices.
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
// the peaks' 2: the FP8 kernel is nearer its peak); on CDNA 3 AMD's
// max-achievable FP8 over BF16 on the MI325X (amdMAF, the part whose
// clock the CDNA 3 rates stand at), 1,519 / 843 = 1.8019, not the peaks'
// 2 (the MI300X's own, 1,273 / 708 = 1.7980, within 0.3%).
func InstinctFP8(cdna int) float64 {
	if cdna >= 4 {
		return hipKittens.cdna4FP8 / hipKittens.cdna4BF16
	}
	return amdMAF.mi325x.fp8 / amdMAF.mi325x.bf16
}

// InstinctHeld is the clock a CDNA 3 GPU (gpu: "mi300x" or "mi325x")
// holds under held load at its board power limit, against the clock its
// kernels' rates stand at (InstinctGEMM's, InstinctAttention's: the
// MI325X's held 1,447 MHz, BurstMHz here, the clock those rates were
// timed at), from AMD's published held clocks (amdMAF: its BF16 GEMM's
// median clock, 1,207 MHz on the MI300X at 750 W, 1,447 on the MI325X at
// 1,000 W). A compute-bound kernel's time is all of it at the clock
// (Share 1): AMD's table gives the two parts the same FLOPs per MHz
// within 0.7% in each precision (BF16 0.5866 and 0.5826 TF a MHz, FP16
// 0.5865 and 0.5864, FP8 1.0350 and 1.0376), though their memories
// differ (5.3 and 6 TB/s). So an MI300X's compute-bound kernels take
// 1,447 / 1,207 = 1.1988x the MI325X's; the MI325X's, none more. Assumed,
// as the Blackwell GPUs' held clocks are (plan/pod's smHeld): the power
// at rest the H100 SXM's share of its limit (kernels.H100Held: 75.5 of
// 700 W), the exponent 3 and the controller's window (0.09 s); they
// price a limit other than the board's (power=) and a step's idle and
// memory-bound time (HeldClock.Balanced), not the held clock at the
// board's limit. Another gpu: nil (no held-load figure: the MI355X's
// rates were timed at its own limit).
func InstinctHeld(gpu string) *HeldClock {
	var held, tdp float64
	switch gpu {
	case "mi300x":
		held, tdp = amdMAF.mi300x.bf16MHz, 750
	case "mi325x":
		held, tdp = amdMAF.mi325x.bf16MHz, 1000
	default:
		return nil
	}
	h := H100Held
	return &HeldClock{BurstMHz: amdMAF.mi325x.bf16MHz, HeldMHz: held, TDPW: tdp, IdleW: h.IdleW / h.TDPW * tdp,
		Exponent: h.Exponent, Share: 1, WindowS: h.WindowS}
}

// zyphraFA are AMD's published MI300X flash-attention figures against
// the H100's, from its partner Zyphra (ROCm blog "Zyphra Introduces
// Frontier Training Kernels for Transformers and SSMs on AMD Instinct
// MI300X Accelerators", Quentin Anthony, 2024-12-10; ROCm/rocm-blogs at
// commit 425e6c9996c58273c2246d718e2946aa73a5de46,
// blogs/ecosystems-and-partners/zyphra/README.md, read 2026-11-29):
// "the ROCm port of Flash Attention v2 has a highly optimized
// implementation of the forward pass that slightly beats the NVIDIA H100
// in throughput" (Composable Kernel's forward: what Transformer Engine's
// ROCm port runs, NVTE_FUSED_ATTN_CK=1 in AMD's v5.0 MLPerf configs), 1x
// here (a floor: "slightly"); and its own FlashAttention-2 backward on
// the MI300X "speedups of 1%, 2%, and 4% for sequence lengths of 2k, 4k,
// and 8k" over the H100's, 1.04x at 8,192 tokens (the sequence of the
// rows it prices). The H100's is FlashAttention-2 (Dao-AILab's, what
// torch's flash kernel runs: h100FlashAttention, measured here). Both
// predate the MLPerf v5.0 stack (ROCm 6.4, Composable Kernel's v3
// assembly backward: NVTE_CK_USES_BWD_V3=1), whose own rates are not
// published.
var zyphraFA = struct{ fwd, bwd float64 }{fwd: 1, bwd: 1.04}

// InstinctAttention is the flash attention ROCm ships (backend "flash",
// what attention=flash names) on an Instinct GPU of CDNA generation cdna
// and BF16 peak bf16.
//
// On CDNA 4 AITER's (aiter.flash_attn_func, its assembly and Composable
// Kernel kernels) as hipKittens measured it on the MI355X; on another
// CDNA 4 GPU the same share of its own peak (forward 0.4662 at head
// dimension 128 and 0.1957 at 64, backward 0.4109), assumed. Rates only,
// no per-element, tail or launch terms (as a100FlashAttention): the
// kernel's rate at 8,192 tokens, so that short calls are if anything
// costed fast.
//
// On CDNA 3 the MI300X's as AMD published it against the H100's
// (zyphraFA): the H100's measured FlashAttention-2 fit
// (h100FlashAttention: its rates, per-element, tail and per-call terms,
// and its full blocks' fit) forward at 1x and backward at 1.04x, taken
// at the MI300X's held clock (1,207 MHz: InstinctHeld) and so written at
// the clock CDNA 3's other rates stand at, its rates times 1,447 / 1,207
// (the pod's held clock takes them back on the MI300X; an MI325X, whose
// own attention is not published, runs them 1.1988x faster, as its
// GEMMs). Forward 355.8 TFLOP/s at head dimension 128 on the MI300X
// (426.5 as written), backward 348.4 (417.7): where the MI355X's shares
// of peak carried to CDNA 3 gave 508 and 448 on the MI300X (CDNA 4 has
// 160 KB of LDS a CU to CDNA 3's 64, which flash attention's tiles
// fill). The per-call terms are the H100's over the same speedup,
// not lengthened by the clock (as the pod prices every fused
// attention's terms).
func InstinctAttention(cdna int, bf16 float64) *Attention {
	if cdna < 4 {
		c := amdMAF.mi325x.bf16MHz / amdMAF.mi300x.bf16MHz
		a := h100FlashAttention
		a.Fwd, a.Bwd = a.Fwd.faster(zyphraFA.fwd, c), a.Bwd.faster(zyphraFA.bwd, c)
		ff, fb := a.FullFwd.faster(zyphraFA.fwd, c), a.FullBwd.faster(zyphraFA.bwd, c)
		a.FullFwd, a.FullBwd = &ff, &fb
		return &a
	}
	r := bf16 / cdna4BF16Peak
	return &Attention{Backend: "flash",
		Fwd: AttentionRate{HeadDims: []int{64, 128}, Rates: []float64{hipKittens.fwd64 * r, hipKittens.fwd128 * r}},
		Bwd: AttentionRate{HeadDims: []int{128}, Rates: []float64{hipKittens.bwd128 * r}}}
}

// faster is r for a kernel k times as fast, its rates written at a
// clock c times the one it ran at: rates times k c, the per-element,
// tail and per-call terms over k.
func (r AttentionRate) faster(k, c float64) AttentionRate {
	r.Rates = append([]float64(nil), r.Rates...)
	for i := range r.Rates {
		r.Rates[i] *= k * c
	}
	r.Beta, r.Tail, r.T0 = r.Beta/k, r.Tail/k, r.T0/k
	return r
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
