package mechanisms

import (
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// Registered is the mechanisms, one registration line each, in the
// order their kernels join a layer and a figure's provenance lists them
// (a duplicate name, of a mechanism or of a plan key it declares, stops
// the program at its start, and the package's tests with it). A
// mechanism switched on by a key of its own declares the key in its own
// file (keyed) and its line here adds it to the plan's keys (AddKeys).
var Registered = mustRegister(
	Ring{},
	TokenDispatch{},
	RouterAuxLoss{},
	RandomRouting{},
	TEGroupedGEMM{},
	FP8Padding{},
	RankBudget{},
	LoRA{},
	FP8Casts{},
	TorchaoFloat8{},
	AmaxSync{},
	LAMB{},
	DistLAMB{},
	Zero1AllReduce{},
	HybridZero{},
	FP32AccumAdd{},
	PowerLimit{},
	Adam{},
	FSDP2{},
	SMContention{},
	HostIssue{},
	GraphStepSync{},
	FirstLastBF16{},
)

// keyed is a mechanism that declares plan keys of its own, in its own
// file (plan.SwitchKey: held in plan.Strategy.Declared, no field of
// Strategy's), added to the plan's keys when it is registered (AddKeys).
type keyed interface {
	Keys() []plan.Key
}

// AddKeys adds the plan keys p declares (keyed) to the plan's keys
// (plan.AddKey: refusing a name taken).
func AddKeys(p cost.Plugin) error {
	k, ok := p.(keyed)
	if !ok {
		return nil
	}
	for _, key := range k.Keys() {
		if err := plan.AddKey(key); err != nil {
			return err
		}
	}
	return nil
}

func mustRegister(ps ...cost.Plugin) *cost.Registry {
	r := cost.MustRegistry(ps...)
	for _, p := range ps {
		if err := AddKeys(p); err != nil {
			panic(err)
		}
	}
	return r
}
