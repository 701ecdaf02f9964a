package kernels

// Blackwell's kernels, modelled from published kernel benchmarks: nothing
// here measured a Blackwell GPU (measurements/ holds H100 and H200 runs
// only). planner/plan's Blackwell pods (pods_blackwell.go) take
// them into their Node; a profile from the user's own GPU replaces them.

// gemmSums are one precision's per-layer GEMM times (ms) in Transformer
// Engine's GEMM profiling tutorial: the sums of a layer's four GEMMs'
// forward (Fprop), data-gradient (Dgrad) and weight-gradient (Wgrad)
// shapes.
type gemmSums struct{ fprop, dgrad, wgrad float64 }

func (g gemmSums) total() float64 { return g.fprop + g.dgrad + g.wgrad }

// over is how many times faster g's GEMMs run than base's, forward and
// backward (the data and weight gradients together).
func (g gemmSums) over(base gemmSums) (fwd, bwd float64) {
	return base.fprop / g.fprop, (base.dgrad + base.wgrad) / (g.dgrad + g.wgrad)
}

// teGEMMs are a published kernel benchmark: Transformer Engine's GEMM
// profiling tutorial (NVIDIA/TransformerEngine docs/examples/
// gemm_profiling/gemm_profiling.rst at commit 1609c890, 2026-06-01; its
// tool benchmarks/gemm/benchmark_gemm.py), a 5B model's layer (hidden
// 4,096, FFN 16,384, 32 heads, M = 31 x 512 = 15,872 tokens: QKV
// 4,096 x 12,288, attention output 4,096 x 4,096, MLP up 4,096 x 16,384,
// down 16,384 x 4,096; teLayerFLOPs) timed with CUDA events, 100
// iterations, on an "NVIDIA B300 SXM6 AC" and an "NVIDIA H200 NVL".
// The low-precision rows are its pre-quantized ones (--pre-quantize:
// the GEMM kernels alone, their inputs quantized before the timed loop;
// its autocast rows add a quantization of both inputs to every call,
// which a training step does not run: the casts are costed apart,
// planner's cast). BF16 (torch.matmul) is timed in both runs;
// each GPU's BF16 is the mean of its two (B300 12.758 and 13.102 ms a
// layer, H200 NVL 32.014 and 31.909: the Fprop, Dgrad and Wgrad sums;
// the table prints 31.968 for the latter's total).
var teGEMMs = struct {
	bf16, fp8, mxfp8, nvfp4, bf16Autocast gemmSums
	h200, h200Autocast                    gemmSums
}{
	bf16:         gemmSums{4.250, 4.434, 4.418},
	fp8:          gemmSums{2.158, 2.329, 2.325}, // FP8CurrentScaling (per-tensor)
	mxfp8:        gemmSums{2.365, 2.397, 2.400},
	nvfp4:        gemmSums{1.254, 1.305, 1.205},
	bf16Autocast: gemmSums{4.196, 4.290, 4.272},
	h200:         gemmSums{10.632, 10.747, 10.530},
	h200Autocast: gemmSums{10.653, 10.813, 10.548},
}

// teLayerFLOPs is the FLOPs of teGEMMs' layer's twelve GEMMs: 3 x 2 x
// 15,872 x 4,096 x (12,288 + 4,096 + 16,384 + 16,384).
const teLayerFLOPs = 3 * 2 * 15872 * 4096 * (12288 + 4096 + 16384 + 16384.0)

// The dense BF16 peaks of teGEMMs' GPUs: the B300's 2,250 TFLOP/s
// (roofline's b300; the B200's too), the H200 NVL's 835.5 (NVIDIA's H200
// datasheet: 1,671 TFLOP/s "with sparsity", twice the dense rate).
const (
	b300BF16Peak    = 2250e12
	h200NVLBF16Peak = 835.5e12
)

// BlackwellGEMM is the fraction of the BF16 peak a Blackwell GPU's GEMMs
// reach at a transformer shard's shapes: the H100's measured 0.756
// (H100) times how much less of its peak a Blackwell GEMM reaches
// than a Hopper one at the same shapes in the same published benchmark
// (teGEMMs): the B300's 0.6590 of 2.25 PF (1,483 TFLOP/s) over the H200
// NVL's 0.7180 of 835.5 TF (599.9 TFLOP/s), 0.9179: 0.6939. The two
// runs' BF16 alone give 0.9044 and 0.9318. The same fraction stands for
// every Blackwell part (one tensor-core generation; B200 and B300 share
// the BF16 peak).
func BlackwellGEMM() float64 {
	eff := func(a, b gemmSums, peak float64) float64 {
		return teLayerFLOPs / ((a.total() + b.total()) / 2 * 1e-3) / peak
	}
	return H100.GEMM * eff(teGEMMs.bf16, teGEMMs.bf16Autocast, b300BF16Peak) /
		eff(teGEMMs.h200, teGEMMs.h200Autocast, h200NVLBF16Peak)
}

// BlackwellBlockScaled are a Blackwell GPU's block-scaled GEMM speedups
// over BF16 (Node's MXFP8Fwd, MXFP8Bwd, NVFP4Fwd, NVFP4Bwd) where its FP4
// tensor peak is fp4Ratio times its BF16 peak, from teGEMMs'
// pre-quantized B300 rows: MXFP8 1.797x forward and 1.845x backward
// (per-tensor FP8's 1.969x and 1.902x: an MXFP8 GEMM reads a scale per
// 32 elements of each operand); NVFP4 3.389x and 3.527x on the B300,
// whose FP4 peak is 13,125 / 2,250 = 5.833 times its BF16, that is
// 0.5810 and 0.6046 of the peaks' ratio, the share taken on each
// Blackwell part (B200's and GB200's 4x: 2.324x and 2.418x; GB300's 6x:
// 3.486x and 3.627x). No NVFP4 GEMM of a B200 or GB200 was found
// published.
func BlackwellBlockScaled(fp4Ratio float64) (mxFwd, mxBwd, nvFwd, nvBwd float64) {
	mxFwd, mxBwd = teGEMMs.mxfp8.over(teGEMMs.bf16)
	nvFwd, nvBwd = teGEMMs.nvfp4.over(teGEMMs.bf16)
	r := 13125.0 / 2250 // the B300's FP4 over BF16 peak (roofline's b300)
	return mxFwd, mxBwd, nvFwd / r * fp4Ratio, nvBwd / r * fp4Ratio
}

// BlackwellFP8 are a Blackwell GPU's FP8 GEMM speedups over BF16 (Node's
// FP8Fwd, FP8Bwd, FP8Block), from teGEMMs' pre-quantized B300 rows:
// per-tensor scales 1.969x forward, 1.902x backward (Blackwell's tensor
// cores accumulate FP8 in full precision: no split accumulator's cost);
// blockwise FP8, which Transformer Engine runs as MXFP8 on Blackwell
// (its tutorial: "FP8 Block is emulated via MXFP8"), MXFP8's whole
// layer, 1.829x.
func BlackwellFP8() (fwd, bwd, block float64) {
	fwd, bwd = teGEMMs.fp8.over(teGEMMs.bf16)
	return fwd, bwd, teGEMMs.bf16.total() / teGEMMs.mxfp8.total()
}

// BlackwellAttention is cuDNN's fused attention (what Transformer Engine
// runs on sm100 for Megatron-Core) on a Blackwell GPU of BF16 peak bf16,
// sms SMs and exp exponentials a second (ExpRate), modelled from the
// H100's measured fit (h100CuDNNAttention) and published B200 figures.
//
// The anchor: FlashAttention-4 (Zadouri et al., arXiv 2603.05451, BF16
// on B200) reaches at best 1,613 TFLOP/s, "up to 1.3x" cuDNN 9.13's, so
// cuDNN reaches at least 1,613 / 1.3 = 1,240.8 TFLOP/s at head dimension
// 128 on a B200, 1.871 times the H100 fit's 663.2 (no published B200
// backward figure was found: the forward's ratio stands at 128).
//
// By head dimension and GPU: the H100's measured time per score at head
// dimensions 64 and 128 splits into a tensor part and an exponential part
// (expSplit); on Blackwell the tensor part runs at bf16, the exponential
// part at exp (MUFU.EX2: FlashAttention-4's premise, the tensor cores
// doubled per SM and clock, the exponential unit not; Blackwell Ultra
// doubles the exponentials), one factor per direction taking the B200
// (2,250 TF, 4.395e12 exponentials a second) to the anchor at 128 (the
// kernel's overlap on Blackwell, which this does not model further). At
// head dimension 64 the exponentials weigh twice as much against the
// GEMMs as at 128: a B200's forward reaches 783.6 TFLOP/s there, not the
// H100's ratio's 878.8; a GB300's doubled exponentials give it 1,379
// where a GB200 has 870.6. Above 128 the H100's rate by head dimension
// is carried at the GPU's own ratio at 128 (the exponentials fewer per
// FLOP). Its per-element terms (Beta, Tail: the softmax's rescaling and
// the shared-memory traffic, whose units per SM Blackwell did not grow,
// as the FlashAttention-4 authors state) spread over sms SMs instead of
// the H100's 132; its fixed T0 as measured.
func BlackwellAttention(bf16 float64, sms int, exp float64) *Attention {
	anchor := 1613e12 / 1.3 / h100CuDNNAttention.Fwd.Rate(128) // the B200's over the H100's at 128
	b200Exp := ExpRate(b300BF16Peak, MUFUBlackwell, TensorPerClockBlackwell)
	e := 132 / float64(sms)
	scale := func(a AttentionRate, mul float64) AttentionRate {
		ta, tb := expSplit(a, mul, h100Peak, h100Exp)
		perScore := func(d int, peak, x float64) float64 { return ta*mul*4*float64(d)/peak + tb/x }
		s := mul * 4 * 128 / (anchor * a.Rate(128)) / perScore(128, b300BF16Peak, b200Exp)
		at128 := mul * 4 * 128 / (s * perScore(128, bf16, exp))
		h128 := a.Rate(128)
		a.Rates = append([]float64(nil), a.Rates...)
		for i, d := range a.HeadDims {
			if d <= 128 {
				a.Rates[i] = mul * 4 * float64(d) / (s * perScore(d, bf16, exp))
			} else {
				a.Rates[i] *= at128 / h128
			}
		}
		a.Beta, a.Tail = a.Beta*e, a.Tail*e
		return a
	}
	k := h100CuDNNAttention
	k.Fwd, k.Bwd = scale(k.Fwd, 1), scale(k.Bwd, 2.5)
	k.FullFwd, k.FullBwd = nil, nil // measured on the H100 only: every Blackwell call on the joint fit's scaling
	return &k
}
