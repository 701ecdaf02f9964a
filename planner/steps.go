package planner

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// stepWait is the host's waits once a step beyond the layers' on host h
// (cost.StepHost: mechanisms.GraphStepSync), each registered plug-in's
// that prices shard s, seconds.
func stepWait(pts *cost.Points, s *cost.Shard, h *kernels.Host) float64 {
	var t float64
	for w := range pts.StepHost.On(s) {
		t += w.StepWait(s, h)
	}
	return t
}

// stageHosts is each stage's StageHost under host h (cost.Host's
// StageHost); nil without a registered Host.
func stageHosts(pts *cost.Points, stages []stageCost, pl *plan.Plan, h *kernels.Host) []StageHost {
	host := pts.Host
	if host == nil {
		return nil
	}
	out := make([]StageHost, len(stages))
	for s := range stages {
		v := stages[s].view(s, pl)
		out[s] = host.StageHost(h, &v)
	}
	return out
}

// contendedBy is the registered Contention that charges the collective
// step shard s's plan runs beside its compute (smBound is then needed);
// nil where none does.
func contendedBy(pts *cost.Points, s *cost.Shard) cost.Contention { return pts.Contention.Of(s) }

// optimizerStep is the optimizer's step on the most loaded device of
// stages, the step of shard s's plan (its Plan the plan as resolved):
// the first registered optimizer that prices it (cost.Optimizer), then
// each registered mechanism's kernels once a step beside it
// (cost.StepKernels).
func optimizerStep(pts *cost.Points, s *cost.Shard, stages []cost.Stage) float64 {
	var t float64
	if o := pts.Optimizer.Of(s); o != nil {
		t = o.OptimizerStep(s, stages)
	}
	for _, k := range pts.StepKernels {
		t = k.StepKernels(s, stages, t)
	}
	return t
}

// balanced is eval's result at the clock the step's compute holds where
// the pod's power limit binds its average power: eval at pod p's clock,
// priced again by the registered StepClock (mechanisms.PowerLimit),
// which asks eval at other clocks for their times only (whole false);
// its memory figures are eval's at p's (the clock moves no byte).
func balanced(pts *cost.Points, p *plan.Pod, eval func(q *plan.Pod, whole bool) Result) Result {
	r := eval(p, true)
	if pts.StepClock == nil {
		return r
	}
	r.setBreakdown(pts.StepClock.Clocked(p, r.breakdown(), func(q *plan.Pod) cost.Breakdown { return eval(q, false).breakdown() }))
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

// smBound sets each stage's SM-bound time per micro-batch, forward and
// backward (stageCost.fwdSM, bwdSM), as Contention contention (contendedBy's:
// mechanisms.SMContention) tells it: the stages costed again on its
// Slower pod, their phases kept in cache under that pod's clock, and
// each phase's SM-bound part from its two times (SMBound). What a
// collective beside them takes from the SMs slows that part; its HBM
// traffic slows the rest (plan.Pod.BesideIn).
func smBound(pts *cost.Points, contention cost.Contention, m *transformer.Spec, pl *plan.Plan, p *plan.Pod, cache PhaseCache, tokens float64, stages []stageCost) {
	q := contention.Slower(p)
	var kitBuf [3]stageKit
	kits := kitBuf[:0]
	for _, T := range pl.TPs {
		if kitIndex(kits, T) < 0 {
			kits = appendKit(kits, pts, *m, *pl, &q, T, tokens, cache)
		}
	}
	lp := float64(transformer.LayerParams(*m))
	for i := range stages {
		var slow stageCost
		slow.assemble(&kits[kitIndex(kits, pl.TPs[i])], m, pl, i, lp)
		stages[i].fwdSM = contention.SMBound(stages[i].fwd, slow.fwd)
		stages[i].bwdSM = contention.SMBound(stages[i].bwd, slow.bwd)
	}
}
