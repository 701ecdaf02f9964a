package plan

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/kernels"
)

// TestNVL72GroupsOnNVLink: with tensor parallelism 8, the data-parallel
// group of 9 sits in one NVL72 rack (72 / 8 = 9 ranks a domain) and its
// all-gather of 1 GB runs on NVLink: 8/9 x 1e9 / 724e9 + 8 x 6 us =
// 1.27575 ms; on nine DGX B200s the same group has one rank a node and
// crosses the NICs: 8/9 x 1e9 / 47e9 (a GPU's 50 GB/s NIC at the 47
// reached) + 8 x 10 us = 18.9925 ms.
func TestNVL72GroupsOnNVLink(t *testing.T) {
	m := mustSpec(t, "llama3-70b:seq=4096,batch=36")
	s, err := ParseStrategy("tp=8,pp=1,dp=9,sp=on,distopt=on")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pod  string
		dp   Group
		want float64
	}{
		{"gb200-nvl72:1", Group{PerNode: 9, Nodes: 1}, 1.275747e-3},
		{"dgx-b200:9", Group{PerNode: 1, Nodes: 9}, 18.99253e-3},
	} {
		p, err := ParsePod(c.pod)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := Resolve(m, s, p)
		if err != nil {
			t.Fatal(err)
		}
		_, dp := pl.Groups(p, 0)
		if dp != c.dp {
			t.Errorf("%s: data-parallel group %+v, want %+v", c.pod, dp, c.dp)
		}
		if got, _ := p.Collective(roofline.AllGather, dp, 1e9); !within(got, c.want, 1e-6) {
			t.Errorf("%s: all-gather of 1 GB over %+v: %g s, want %g", c.pod, dp, got, c.want)
		}
	}
}

// TestBlackwellFP8Speedups: an fp8= plan's GEMMs on a Blackwell pod run
// at Transformer Engine's published B300 per-layer GEMM times' ratios
// (kernels' teGEMMs, pre-quantized): per-tensor FP8 4.250 / 2.158 = 1.9694
// forward, (4.434 + 4.418) / (2.329 + 2.325) = 1.9020 backward; blockwise
// (MXFP8 on Blackwell) 13.102 / 7.162 = 1.8294 both ways; the same on
// every Blackwell part (each has twice its BF16 peak in FP8). The H200
// keeps the H100's measured 1.850 / 1.766.
func TestBlackwellFP8Speedups(t *testing.T) {
	for _, c := range []struct {
		pod, recipe string
		fwd, bwd    float64
	}{
		{"dgx-b200", FP8Current, 1.9694, 1.9020},
		{"dgx-b200", FP8Blockwise, 1.8294, 1.8294},
		{"gb300-nvl72", FP8Current, 1.9694, 1.9020},
		{"dgx-h200", FP8Current, 1.850, 1.766},
	} {
		p, err := ParsePod(c.pod)
		if err != nil {
			t.Fatal(err)
		}
		fwd, bwd := p.Kernels.FP8Speedups(c.recipe == FP8Blockwise, p.Hardware.PeakFLOPS(graph.ClassMatMul, graph.BF16))
		if !within(fwd, c.fwd, 1e-4) || !within(bwd, c.bwd, 1e-4) {
			t.Errorf("%s fp8=%s: %g / %g, want %g / %g", c.pod, c.recipe, fwd, bwd, c.fwd, c.bwd)
		}
	}
}

// TestBlackwellGEMMAndAttention: a Blackwell pod's GEMMs at the H100's
// 0.756 of the BF16 peak times the published B300-over-H200-NVL ratio
// (kernels' teGEMMs:
// 19.1727e12 FLOPs a layer in (12.758 + 13.102) / 2 = 12.930 ms on a
// 2,250 TF B300 is 0.65903 of its peak; in (32.014 + 31.909) / 2 =
// 31.9615 ms on an 835.5 TF H200 NVL 0.71798): 0.756 x 0.91789 =
// 0.69393 of its SMs' rate at the B200's clock (smPeak: 2,250 TF x SMs /
// 148), so of the datasheet peak 0.69393 on B200, x 2,250 / 2,500 =
// 0.62454 on GB200 (the same 148 SMs), x 2,432.43 / 2,500 = 0.67518 on
// GB300 (160 SMs). cuDNN's attention at head dimension 128 forward:
// 1,613 / 1.3 = 1,240.8 TFLOP/s on B200, the same on GB200 (the same
// SMs at the same clock, the same exponentials per tensor FLOP); on
// GB300, whose Blackwell Ultra doubles the exponentials (32 MUFU.EX2 a
// clock an SM), 1,946.6 at a 2,500 TF rate (kernels' TestAttentionByGPU:
// both of its terms follow the rate) x 2,432.43 / 2,500 = 1,894.0; its
// Beta the H100's 0.5461e-12 s x 132 / 148 SMs = 0.48706e-12, x 132 / 160
// on GB300 = 0.45053e-12; T0 the H100's 11.62 us.
func TestBlackwellGEMMAndAttention(t *testing.T) {
	for _, c := range []struct {
		pod              string
		gemm, rate, beta float64
	}{
		{"dgx-b200", 0.69393, 1240.8e12, 0.48706e-12},
		{"gb200-nvl72", 0.62454, 1240.8e12, 0.48706e-12},
		{"gb300-nvl72", 0.67518, 1894.0e12, 0.45053e-12},
	} {
		p, err := ParsePod(c.pod)
		if err != nil {
			t.Fatal(err)
		}
		k := p.Kernels
		if !within(k.GEMM, c.gemm, 1e-4) || len(k.Attention) != 1 || k.Attention[0].Backend != "cudnn" {
			t.Fatalf("%s: GEMM %g, attention %v", c.pod, k.GEMM, k.Attention)
		}
		a := k.Attention[0].Fwd
		if !within(a.Rate(128), c.rate, 1e-4) || !within(a.Beta, c.beta, 1e-4) || a.T0 != 11.62e-6 {
			t.Errorf("%s: attention forward %g FLOP/s at d 128, Beta %g, T0 %g; want %g, %g, 11.62e-6",
				c.pod, a.Rate(128), a.Beta, a.T0, c.rate, c.beta)
		}
	}
	if h := kernels.H100.Attention[0].Fwd; h.Rates[1] != 663.2e12 || h.Beta != 0.5461e-12 {
		t.Error("the Blackwell attention scaled the H100's fit in place")
	}
}

// TestBlackwellBlockScaled: a Blackwell pod's MXFP8 GEMMs at 4.250 /
// 2.365 = 1.7970 the BF16 GEMM's speed forward and 8.852 / 4.797 = 1.8453
// backward; its NVFP4 GEMMs at the B300's 4.250 / 1.254 = 3.3892 and
// 8.852 / 2.510 = 3.5267 times its FP4/BF16 peak ratio over the B300's
// 13,125 / 2,250 = 5.8333: on B200 (9,000 / 2,250 = 4) 2.3240 and
// 2.4183, on GB300 (15,000 / 2,500 = 6) 3.4860 and 3.6275.
func TestBlackwellBlockScaled(t *testing.T) {
	for _, c := range []struct {
		pod                string
		mxf, mxb, nvf, nvb float64
	}{
		{"dgx-b200", 1.7970, 1.8453, 2.3240, 2.4183},
		{"gb300-nvl72", 1.7970, 1.8453, 3.4860, 3.6275},
	} {
		p, err := ParsePod(c.pod)
		if err != nil {
			t.Fatal(err)
		}
		k := p.Kernels
		if !within(k.MXFP8Fwd, c.mxf, 1e-4) || !within(k.MXFP8Bwd, c.mxb, 1e-4) ||
			!within(k.NVFP4Fwd, c.nvf, 1e-4) || !within(k.NVFP4Bwd, c.nvb, 1e-4) {
			t.Errorf("%s: MXFP8 %g / %g, NVFP4 %g / %g; want %g / %g, %g / %g", c.pod,
				k.MXFP8Fwd, k.MXFP8Bwd, k.NVFP4Fwd, k.NVFP4Bwd, c.mxf, c.mxb, c.nvf, c.nvb)
		}
	}
}

// near reports whether got is want to 1e-9 (relative above 1).
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// within is whether got is want to rel of want.
func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }
