package memory

import (
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// TestLoRAExpertsMemoryByHand: a llama MoE model of 2 blocks, hidden 512
// (8 heads), 8 experts of FFN 256 (SwiGLU), top 2, at rank r = 16 on one
// GPU of tp=1, ep=8, etp=1, balanced (imbalance 1), n = 1,024 tokens a
// micro-batch, worked by hand:
//   - what a block's adapters keep, an r-wide BF16 row each: qkv and
//     proj 1,024 rows each, the experts' fc1 and fc2 adapters the 1,024 x
//     2 = 2,048 rows the rank receives each: (2 x 1,024 + 2 x 2,048) x 16
//     x 2 = 196,608 bytes, 393,216 for the stage; the experts frozen and
//     not adapted (qkv+proj): 2 x 1,024 x 32 = 65,536 a block, 131,072;
//   - the stage's adapters: qkv 16 x (512 + 1,536), proj 16 x (512 +
//     512), fc1 16 x (512 + 512), fc2 16 x (256 + 512) = 32,768 + 16,384
//   - 16,384 + 12,288 = 77,824 a block, 155,648 for the two.
func TestLoRAExpertsMemoryByHand(t *testing.T) {
	m := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=1024,vocab=1000,batch=8,experts=8,topk=2,expert_ffn=256")
	for _, c := range []struct {
		name           string
		targets        plan.LoRATargets
		acts, adapters float64
	}{
		{"every target", 0, 393216, 155648},
		{"experts frozen", plan.LoRAQKV | plan.LoRAProj, 131072, 2 * (32768 + 16384)},
	} {
		pl := plan.Plan{TP: 1, PP: 1, DP: 8, CP: 1, EP: 8, ETP: 1, EDP: 1, VP: 1, Stages: []int{2}, TPs: []int{1},
			Strategy: plan.Strategy{Imbalance: 1, FineTune: plan.FineTune{LoRARank: 16, LoRATargets: c.targets}}}
		co := counter{m: m, pl: pl, tokens: 1024}
		st := StageOf(&m, &pl, 0, float64(transformer.LayerParams(m)), nil)
		if got := co.stageLoRAActivations(0, &st); got != c.acts {
			t.Errorf("%s: adapters keep %g bytes, want %g", c.name, got, c.acts)
		}
		if st.Adapters != c.adapters {
			t.Errorf("%s: %g adapter parameters, want %g", c.name, st.Adapters, c.adapters)
		}
	}
}
