package plans

import (
	"slices"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestBridgeExpertLoRA: LoRA on a model with experts writes the expert
// adapters' layout placer prices (one shared adapter an expert-parallel
// rank, the full rank) where linear_fc1 or linear_fc2 is a target; with
// the experts not adapted (qkv+proj), or on a dense model, neither key.
func TestBridgeExpertLoRA(t *testing.T) {
	dense, moe := bridgeModels(t)
	keys := []string{"+peft.share_expert_adapters=true", "+peft.normalize_moe_lora=false"}
	for _, c := range []struct {
		name    string
		experts bool
		targets plan.LoRATargets
		want    bool
	}{
		{"experts adapted", true, 0, true},
		{"fc2 alone", true, plan.LoRAFC2, true},
		{"experts frozen, not adapted", true, plan.LoRAQKV | plan.LoRAProj, false},
		{"dense model", false, 0, false},
	} {
		s := plan.Strategy{Replicas: 8, MicroBatchSize: 1, MicroBatches: 2, DistOpt: true,
			FineTune: plan.FineTune{LoRARank: 8, LoRATargets: c.targets}}
		m := dense
		if c.experts {
			m = moe
			s.Experts, s.ExpertTensor = 4, 1
		}
		got, err := BridgeOverrides(m, s, 8)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, k := range keys {
			if slices.Contains(got, k) != c.want {
				t.Errorf("%s: %s written %v, want %v (%v)", c.name, k, !c.want, c.want, got)
			}
		}
	}
}
