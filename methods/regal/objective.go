package regal

// REGAL's objectives (§5.1: runtime, or peak memory) are optimize's
// (optimize.Objective): the reward reads t.Objective.Cost, the objective's
// value with invalid results penalized, and the BRKGA runs rank by it.

// Reward is REGAL's reward (§4.1): -(objective / the objective of BRKGA
// with uniform mutants at the same budget). Above -1 is better than
// uniform BRKGA.
func Reward(obj, uniform float64) float64 {
	if !(uniform > 0) {
		return -1
	}
	return -obj / uniform
}
