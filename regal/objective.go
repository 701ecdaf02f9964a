package regal

import (
	"fmt"

	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/optimize"
)

// Objective is what REGAL's reward measures (REGAL §5.1: runtime, or peak
// memory).
type Objective int

// The objectives.
const (
	// StepTime is the step time of a valid result; an invalid one (out of
	// memory, broken co-location) costs optimize.Cost, at least twice its
	// step time.
	StepTime Objective = iota
	// PeakMemory is the largest per-device peak memory, in bytes.
	PeakMemory
)

func (o Objective) String() string {
	if o == PeakMemory {
		return "peak-memory"
	}
	return "step-time"
}

// ParseObjective reads "step-time" or "peak-memory" ("" = step-time).
func ParseObjective(s string) (Objective, error) {
	switch s {
	case "", "step-time":
		return StepTime, nil
	case "peak-memory":
		return PeakMemory, nil
	}
	return 0, fmt.Errorf("objective %q: want step-time or peak-memory", s)
}

// Of is the objective's value of r (lower is better). It is the one place
// the reward reads a result, so that the objective seam of the optimize
// package replaces it in one line.
func (o Objective) Of(r *evaluate.Result) float64 {
	if o == PeakMemory {
		var m int64
		for _, p := range r.PeakMemory {
			m = max(m, p)
		}
		return float64(m)
	}
	return optimize.Cost(r)
}

// Reward is REGAL's reward (§4.1): -(objective / the objective of BRKGA
// with uniform mutants at the same budget). Above -1 is better than
// uniform BRKGA.
func Reward(obj, uniform float64) float64 {
	if !(uniform > 0) {
		return -1
	}
	return -obj / uniform
}
