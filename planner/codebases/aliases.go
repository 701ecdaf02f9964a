package codebases

import "github.com/placer/placer/planner/cost"

// kernel and phase are the vocabulary a code base's costs are written
// in (planner/cost), bf16 its element size.
type (
	kernel = cost.Kernel
	phase  = cost.Phase
)

const bf16 = cost.BF16
