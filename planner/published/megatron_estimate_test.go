package published

import (
	"math"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestMegatronLMEstimate: Megatron-LM's theoretical_memory_usage.py as
// MegatronLMEstimate ports it, by hand for Korthikanti et al.'s 22B
// (48 layers, hidden 6,144, 64 heads, sequence 2,048, vocabulary 51,200
// tied, TP 8, micro-batch 1, no sequence parallelism):
// weights: a layer 2h(4h + 2) + 4h^2 = 453,009,408, the blocks 48 of
// them and the final norm 2h, 21,744,463,872, the embedding 314,572,800,
// over TP 8 at 18 bytes: 49,632,832,512 (the norms over TP too, as the
// script divides them); activations
// (compute_activation_memory_without_sp): sbh(10 + 24/8) x 48 +
// 8sb + sbh, the logits and the final norm's output (sbV/8 + sbh) x 2,
// all x 1.05: 8,311,502,438.4.
func TestMegatronLMEstimate(t *testing.T) {
	m := mustSpec(t, "gpt:layers=48,hidden=6144,heads=64,seq=2048,vocab=51200,batch=4")
	pl := plan.Plan{TP: 8, PP: 1, DP: 1, VP: 1, CP: 1, MBS: 1, NumMicro: 4}
	w, a := MegatronLMEstimate(m, pl)
	if w != 49_632_832_512 {
		t.Errorf("weights and optimizer %.0f, want 49,632,832,512", w)
	}
	if math.Abs(a-8_311_502_438.4) > 1e-3 {
		t.Errorf("activations %.1f, want 8,311,502,438.4", a)
	}
}
