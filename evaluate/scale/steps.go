package scale

import (
	"github.com/placer/placer/evaluate/scale/cost"
	"github.com/placer/placer/evaluate/scale/mechanisms"
	"github.com/placer/placer/evaluate/scale/plan"
)

// The registered plug-ins at each step-level extension point
// (evaluate/scale/cost/step.go), set from the registry by hookUp: the
// clock a power limit holds (mechanisms.PowerLimit), the optimizers
// (mechanisms.Adam, mechanisms.LAMB) and the kernels beside the
// optimizer's step once a step (mechanisms.FP8Casts,
// mechanisms.TorchaoFloat8).
var (
	stepClock   cost.StepClock
	optimizers  []cost.Optimizer
	stepKernels []cost.StepKernels
)

// hookUpSteps sets the step-level extension points' plug-ins (hookUp's
// part).
func hookUpSteps() {
	stepClock = cost.First[cost.StepClock](mechanisms.Registered)
	optimizers = cost.Each[cost.Optimizer](mechanisms.Registered)
	stepKernels = cost.Each[cost.StepKernels](mechanisms.Registered)
}

// stageViews is stages as the step-level extension points see them
// (cost.Stage).
func stageViews(stages []stageCost, pl *plan.Plan) []cost.Stage {
	vs := make([]cost.Stage, len(stages))
	for i := range stages {
		st := &stages[i]
		vs[i] = cost.Stage{Index: i, Fwd: st.fwd, Bwd: st.bwd, FwdSM: st.fwdSM, BwdSM: st.bwdSM,
			Params: st.Params, Experts: st.Experts, Layers: st.Layers, Trained: st.trained(pl)}
	}
	return vs
}

// optimizerStep is the optimizer's step on the most loaded device of
// stages, the step of shard s's plan (its Plan the plan as resolved):
// the first registered optimizer that prices it (cost.Optimizer), then
// each registered mechanism's kernels once a step beside it
// (cost.StepKernels).
func optimizerStep(s *cost.Shard, stages []cost.Stage) float64 {
	var t float64
	for _, o := range optimizers {
		if o.Prices(s) {
			t = o.OptimizerStep(s, stages)
			break
		}
	}
	for _, k := range stepKernels {
		t = k.StepKernels(s, stages, t)
	}
	return t
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
