package adapters

import (
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

func mustSpec(t testing.TB, text string) transformer.Spec {
	t.Helper()
	m, err := transformer.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMoEAdapterParamsByHand: Qwen3-30B-A3B's blocks (hidden 2,048, 32
// query heads and 4 key-value heads of 128, 128 experts of FFN 768,
// SwiGLU, top 8) at rank r = 8, worked by hand, r x (in + out) a
// target:
//   - qkv: 8 x (2,048 + (32 + 2 x 4) x 128 / T): 57,344 at T = 1, 26,624
//     at T = 4; proj: 8 x (4,096 / T + 2,048): 49,152 and 24,576;
//   - the experts' shared adapters (ETP 1, whatever T): fc1 8 x (2,048 +
//     2 x 768) = 28,672, fc2 8 x (768 + 2,048) = 22,528;
//   - a block, every target: 157,696 at T = 1, 102,400 at T = 4; the
//     attention's alone (Bridge's Qwen3-30B-A3B recipe): 106,496;
//   - a token's forward meets the attention's and 8 copies' of the
//     experts': 48 x (106,496 + 8 x 51,200) = 24,772,608; a stage of 12
//     blocks at T = 4: 1,228,800.
func TestMoEAdapterParamsByHand(t *testing.T) {
	m := mustSpec(t, "qwen3-30b-a3b:seq=2048,batch=32")
	dense := mustSpec(t, "llama3-8b:seq=1024,batch=8")
	all := plan.FineTune{LoRARank: 8}
	attn := plan.FineTune{LoRARank: 8, LoRATargets: plan.LoRAQKV | plan.LoRAProj}
	routed, shared := Experts(all, &m, 4, 1)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"routed experts", routed, 51200},
		{"shared experts (none)", shared, 0},
		{"block T=1", MoE(all, &m, 1, 1), 157696},
		{"block T=4", MoE(all, &m, 4, 1), 102400},
		{"attention only", MoE(attn, &m, 1, 1), 106496},
		{"token", Token(all, &m), 24772608},
		{"stage of 12 at T=4", Stage(all, &m, 12, 0, 4, 1), 1228800},
		{"dense model's stage", Stage(plan.FineTune{LoRARank: 8}, &dense, 2, 0, 1, 1),
			2 * Block(plan.FineTune{LoRARank: 8}, &dense, 1)},
	} {
		if c.got != c.want {
			t.Errorf("%s: %g adapter parameters, want %g", c.name, c.got, c.want)
		}
	}
	// Shared experts (a Qwen2-MoE-like block: 4 experts' FFN shared, 256
	// each, hidden 512, T = 2, ETP = 1, r = 4, fc1 and fc2 only): routed
	// 4 x (512 + 512) + 4 x (256 + 512) = 7,168; shared 4 x (512 +
	// 2,048 / 2) + 4 x (1,024 / 2 + 512) = 10,240.
	q := mustSpec(t, "llama:layers=2,hidden=512,heads=8,seq=1024,vocab=1000,batch=8,experts=8,topk=2,expert_ffn=256,shared=4")
	routed, shared = Experts(plan.FineTune{LoRARank: 4, LoRATargets: plan.LoRAFC1 | plan.LoRAFC2}, &q, 2, 1)
	if routed != 7168 || shared != 10240 {
		t.Errorf("shared experts: routed %g, shared %g adapter parameters, want 7168, 10240", routed, shared)
	}
}
