package mechanisms

import (
	"math"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// TestFP8WeightTransposesByHand: a llama of 2 blocks, hidden 512, 8
// heads of 64 (as many key-value heads), SwiGLU FFN 1,024, at tp=2 with
// delayed FP8 and FP8 primary weights. The per-GPU weights of a block's
// four linear layers, by hand: qkv 512 x (8 + 2 x 8) x 64 / 2 =
// 393,216; proj 512 / 2 x 512 = 131,072; fc1 512 x (2 x 1,024) / 2 =
// 524,288; fc2 1,024 / 2 x 512 = 262,144: 1,310,720 a block.
//   - fp8-transpose-cache=off: each micro-batch's backward transposes
//     the four, a kernel each reading and writing a byte an element,
//     for both blocks of the stage (8 launches), nothing forward;
//   - with the cache (the default): nothing a micro-batch.
//
// The step's weight cast (StepKernels, over the stage's lw = 10^6 block
// parameters, 2 bytes read an element): written row- and column-wise (2
// bytes) without FP8 primary weights; the row-wise copy only (1) with
// them and the cache off; nothing under LoRA with them (a frozen FP8
// base is never cast).
func TestFP8WeightTransposesByHand(t *testing.T) {
	p, err := plan.PodOf("dgx-h100", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,kv_heads=8,ffn=1024,seq=1024,vocab=1000,batch=8")
	h := &p.Hardware
	k := func(e float64) float64 {
		return cost.Kernel{Class: graph.ClassElementwise, Read: e, Writes: e}.Time(h)
	}
	tr := 2 * (k(393216) + k(131072) + k(524288) + k(262144))
	const lw = 1e6
	cast := func(writes float64) float64 {
		return cost.Kernel{Class: graph.ClassElementwise, FLOPs: lw, Read: 2 * lw, Writes: writes * lw}.Time(h)
	}
	const fp = "tp=2,mbs=1,sp=on,fp8=delayed"
	for _, c := range []struct {
		name, strategy string
		bwd, launches  float64
		step           float64
	}{
		{"cache off", fp + ",fp8-params=on,fp8-transpose-cache=off", tr, 8, cast(1)},
		{"cache on", fp + ",fp8-params=on", 0, 0, cast(2)},
		{"bf16 weights", fp, 0, 0, cast(2)},
		{"lora cache off", fp + ",fp8-params=on,fp8-transpose-cache=off,peft=lora", tr, 8, 0},
		{"lora cache on", fp + ",fp8-params=on,peft=lora", 0, 0, 0},
		{"lora bf16 weights", fp + ",peft=lora", 0, 0, cast(2)},
	} {
		s, err := plan.ParseStrategy(c.strategy)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sh := &cost.Shard{M: m, Plan: pl, H: h, Pod: &p, TPG: plan.Group{PerNode: 2, Nodes: 1}, Tokens: 1024, FP8Fwd: 0.5, FP8Bwd: 0.5}
		st := cost.Stage{Index: 0, Layers: lw}
		f, b := FP8Casts{}.StageKernels(sh, &st)
		if f.Busy != 0 || f.Launches != 0 || math.Abs(b.Busy-c.bwd) > 1e-15 || b.Launches != c.launches {
			t.Errorf("%s: %g s forward, %g s and %g launches backward; want 0, %g, %g", c.name, f.Busy, b.Busy, b.Launches, c.bwd, c.launches)
		}
		if got := (FP8Casts{}).StepKernels(sh, []cost.Stage{st}, 0); math.Abs(got-c.step) > 1e-15 {
			t.Errorf("%s: the step's weight cast %g s, want %g", c.name, got, c.step)
		}
	}
	// Sanity of the hand figure: the transposes move 2 x 2 x 1,310,720
	// bytes, no faster than the preset's peak memory rate.
	if floor := 4 * 1310720 / h.MemBandwidth; tr < floor {
		t.Errorf("transposes %g s, under their bytes' %g s at peak", tr, floor)
	}
}
