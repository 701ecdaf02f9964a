package plans

import (
	"fmt"
	"slices"
	"strings"

	"github.com/placer/placer/planner/plan"
)

// The keys of a plan at cluster scale (plan.Strategy.String's) each
// target writes a setting for: those whose declaration (plan.Keys) names
// the target among its Exports. Each writer refuses the others in one
// line naming the key and the target (unwritten), after its own, more
// precise refusals. imbalance, the load of the busiest expert-parallel
// rank placer costed, is how the tokens route, which no framework sets:
// every target refuses it. The keys a mechanism declares (plan.AddKey)
// are among them: this package imports planner/mechanisms, whose
// registration adds them before these are read. torchtitan's own stack (stack=torchtitan-0.2)
// is what it runs: written by writing for torchtitan (titanStack), any
// other stack refused. hidden-dropout=0 is what its decoders run:
// torchtitan 0.2.2's and 0.3.0's models (models/llama3, qwen3,
// deepseek_v3) have no dropout module, so there is nothing to write.
var (
	megatronKeys   = plan.KeysExportedTo(plan.ExportMegatron)
	bridgeKeys     = plan.KeysExportedTo(plan.ExportBridge)
	torchtitanKeys = plan.KeysExportedTo(plan.ExportTorchtitan)
	deepspeedKeys  = plan.KeysExportedTo(plan.ExportDeepSpeed)
	torchPlanKeys  = plan.KeysExportedTo(plan.ExportTorchPlan)
)

// titanStack is the named stack torchtitan runs as it is.
const titanStack = "torchtitan-0.2"

// unwritten refuses the first key of plan s (as s.String writes it) that
// target writes no setting for: writes are the keys it does.
func unwritten(target string, s plan.Strategy, writes []string) error {
	for _, kv := range strings.Split(s.String(), ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "" || slices.Contains(writes, k) && !(k == "stack" && target == "torchtitan" && v != titanStack):
		case k == "imbalance":
			return fmt.Errorf("export: %s: imbalance=%s is the load placer costed on the busiest expert-parallel rank, how the tokens route, which no framework sets: export the plan without it", target, v)
		default:
			return fmt.Errorf("export: %s: %s=%s has no %s setting placer writes (it writes %s)", target, k, v, target, strings.Join(writes, ", "))
		}
	}
	return nil
}
