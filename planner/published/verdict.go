package published

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// VerdictError is the error a memory verdict of model m's plans on pod p
// is judged within (plan.Pod's MemoryError): the largest out-of-sample
// error of placer's peak on the published peaks of m's family and the
// precision strategy text keeps (MemoryErrorOf over Checked; every
// published peak where that regime has none). A peak within it of the
// usable memory is "tight", which a search sets aside unless asked: the
// memory line states that error beside the plan, so a plan closer than
// it to the GPU's limit is not called a fit. A strategy that does not
// parse is read as BF16 (its error is reported where it is read).
func VerdictError(m transformer.Spec, strategy string, p plan.Pod) plan.RegimeError {
	w, _ := plan.ParseWritten(strategy)
	me := MemoryErrorOf(Checked(), TraitsOf(m, w.Strategy, p))
	if me.Rows == 0 {
		return plan.RegimeError{}
	}
	return plan.RegimeError{Frac: me.MaxAbs, Source: me.String()}
}
