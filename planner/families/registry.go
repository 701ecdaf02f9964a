package families

import "github.com/placer/placer/planner/cost"

// Registered is the families' traits, one registration line each, in the
// order their kernels join a layer and a figure's provenance lists them
// (a duplicate name stops the program at its start, and the package's
// tests with it).
var Registered = cost.MustRegistry(
	LatentAttention{},
	YaRNRope{},
	LinearBias{},
	QKNorm{},
	SwiGLUClamp{},
	Mamba{},
	GatedDeltaNet{},
	MLMHeads{},
	MTP{},
	SandwichNorms{},
)
