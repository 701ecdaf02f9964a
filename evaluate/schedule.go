package evaluate

import (
	"context"

	"github.com/placer/placer/decision"
)

// Schedule is the timeline behind one Result: when each kernel ran and
// when each tensor crossed between devices. It is what a learned method
// reads to see why a decision is slow (which ops are on the critical
// path, which wait, which devices idle); it is not needed to score a
// decision.
type Schedule struct {
	Kernels   []Kernel
	Transfers []Transfer
}

// Kernel is one kernel launch: the ops it ran (several when fused), the
// device it ran on and when, in seconds from the start of the step.
type Kernel struct {
	Device     int
	Ops        []int32
	Start, End float64
}

// Transfer is one tensor sent from device Src to device Dst.
type Transfer struct {
	Tensor, Src, Dst int
	Bytes            int64
	Start, End       float64
}

// Scheduler is implemented by evaluators and cost models that can report
// the schedule of a decision along with its result (the roofline model
// does; a GPU evaluator, which measures only step times, need not).
type Scheduler interface {
	// Schedule scores d and returns its timeline.
	Schedule(ctx context.Context, d decision.Decision) (Result, Schedule, error)
}
