package scale

import (
	"github.com/placer/placer/evaluate/scale/cost"
	"github.com/placer/placer/evaluate/scale/mechanisms"
	"github.com/placer/placer/evaluate/scale/plan"
)

// The registered plug-ins at each step-level extension point
// (evaluate/scale/cost/step.go), set from the registry by hookUp: the
// clock a power limit holds (mechanisms.PowerLimit).
var (
	stepClock cost.StepClock
)

// hookUpSteps sets the step-level extension points' plug-ins (hookUp's
// part).
func hookUpSteps() {
	stepClock = cost.First[cost.StepClock](mechanisms.Registered)
}

// balanced is eval's result at the clock the step's compute holds where
// the pod's power limit binds its average power: eval at pod p's clock,
// priced again by the registered StepClock (mechanisms.PowerLimit),
// which asks eval at other clocks; its memory figures are eval's at p's
// (the clock moves no byte).
func balanced(p *plan.Pod, eval func(*plan.Pod) Result) Result {
	r := eval(p)
	if stepClock == nil {
		return r
	}
	r.setBreakdown(stepClock.Clocked(p, r.breakdown(), func(q *plan.Pod) cost.Breakdown { return eval(q).breakdown() }))
	return r
}

// breakdown is r's times (cost.Breakdown), setBreakdown sets them.
func (r Result) breakdown() cost.Breakdown {
	return cost.Breakdown{Step: r.Step, Compute: r.Compute, Bubble: r.Bubble, DPExposed: r.DPExposed, Embedding: r.Embedding, Optimizer: r.Optimizer,
		TPExposed: r.TPExposed, CPExposed: r.CPExposed, EPExposed: r.EPExposed, HostExposed: r.HostExposed,
		LayerForward: r.LayerForward, LayerBackward: r.LayerBackward, TFLOPs: r.TFLOPs, MFU: r.MFU}
}

func (r *Result) setBreakdown(b cost.Breakdown) {
	r.Step, r.Compute, r.Bubble, r.DPExposed, r.Embedding, r.Optimizer = b.Step, b.Compute, b.Bubble, b.DPExposed, b.Embedding, b.Optimizer
	r.TPExposed, r.CPExposed, r.EPExposed, r.HostExposed = b.TPExposed, b.CPExposed, b.EPExposed, b.HostExposed
	r.LayerForward, r.LayerBackward, r.TFLOPs, r.MFU = b.LayerForward, b.LayerBackward, b.TFLOPs, b.MFU
}
