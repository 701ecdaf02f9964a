package planner

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/memory"
	"github.com/placer/placer/planner/plan"
)

// The memory of a plan is planner/memory's: what the cost model
// adds is the stack's part in it (the layers a plain PyTorch loop
// traces tensor by tensor) and Result's memory figures.

// stepTracer is layer costs whose plans of one GPU the memory model
// writes tensor by tensor, a plain PyTorch loop's (memory.EagerTrace:
// the code base of its layers and the measured error of the traced
// peak).
type stepTracer interface {
	EagerTrace() memory.EagerTrace
}

// memoryStep is plan pl of m on p as the memory model counts it, with
// the eager trace of the plan's stack where it writes one (stepTracer:
// its own layer costs, never a profile's, which times kernels and holds
// no tensors; a step of one stage, the only one it traces), and the
// families' traits that count its attention and its prediction modules
// (memoryTraits).
func memoryStep(m *transformer.Spec, pl *plan.Plan, p *plan.Pod) memory.Step {
	step := memory.Step{Model: *m, Plan: *pl, Pod: p}
	if pl.Declared != "" {
		// Layers in BF16 are a keyed mechanism's (TestHighPrecisionKeyed):
		// a plan that sets no declared key has none, and its memory is
		// counted without deciding its step's plug-ins again.
		step.BF16Layers = bf16Layers(registered, m, pl, p)
	}
	step.Attention, step.Prediction = memoryTraits(registered, m, pl, p)
	if pl.PP == 1 {
		if tr, ok := layerCoster(&pl.Run).(stepTracer); ok {
			e := tr.EagerTrace()
			step.Eager = &e
		}
	}
	return step
}

// memoryTraits is the registered families' traits of pts that count
// plan pl's memory of m on p in place of the block's own attention
// (cost.AttentionMemory) and its prediction modules (cost.PredictionMemory),
// those the record of a step shard of the plan says price it (decide);
// nil: none.
func memoryTraits(pts *cost.Points, m *transformer.Spec, pl *plan.Plan, p *plan.Pod) (memory.Attention, memory.Prediction) {
	s := cost.Shard{M: *m, Plan: *pl, H: &p.Hardware, Pod: p}
	decide(pts, &s)
	return memoryTraitsOf(pts, &s)
}

// fits reports whether plan pl fits the GPUs' memory, as
// EvaluateCached's Result.Fits says, computing the memory alone (no
// kernel or collective times).
func fits(m transformer.Spec, pl plan.Plan, p *plan.Pod) bool { return FitsTight(m, pl, p, true) }

// FitsTight is fits with a "tight" plan (Result.Verdict) counted as
// fitting only where tight says.
func FitsTight(m transformer.Spec, pl plan.Plan, p *plan.Pod, tight bool) bool {
	step := memoryStep(&m, &pl, p)
	return step.Fits(tight)
}

// CountFitsTight is FitsTight on the tensors' count alone
// (memory.Step.CountFits: no replay of the caching allocator): a plan
// that does not count-fit does not fit.
func CountFitsTight(m transformer.Spec, pl plan.Plan, p *plan.Pod, tight bool) bool {
	step := memoryStep(&m, &pl, p)
	return step.CountFits(tight)
}

// Judge is r, EvaluateCounted's result of m on p, with its verdict on
// what PyTorch's caching allocator would reserve (memory.Step.Judge:
// the replay, where it could change the verdict), as EvaluateCached's.
// Only the verdict and Judged change: the step's times do not depend on
// it.
func Judge(m transformer.Spec, p *plan.Pod, r Result) Result {
	step := memoryStep(&m, &r.Plan, p)
	pk := memory.Peak{Bytes: r.Memory, Reserved: r.Memory, Usable: r.Usable, Error: r.MemoryError, Verdict: r.Verdict}
	step.Judge(&pk)
	r.Judged, r.Fits, r.Verdict = 0, pk.Fits(), pk.Verdict
	if pk.Reserved > pk.Bytes {
		r.Judged = pk.Reserved
	}
	return r
}

// setMemory sets r's memory figures: the peak of plan pl of m on p
// (memory.Step.Count) given its stages' parameters, its verdict on the
// tensors' count (Judge weighs the allocator's reservation).
func (r *Result) setMemory(m *transformer.Spec, pl *plan.Plan, p *plan.Pod, stages []stageCost) {
	// A pipeline of up to 128 stages keeps them on the stack.
	var heldBuf [128]memory.Stage
	held := heldBuf[:0]
	if len(stages) > len(heldBuf) {
		held = make([]memory.Stage, 0, len(stages))
	}
	for i := range stages {
		held = append(held, stages[i].Stage)
	}
	step := memoryStep(m, pl, p)
	pk := step.Count(held)
	r.Memory, r.Fits, r.Verdict = pk.Bytes, pk.Fits(), pk.Verdict
	r.MemoryError, r.MemoryErrorSource = pk.Error, pk.ErrorSource
	r.Weights, r.Grads, r.OptState, r.Activations = pk.Weights, pk.Grads, pk.OptState, pk.Activations
	r.MemoryParts, r.Capacity, r.Usable, r.MemoryMargin = pk.Parts, pk.Capacity, pk.Usable, pk.Margin
}

// WithAllocator is r, a result of model m on pod p, with its Allocator
// filled (memory.Step.Allocator: a replay of each stage's trace,
// milliseconds a plan, left out of Evaluate, which the searches and the
// checks of every published row call).
func WithAllocator(m transformer.Spec, p plan.Pod, r Result) Result {
	step := memoryStep(&m, &r.Plan, &p)
	r.Allocator = step.Allocator()
	return r
}

// Reserve is 6 GiB: the share of a GPU's memory placer kept free before
// the CUDA context, NCCL's buffers and the margin were parts of their
// own (memory.Peak, Pod.Usable); export's refusal of a plan over memory
// still states a GPU's memory less it.
const Reserve = 6 << 30

// bf16Layers is how many of each stage's layers of plan pl run outside
// its low-precision recipe, as the registered cost.HighPrecisionLayers
// that prices the plan's step says (nil: none prices it): the step's shard decided once, as a step's
// is.
func bf16Layers(pts *cost.Points, m *transformer.Spec, pl *plan.Plan, p *plan.Pod) func(s int) int {
	sh := &cost.Shard{M: *m, Plan: *pl, H: &p.Hardware, Pod: p}
	decide(pts, sh)
	hp := pts.HighPrecisionLayers.Of(sh)
	if hp == nil {
		return nil
	}
	return func(s int) int { return hp.HighPrecisionLayers(sh, s) }
}
