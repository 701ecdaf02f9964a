package scale

import (
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/scale/plan"
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
// over its tensor peak's ratio to the BF16 peak (the dense peaks of
// roofline's hardware_blackwell.go): MXFP8 at the FP8 peak, 4,500 /
// 2,250 = 2x on B200, 5,000 / 2,500 on GB300; NVFP4 at the FP4 peak,
// 9,000 / 2,250 = 4x on B200, 15,000 / 2,500 = 6x on GB300.
func TestBlockScaledGEMMs(t *testing.T) {
	m := mustSpec(t, "llama3-8b:seq=8192,batch=128")
	for _, c := range []struct {
		pod, recipe string
		share       float64 // of the BF16 GEMM's time, forward and backward
	}{
		{"dgx-b200:1", plan.FP8MX, 1.0 / 2},
		{"dgx-b200:1", plan.FP4NV, 1.0 / 4},
		{"gb300-nvl72:1", plan.FP8MX, 1.0 / 2},
		{"gb300-nvl72:1", plan.FP4NV, 1.0 / 6},
	} {
		p, _ := plan.ParsePod(c.pod)
		pl := plan.Plan{T: 1, P: 1, D: 8, C: 1, Strategy: plan.Strategy{FP8: c.recipe}}
		co := newCoster(m, pl, &p, 1, 8192)
		if !near(co.fp8, c.share) || !near(co.fp8b, c.share) {
			t.Errorf("%s %s: %g / %g of the BF16 GEMM, want %g", c.pod, c.recipe, co.fp8, co.fp8b, c.share)
		}
	}
}

// TestBlockScaledBytes: the cast of 1,024 BF16 elements reads 2,048
// bytes and writes both copies with their scales: MXFP8 2 x (1,024 +
// 1,024/32) = 2,112 bytes, NVFP4 2 x (512 + 1,024/16) = 1,152 (what a
// stage keeps of them is evaluate/scale/memory's TestBlockScaledCopies).
func TestBlockScaledBytes(t *testing.T) {
	for _, c := range []struct {
		recipe string
		writes float64
	}{
		{plan.FP8MX, 2112},
		{plan.FP4NV, 1152},
	} {
		k := blockCast(c.recipe, 1024)
		if k.read != 2048 || !near(k.writes, c.writes) {
			t.Errorf("%s cast: read %g, wrote %g; want 2048, %g", c.recipe, k.read, k.writes, c.writes)
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
