package mechanisms

import (
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// SMContention is what a collective run beside the compute takes from
// it (cost.Contention): NCCL's CTAs on the SMs, its HBM traffic
// (plan.Pod.BesideIn charges them on a window of the stage's time), for
// which the step tells each stage's SM-bound time from the rest by
// costing it again at a compute clock smStep slower.
type SMContention struct{}

var _ cost.Contention = SMContention{}

// smStep is the relative step of the compute's clock by which the step
// tells a stage's SM-bound time from the rest: a kernel bound by its
// FLOPs (the roofline's compute side, a measured attention kernel's rate
// term) takes 1 + smStep times as long, one bound by its bytes or its
// launch as long, so the stage's time grows by smStep times its
// SM-bound part. A power of two, so that the step is exact.
const smStep = 1.0 / 64

// Name is the mechanism's registered name.
func (SMContention) Name() string { return "sm-contention" }

// When is the contention's declaration: a plan that runs a collective
// beside compute that BesideIn charges by what it takes (a
// data-parallel or FSDP collective, or overlapped expert exchanges), on
// a pod that knows NCCL's CTAs.
func (SMContention) When() cost.When { return contentionWhen }

var contentionWhen = cost.When{
	cost.Key("dp", "dp x cp>1 or fsdp or epoverlap", func(pl *plan.Plan) bool { return pl.DP*pl.CP > 1 || pl.FSDP || pl.EPOverlap }),
	cost.GPU("nccl-ctas, concurrent", func(p *plan.Pod) bool { return p.Kernels.CTAs > 0 && !p.Kernels.Serial }),
}

// Slower is pod p with the compute's clock smStep slower
// (Hardware.ComputeSlowdown), the pod a stage is costed again on.
func (SMContention) Slower(p *plan.Pod) plan.Pod {
	q := *p
	s := q.Hardware.ComputeSlowdown
	if s <= 0 {
		s = 1
	}
	q.Hardware.ComputeSlowdown = s * (1 + smStep)
	return q
}

// SMBound is the SM-bound part of a phase that takes at on its pod and
// slower on Slower's: what it grew by over smStep.
func (SMContention) SMBound(at, slower cost.Phase) float64 {
	return max(0, (slower.Busy-at.Busy)/smStep)
}
