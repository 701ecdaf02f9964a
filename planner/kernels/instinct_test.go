package kernels

import (
	"math"
	"testing"
)

// TestInstinctKernels: the published figures as instinct.go takes them,
// worked by hand. A BF16 GEMM of 8,192^3 (1.09951e12 FLOPs) at
// InstinctGEMM(3) of the MI325X's 1,307.4 TF takes 1.09951e12 /
// 785.30 TF = 1.40011 ms, the measured 1.4001 ms it was read from
// (HipKittens' avg_time_pytorch); on the MI355X 0.72277 ms. FP8 on CDNA
// 4: 3,233.19 / 1,521.25 = 2.12534x; on CDNA 3 AMD's max-achievable FP8
// over BF16 on the MI325X, 1,519 / 843 = 1.80190x.
// AITER's attention on the MI355X as measured (1,173.23 TFLOP/s forward
// at head dimension 128, 492.6 at 64, 1,034.1 backward); on CDNA 3 the
// H100's FlashAttention-2 fit at AMD's published MI300X ratios.
func TestInstinctKernels(t *testing.T) {
	near := func(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }
	flops := 2 * math.Pow(8192, 3)
	for _, c := range []struct {
		cdna       int
		peak, gemm float64
		ms, fp8    float64
	}{
		{3, 1307.4e12, 0.600661, 1.40011, 1.80190},
		{4, 2516.6e12, 0.604488, 0.722766, 2.12534},
	} {
		g := InstinctGEMM(c.cdna)
		if !near(g, c.gemm, 1e-5) || !near(flops/(g*c.peak)*1e3, c.ms, 1e-5) || !near(InstinctFP8(c.cdna), c.fp8, 1e-5) {
			t.Errorf("CDNA %d: GEMM share %g (8,192^3 in %g ms), FP8 %g; want %g (%g ms), %g",
				c.cdna, g, flops/(g*c.peak)*1e3, InstinctFP8(c.cdna), c.gemm, c.ms, c.fp8)
		}
	}
	for _, c := range []struct {
		cdna                  int
		peak                  float64
		fwd64, fwd128, bwd128 float64
	}{
		{4, 2516.6e12, 492.6e12, 1173.23e12, 1034.1e12},
		// CDNA 3: the H100's FlashAttention-2 fit at 1x forward, 1.04x
		// backward, written at 1,447 / 1,207 = 1.198840 its MI300X rate:
		// 309.8 x 1.198840 = 371.401, 355.8 x 1.198840 = 426.547, 335.0 x
		// 1.04 x 1.198840 = 417.676.
		{3, 1307.4e12, 371.401e12, 426.547e12, 417.676e12},
	} {
		a := InstinctAttention(c.cdna, c.peak)
		if a.Backend != "flash" || !near(a.Fwd.Rate(64), c.fwd64, 1e-5) || !near(a.Fwd.Rate(128), c.fwd128, 1e-5) || !near(a.Bwd.Rate(128), c.bwd128, 1e-5) {
			t.Errorf("CDNA %d: %s forward %g / %g, backward %g; want flash %g / %g, %g",
				c.cdna, a.Backend, a.Fwd.Rate(64), a.Fwd.Rate(128), a.Bwd.Rate(128), c.fwd64, c.fwd128, c.bwd128)
		}
	}
	// The CDNA 3 kernel's per-call terms: the H100's over the speedup, not
	// the clock (forward T0 26.73 us, backward 70.48 / 1.04 = 67.769 us,
	// backward Beta 7.650 / 1.04 = 7.3558 ps an element), and its full
	// blocks' fit likewise (forward 355.5 x 1.198840 = 426.188 TFLOP/s).
	a := InstinctAttention(3, 1307.4e12)
	if !near(a.Fwd.T0, 26.73e-6, 1e-9) || !near(a.Bwd.T0, 67.7692e-6, 1e-5) || !near(a.Bwd.Beta, 7.35577e-12, 1e-5) ||
		a.FullFwd == nil || !near(a.FullFwd.Rate(128), 426.188e12, 1e-5) || a.FullBwd == nil {
		t.Errorf("CDNA 3 attention terms: forward T0 %g, backward T0 %g, Beta %g, full %+v", a.Fwd.T0, a.Bwd.T0, a.Bwd.Beta, a.FullFwd)
	}
	// The H100's own fit is left as measured.
	if h100FlashAttention.Fwd.Rates[1] != 355.8e12 || h100FlashAttention.Bwd.T0 != 70.48e-6 {
		t.Errorf("h100FlashAttention changed: %+v", h100FlashAttention)
	}
	if XGMIShare != 0.75 {
		t.Errorf("xGMI share %g, want 48 / 64", XGMIShare)
	}
}

// TestInstinctHeld: the CDNA 3 parts' held clocks as AMD published them
// (amdMAF), worked by hand. The MI300X holds 1,207 MHz at its 750 W
// against the 1,447 MHz its kernels' rates stand at (the MI325X's), so a
// compute-bound kernel takes 1,447 / 1,207 = 1.19884x (Share 1); the
// MI325X at its 1,000 W holds 1,447: 1x. At rest 75.5 / 700 of the
// limit: 80.893 W and 107.857 W. The MI355X has none.
func TestInstinctHeld(t *testing.T) {
	near := func(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }
	for _, c := range []struct {
		gpu                     string
		limit, mhz, slow, idleW float64
	}{
		{"mi300x", 750, 1207, 1.19884, 80.8929},
		{"mi325x", 1000, 1447, 1, 107.857},
	} {
		h := InstinctHeld(c.gpu)
		if h == nil {
			t.Fatalf("%s: no held clock", c.gpu)
		}
		f := h.Clock(c.limit)
		if !near(f, c.mhz, 1e-9) || !near(h.Slowdown(f), c.slow, 1e-5) || !near(h.IdleW, c.idleW, 1e-5) ||
			h.BurstMHz != 1447 || h.Share != 1 || h.TDPW != c.limit {
			t.Errorf("%s: %g MHz at %g W (slowdown %g, rest %g W, burst %g, share %g); want %g MHz, %g, %g W",
				c.gpu, f, c.limit, h.Slowdown(f), h.IdleW, h.BurstMHz, h.Share, c.mhz, c.slow, c.idleW)
		}
	}
	if h := InstinctHeld("mi355x"); h != nil {
		t.Errorf("mi355x: held clock %+v, want none", h)
	}
}

// TestAMDMAFPerMHz: why InstinctHeld takes a compute-bound kernel's time
// as all of it at the clock (Share 1). AMD's table gives the MI300X and
// MI325X, at their own held clocks, the same FLOPs a MHz in each
// precision within 0.7%: BF16 708 / 1,207 = 0.58658 and 843 / 1,447 =
// 0.58259 TF a MHz, FP16 654 / 1,115 = 0.58655 and 794 / 1,354 = 0.58641,
// FP8 1,273 / 1,230 = 1.03496 and 1,519 / 1,464 = 1.03757. And the
// MI300X's own FP8 over BF16, 1,273 / 708 = 1.79802, is within 0.3% of
// the MI325X's 1.80190 that InstinctFP8 takes for CDNA 3.
func TestAMDMAFPerMHz(t *testing.T) {
	a, b := amdMAF.mi300x, amdMAF.mi325x
	for _, c := range []struct {
		name             string
		a, am, b, bm, ra float64
	}{
		{"BF16", a.bf16, a.bf16MHz, b.bf16, b.bf16MHz, 0.58658e12},
		{"FP16", a.fp16, a.fp16MHz, b.fp16, b.fp16MHz, 0.58655e12},
		{"FP8", a.fp8, a.fp8MHz, b.fp8, b.fp8MHz, 1.03496e12},
	} {
		pa, pb := c.a/c.am, c.b/c.bm
		if math.Abs(pa-c.ra) > 1e-5*c.ra || math.Abs(pa/pb-1) > 0.007 {
			t.Errorf("%s: %g and %g FLOP/s a MHz (%.4f apart), want %g and within 0.7%%", c.name, pa, pb, pa/pb-1, c.ra)
		}
	}
	if r := a.fp8 / a.bf16; math.Abs(r-1.79802) > 1e-5 || math.Abs(r/InstinctFP8(3)-1) > 0.003 {
		t.Errorf("MI300X FP8 over BF16 %g, want 1.79802 within 0.3%% of CDNA 3's %g", r, InstinctFP8(3))
	}
}
