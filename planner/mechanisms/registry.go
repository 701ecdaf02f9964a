package mechanisms

import "github.com/placer/placer/planner/cost"

// Registered is the mechanisms, one registration line each, in the
// order their kernels join a layer and a figure's provenance lists them
// (a duplicate name stops the program at its start, and the package's
// tests with it).
var Registered = cost.MustRegistry(
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
	PowerLimit{},
	Adam{},
	FSDP2{},
	SMContention{},
	HostIssue{},
	GraphStepSync{},
)
