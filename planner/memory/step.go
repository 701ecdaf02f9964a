package memory

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/eager"
	"github.com/placer/placer/planner/plan"
)

// bf16 is the element size of activations, weights and their gradients
// in BF16 mixed precision.
const bf16 = 2

// Step is one training step of a resolved plan (plan.Resolve) as the
// memory model counts it: model Model under Plan on Pod (the caller's,
// not copied). Eager, where the plan's stack is a plain PyTorch loop
// whose step is written tensor by tensor on one GPU (eagerTraceable),
// is its layers' code base and the measured error of that trace's peak
// (nil: the stack writes none). Attention and Prediction are the
// family's traits that count the model's attention in place of the
// block's own and its prediction modules (traits.go; nil: none), as
// planner decided them of the step.
type Step struct {
	Model      transformer.Spec
	Plan       plan.Plan
	Pod        *plan.Pod
	Eager      *EagerTrace
	Attention  Attention
	Prediction Prediction
	// BF16Layers is how many of stage s's layers run outside the plan's
	// low-precision recipe (the cost model's cost.HighPrecisionLayers;
	// nil: none), its stages' Stage.BF16Layers.
	BF16Layers func(s int) int
}

// EagerTrace is a plain PyTorch loop's layers as eagerStepTrace writes
// them: the eager code base (eager.LayerOps') and the measured error of
// the traced peak, the verdict's margin either side of the usable
// memory (Peak.Verdict).
type EagerTrace struct {
	Layer eager.CodeBase
	Error plan.RegimeError
}

// counter is what the memory model reads of a plan at one
// tensor-parallel degree: the model, the plan with that degree T, the
// pod, the tokens of a micro-batch on one GPU (its 1/C with context
// parallelism), the step's eager trace (Step.Eager) and the family's
// traits (Step.Attention, Step.Prediction).
type counter struct {
	m          transformer.Spec
	pl         plan.Plan
	pod        *plan.Pod
	tokens     float64
	eager      *EagerTrace
	attention  Attention
	prediction Prediction
}

// newCounter is the counter of step's stages of tensor-parallel degree
// T.
func newCounter(step *Step, T int) counter {
	pl := &step.Plan
	c := counter{m: step.Model, pl: *pl, pod: step.Pod, eager: step.Eager, attention: step.Attention, prediction: step.Prediction,
		tokens: float64(pl.MBS) * float64(step.Model.Seq) / float64(pl.CP)}
	c.pl.TP = T
	return c
}

// counterOf is the index in cs of the counter of tensor-parallel degree
// T (-1: none), the counters looked at in place.
func counterOf(cs []counter, T int) int {
	for i := range cs {
		if cs[i].pl.TP == T {
			return i
		}
	}
	return -1
}

// sp is the share of a sequence-split activation on this GPU: 1/T with
// sequence parallelism, else 1.
func (c *counter) sp() float64 {
	if c.pl.SequenceParallel {
		return 1 / float64(c.pl.TP)
	}
	return 1
}

// counters appends to cs a counter for each tensor-parallel degree of
// the step's stages (cs a buffer of the caller's: a plan has at most
// three degrees, kept on its stack).
func (step *Step) counters(cs []counter) []counter {
	for _, T := range step.Plan.TPs {
		if counterOf(cs, T) < 0 {
			cs = append(cs, newCounter(step, T))
		}
	}
	return cs
}

// bytesOf is the memory model's count f in bytes, checked
// (transformer.Bytes): past int64's range (or no count at all, NaN)
// math.MaxInt64, which no GPU's memory fits.
func bytesOf(f float64) int64 {
	n, _ := transformer.Bytes(f)
	return n
}
