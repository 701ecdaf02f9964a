package mechanisms

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// TestFP32AccumAddByHand: the adds of a block of hidden 1,024, 8 heads
// of 128, 2 KV heads, a gated MLP of 4,096, over TP 2, on hardware of
// 1 TB/s at every kernel, no launch cost and compute out of the way:
//   - attention: qkv 1,024 x (8 + 2 x 2) x 128 / 2 = 786,432, o 8 x 128
//     x 1,024 / 2 = 524,288, the norm's 1,024 whole: 1,311,744
//     parameters x 10 bytes = 13,117,440 bytes, 13.11744 us, 3 launches;
//   - MLP: gate and up 2 x 1,024 x 4,096 / 2 = 4,194,304, down 1,024 x
//     4,096 / 2 = 2,097,152, the norm's 1,024: 6,292,480 x 10 =
//     62,924,800 bytes, 62.9248 us, 3 launches;
//   - nothing in the forward; with the key off, or in a model with
//     experts, not its to price.
func TestFP32AccumAddByHand(t *testing.T) {
	h, err := roofline.Preset("v100")
	if err != nil {
		t.Fatal(err)
	}
	h.MemBandwidth, h.Launch = 1e12, 0
	h.FP32, h.FP16, h.FP16Tensor, h.TF32 = 1e18, 1e18, 1e18, 1e18
	for c := range h.ComputeEff {
		h.ComputeEff[c], h.MemEff[c] = 1, 1
	}
	shard := func(m transformer.Spec, key string) *cost.Shard {
		s, err := plan.ParseStrategy("tp=2," + key)
		if err != nil {
			t.Fatal(err)
		}
		pl := plan.Plan{Strategy: s, TP: 2, PP: 1, DP: 1, CP: 1, VP: 1, TPs: []int{2}}
		return &cost.Shard{M: m, Plan: pl, H: &h, TPG: plan.Group{PerNode: 2, Nodes: 1}, Tokens: 4096}
	}
	m := mustSpec(t, "llama:layers=2,hidden=1024,heads=8,kv_heads=2,ffn=4096,seq=4096,vocab=32000,batch=8")
	on := shard(m, "fp32-accum-add=on")
	if !cost.Applies(FP32AccumAdd{}, on) {
		t.Fatal("fp32-accum-add=on: not priced")
	}
	af, ab := FP32AccumAdd{}.Attention(on)
	mf, mb := FP32AccumAdd{}.MLP(on)
	for _, c := range []struct {
		name           string
		got            cost.Phase
		busy, launches float64
	}{
		{"attention forward", af, 0, 0},
		{"attention backward", ab, 13.11744e-6, 3},
		{"MLP forward", mf, 0, 0},
		{"MLP backward", mb, 62.9248e-6, 3},
	} {
		if math.Abs(c.got.Busy-c.busy) > 1e-15 || c.got.Launches != c.launches {
			t.Errorf("%s: %g s, %g launches; want %g s, %g", c.name, c.got.Busy, c.got.Launches, c.busy, c.launches)
		}
	}
	if cost.Applies(FP32AccumAdd{}, shard(m, "fp32-accum-add=off")) {
		t.Error("priced with the key off")
	}
	moe, ok := transformer.Preset("mixtral-8x7b")
	if !ok {
		t.Fatal("no mixtral-8x7b preset")
	}
	if cost.Applies(FP32AccumAdd{}, shard(moe, "fp32-accum-add=on")) {
		t.Error("priced on a model with experts")
	}
}
