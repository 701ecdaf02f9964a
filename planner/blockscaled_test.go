package planner

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// TestBlockScaledParse: fp8=mxfp8 and fp4=nvfp4 are read into
// Strategy.FP8 and written back under their own keys; an FP4 recipe
// that is not NVFP4 is refused.
func TestBlockScaledParse(t *testing.T) {
	for _, c := range []struct {
		text, fp8, written, err string
	}{
		{"dp=8,fp8=mxfp8", plan.FP8MX, "fp8=mxfp8", ""},
		{"dp=8,fp4=nvfp4", plan.FP4NV, "fp4=nvfp4", ""},
		{"dp=8,fp4=NVFP4", plan.FP4NV, "fp4=nvfp4", ""},
		{"dp=8,fp4=none", "", "", ""},
		{"dp=8,fp4=mxfp4", "", "", "not an FP4 recipe"},
	} {
		s, err := plan.ParseStrategy(c.text)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want an error with %q", c.text, err, c.err)
			}
			continue
		}
		if err != nil || s.FP8 != c.fp8 {
			t.Errorf("%s: FP8 %q (%v), want %q", c.text, s.FP8, err, c.fp8)
			continue
		}
		if got := s.String(); c.written != "" && !strings.Contains(got, c.written) || c.written == "" && strings.Contains(got, "fp") {
			t.Errorf("%s: written %q, want it to hold %q", c.text, got, c.written)
		}
	}
}

// TestBlockScaledRefused: MXFP8 and NVFP4 are refused in one line on
// GPUs without block-scaled tensor cores (H100, H200: fourth-generation
// tensor cores) and evaluated on Blackwell.
func TestBlockScaledRefused(t *testing.T) {
	m := mustSpec(t, "llama3-8b:seq=8192,batch=128")
	for _, c := range []struct {
		pod, strategy, err string
	}{
		{"dgx-h100:1", "dp=8,fp8=mxfp8", "fp8=mxfp8 on h100: its GPUs have no block-scaled"},
		{"dgx-h200:1", "dp=8,fp4=nvfp4", "fp4=nvfp4 on h200: its GPUs have no block-scaled"},
		{"dgx-b200:1", "dp=8,fp8=mxfp8", ""},
		{"gb300-nvl72:1,per-node=8", "dp=8,fp4=nvfp4", ""},
	} {
		p, err := plan.ParsePod(c.pod)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := plan.ParseStrategy(c.strategy)
		_, err = Evaluate(m, s, p)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s on %s: %v", c.strategy, c.pod, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s on %s: %v, want one line with %q", c.strategy, c.pod, err, c.err)
		}
	}
}

// TestBlockScaledGEMMs: a block-scaled GEMM takes the BF16 GEMM's time
// over its published speedup (kernels.BlackwellBlockScaled, Transformer
// Engine's B300 GEMM times): MXFP8 2.365 / 4.250 = 0.55647 of it forward
// and 4.797 / 8.852 = 0.54191 backward on every Blackwell part; NVFP4
// on the B300 1.254 / 4.250 forward and 2.510 / 8.852 backward at an FP4
// peak 13,125 / 2,250 = 5.8333 times the BF16, so on B200 (9,000 /
// 2,250 = 4x) 0.29506 x 5.8333 / 4 = 0.43029 and 0.28356 x 5.8333 / 4 =
// 0.41352, on GB300 (15,000 / 2,500 = 6x) 0.28686 and 0.27568.
func TestBlockScaledGEMMs(t *testing.T) {
	m := mustSpec(t, "llama3-8b:seq=8192,batch=128")
	for _, c := range []struct {
		pod, recipe string
		fwd, bwd    float64 // shares of the BF16 GEMM's time
	}{
		{"dgx-b200:1", plan.FP8MX, 0.55647, 0.54191},
		{"dgx-b200:1", plan.FP4NV, 0.43029, 0.41352},
		{"gb300-nvl72:1", plan.FP8MX, 0.55647, 0.54191},
		{"gb300-nvl72:1", plan.FP4NV, 0.28686, 0.27568},
	} {
		p, _ := plan.ParsePod(c.pod)
		pl := plan.Plan{TP: 1, PP: 1, DP: 8, CP: 1, Strategy: plan.Strategy{FP8: c.recipe}}
		co := newCoster(m, pl, &p, 1, 8192)
		if math.Abs(co.FP8Fwd/c.fwd-1) > 1e-4 || math.Abs(co.FP8Bwd/c.bwd-1) > 1e-4 {
			t.Errorf("%s %s: %g / %g of the BF16 GEMM, want %g / %g", c.pod, c.recipe, co.FP8Fwd, co.FP8Bwd, c.fwd, c.bwd)
		}
	}
}

// TestBlockScaledBytes: the cast of 1,024 BF16 elements reads 2,048
// bytes and writes both copies with their scales: MXFP8 2 x (1,024 +
// 1,024/32) = 2,112 bytes, NVFP4 2 x (512 + 1,024/16) = 1,152 (what a
// stage keeps of them is planner/memory's TestBlockScaledCopies).
func TestBlockScaledBytes(t *testing.T) {
	for _, c := range []struct {
		recipe string
		writes float64
	}{
		{plan.FP8MX, 2112},
		{plan.FP4NV, 1152},
	} {
		k := mechanisms.BlockCast(c.recipe, 1024)
		if k.Read != 2048 || !near(k.Writes, c.writes) {
			t.Errorf("%s cast: read %g, wrote %g; want 2048, %g", c.recipe, k.Read, k.Writes, c.writes)
		}
	}
}

// TestPerNode: per-node=N uses N GPUs of each node with their share of
// its NICs: 64 of an NVL72 rack's 72 GPUs and 64 of its 72 NICs, four
// racks 256 GPUs; more than the node holds is refused.
func TestPerNode(t *testing.T) {
	p, err := plan.ParsePod("gb200-nvl72:4,per-node=64")
	if err != nil || p.GPUs() != 256 || p.PerNode != 64 || p.NICs != 64 || p.HostGPUs() != 4 {
		t.Errorf("gb200-nvl72:4,per-node=64: %d GPUs, %d a node, %d NICs, %d a host (%v); want 256, 64, 64, 4", p.GPUs(), p.PerNode, p.NICs, p.HostGPUs(), err)
	}
	if _, err := plan.ParsePod("dgx-b200:1,per-node=16"); err == nil || !strings.Contains(err.Error(), "at most the node's 8") {
		t.Errorf("per-node=16 on a DGX: %v, want a refusal", err)
	}
}

// TestBlockScaledCasts: the quantization of 1e9 BF16 elements on a B200
// (8 TB/s; elementwise kernels at 0.85 of it, reductions at 0.75; no
// launch overhead): MXFP8 one pass of 2 + 2 x (1 + 1/32) = 4.0625 bytes
// an element, 4.0625e9 / 6.8e12 = 597.43 us, one kernel; NVFP4 an amax
// pass reading 2 bytes (2e9 / 6e12 = 333.33 us) before its cast of 2 + 2 x
// (1/2 + 1/16) = 3.125 bytes (459.56 us): 792.89 us, two kernels;
// per-tensor current scaling the same amax before a cast of 3 bytes
// (441.18 us): 774.51 us, two kernels.
func TestBlockScaledCasts(t *testing.T) {
	h, _ := roofline.Preset("b200")
	h.Launch = 0
	for _, c := range []struct {
		recipe   string
		busy     float64
		launches float64
	}{
		{plan.FP8MX, 597.43e-6, 1},
		{plan.FP4NV, 792.89e-6, 2},
		{plan.FP8Current, 774.51e-6, 2},
	} {
		co := coster{Shard: cost.Shard{H: &h, Plan: plan.Plan{Strategy: plan.Strategy{FP8: c.recipe}}, FP8Fwd: 0.5, FP8Bwd: 0.5}}
		p := mechanisms.Casts(&co.Shard, 1e9)
		if math.Abs(p.Busy/c.busy-1) > 1e-5 || p.Launches != c.launches {
			t.Errorf("%s: %g s in %g kernels, want %g in %g", c.recipe, p.Busy, p.Launches, c.busy, c.launches)
		}
	}
}
