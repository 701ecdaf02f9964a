package plans

import (
	"fmt"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/workloads/export"
)

// Check is export's verdict on plan s of model m on gpus GPUs for target
// (--to's or --for's FORMAT[@VERSION]: megatron, torchtitan, deepspeed,
// torch-plan; "any": every plan), without writing anything: nil where
// placer export --to target writes the plan, else the one-line refusal
// that export gives. It runs each framework's own writer
// (MegatronArgs, TorchTitanTransformer, DeepSpeedTransformer,
// NewTransformerPlan) and drops what it wrote, so that the refusals
// export makes and the ones placer search --for sets aside are the same
// checks, not two copies of them.
func Check(target string, m transformer.Spec, s plan.Strategy, gpus int) error {
	format, version, err := export.SplitFormat(target)
	if err != nil {
		return err
	}
	switch format {
	case "any":
		return nil
	case "megatron":
		_, err = MegatronArgs(m, s, gpus)
	case "megatron-bridge":
		_, err = BridgeOverrides(m, s, gpus)
	case "torchtitan":
		_, err = TorchTitanTransformer(m, s, gpus, version)
	case "deepspeed":
		_, _, err = DeepSpeedTransformer(m, s, gpus, version, "")
	case "torch-plan":
		_, err = NewTransformerPlan(m, s, gpus)
	default:
		err = fmt.Errorf("export: --to %s: a transformer at cluster scale exports to %s and torch-plan", target, strings.Join(SearchTargets[:len(SearchTargets)-1], ", "))
	}
	return err
}
