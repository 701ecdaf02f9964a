package optimize

import (
	"fmt"
	"math"
	"strings"

	"github.com/placer/placer/evaluate"
)

// Objective is what a method minimises (seeds/regal-iclr2020.txt §3.1:
// "(1) minimizing the peak local memory use across devices ..., or (2)
// minimizing the runtime subject to a constraint on the peak memory used
// on any device"). The zero value is StepTime, placer's default. A
// Problem carries its objective; the Tracker, Better and Cost compare by
// it, so every method that evaluates through them optimises the chosen
// objective.
type Objective int

// The objectives.
const (
	// StepTime is the step time (makespan) of a decision that fits in
	// every device's memory and honours co-location; a decision that does
	// not is invalid and ranks below every valid one (REGAL §3.2: "all
	// memory-feasible schedules have better fitness than infeasible
	// schedules").
	StepTime Objective = iota
	// PeakMemory is the largest per-device peak memory (bytes), REGAL's
	// peak-memory task. Exceeding a device's capacity does not make a
	// decision invalid here: it is what the objective measures and
	// minimises (the paper's task is "to find a feasible way to run a
	// large computation graph", so an over-capacity decision must still
	// be ranked by how far over it is). Only broken co-location makes a
	// decision invalid. Ties go to the shorter step.
	PeakMemory
)

// Objectives lists every objective, in the order reports show them.
var Objectives = []Objective{StepTime, PeakMemory}

// String is the objective's flag spelling: "step-time" or "peak-memory".
func (o Objective) String() string {
	switch o {
	case StepTime:
		return "step-time"
	case PeakMemory:
		return "peak-memory"
	}
	return fmt.Sprintf("objective(%d)", int(o))
}

// Title is the objective's name in table headers: "step time" or "peak
// memory".
func (o Objective) Title() string { return strings.ReplaceAll(o.String(), "-", " ") }

// ParseObjective reads an --objective value: step-time (or "" or
// runtime) or peak-memory (or memory).
func ParseObjective(s string) (Objective, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "step-time", "step", "steptime", "runtime", "time":
		return StepTime, nil
	case "peak-memory", "memory", "peak", "peakmemory", "mem":
		return PeakMemory, nil
	}
	return StepTime, fmt.Errorf("objective %q: want step-time or peak-memory", s)
}

// MarshalText writes the objective's flag spelling (JSON and cell files).
func (o Objective) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (o *Objective) UnmarshalText(b []byte) error {
	v, err := ParseObjective(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// MaxPeak is r's largest per-device peak memory in bytes (0 without
// devices).
func MaxPeak(r *evaluate.Result) int64 {
	var m int64
	for _, p := range r.PeakMemory {
		m = max(m, p)
	}
	return m
}

// Of is r's objective value: the step time in seconds, or the largest
// per-device peak memory in bytes. It is the one number the learned
// methods' rewards read (through this helper, never StepTime directly).
func (o Objective) Of(r *evaluate.Result) float64 {
	if o == PeakMemory {
		return float64(MaxPeak(r))
	}
	return r.StepTime
}

// Valid reports whether r counts as a feasible decision under the
// objective: StepTime needs every device within capacity and co-location
// honoured (evaluate.Result.Valid); PeakMemory needs co-location only.
func (o Objective) Valid(r *evaluate.Result) bool {
	if o == PeakMemory {
		return r.ColocationViolations == 0
	}
	return r.Valid()
}

// Better reports whether result a is strictly better than b under the
// objective. StepTime: a valid result beats an invalid one; between
// invalid ones fewer co-location violations, then less memory overflow
// win; then the shorter step. PeakMemory: fewer co-location violations
// win, then the smaller largest peak, then the shorter step.
func (o Objective) Better(a, b *evaluate.Result) bool {
	if o == PeakMemory {
		if a.ColocationViolations != b.ColocationViolations {
			return a.ColocationViolations < b.ColocationViolations
		}
		if pa, pb := MaxPeak(a), MaxPeak(b); pa != pb {
			return pa < pb
		}
		return a.StepTime < b.StepTime
	}
	va, vb := a.Valid(), b.Valid()
	if va != vb {
		return va
	}
	if !va {
		if a.ColocationViolations != b.ColocationViolations {
			return a.ColocationViolations < b.ColocationViolations
		}
		oa, ob := Overflow(a), Overflow(b)
		if oa != ob {
			return oa < ob
		}
	}
	return a.StepTime < b.StepTime
}

// Cost is the scalar search methods minimise where they need a number
// rather than an order (simulated annealing's acceptance test): the
// objective's value (Of) of a valid result; an invalid one pays a factor
// of 2 + 10 x Overflow (StepTime only) + its co-location violations, so
// that it costs at least twice its value and more the further it is from
// being valid.
func (o Objective) Cost(r *evaluate.Result) float64 {
	v := o.Of(r)
	if o.Valid(r) {
		return v
	}
	f := 2 + float64(r.ColocationViolations)
	if o == StepTime {
		f += 10 * Overflow(r)
	}
	return v * f
}

// Format writes an objective value for people: "12.345 ms" or "1.25 GiB".
func (o Objective) Format(v float64) string {
	if o == PeakMemory {
		return formatBytes(v)
	}
	return formatSeconds(v)
}

func formatSeconds(s float64) string {
	switch {
	case s == 0:
		return "0 s"
	case s < 1e-3:
		return fmt.Sprintf("%.1f us", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.3f ms", s*1e3)
	}
	return fmt.Sprintf("%.3f s", s)
}

func formatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for math.Abs(b) >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.2f %s", b, units[i])
}
