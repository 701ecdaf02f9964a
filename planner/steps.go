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
func stepWait(s *cost.Shard, h *kernels.Host) float64 {
	var t float64
	for w := range s.Points.StepHost.On(s) {
		t += w.StepWait(s, h)
	}
	return t
}

// drain is the tail of steps host h issues after a device-to-host
// synchronization with ahead seconds queued before it (cost.Host's
// Drain); none without a registered Host.
func drain(pts *cost.Points, h *kernels.Host, ahead float64, steps ...phase) syncTail {
	if pts.Host == nil {
		return syncTail{}
	}
	return pts.Host.Drain(h, ahead, steps...)
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
func contendedBy(s *cost.Shard) cost.Contention { return s.Points.Contention.Of(s) }

// view is stage st, stage i of plan pl, as the step-level extension
// points see it (cost.Stage).
func (st *stageCost) view(i int, pl *plan.Plan) cost.Stage {
	return cost.Stage{Index: i, Fwd: st.fwd, Bwd: st.bwd, FwdSM: st.fwdSM, BwdSM: st.bwdSM,
		Params: st.Params, Experts: st.Experts, Layers: st.Layers, Trained: st.trained(pl)}
}

// stageViews is stages as the step-level extension points see them
// (cost.Stage).
func stageViews(stages []stageCost, pl *plan.Plan) []cost.Stage {
	vs := make([]cost.Stage, len(stages))
	for i := range stages {
		vs[i] = stages[i].view(i, pl)
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
	if o := s.Points.Optimizer.Of(s); o != nil {
		t = o.OptimizerStep(s, stages)
	}
	for _, k := range s.Points.StepKernels {
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

// fsdpOf is the registered fully sharded data parallelism that prices
// step shard s (cost.FSDP: mechanisms.FSDP2); nil: Megatron-FSDP's.
// gatherWireOf is the format step shard s's FSDP all-gathers its
// parameters in (the first registered cost.GatherWire that prices it:
// mechanisms.TorchaoFloat8), nil where none does.
func gatherWireOf(s *cost.Shard) cost.GatherWire {
	return s.Points.GatherWire.Of(s)
}

// gatheredBytes is the bytes FSDP's all-gather moves for n parameters,
// lin of them the blocks' linear weights, in wire w's format (nil: the
// pod's weight format, every one).
func gatheredBytes(w cost.GatherWire, pl *plan.Plan, p *plan.Pod, n, lin float64) float64 {
	if w == nil {
		return p.WeightBytes() * n
	}
	return w.Bytes(pl, p, n, lin)
}

// blockLinears is the linear weights a block gathers apart in wire w's
// format (none without one).
func blockLinears(w cost.GatherWire) float64 {
	if w == nil {
		return 0
	}
	return w.Linears()
}

func fsdpOf(s *cost.Shard) cost.FSDP {
	return s.Points.FSDP.Of(s)
}

// fsdpGathers is the parameters of stage st (stage i of step shard s's
// plan) gathered beside its forward and again beside its backward, and
// how many times a step FSDP f gathers and reduces them (fsdpOf's;
// nil: Megatron-FSDP's, all of them each way, every micro-batch).
func fsdpGathers(f cost.FSDP, s *cost.Shard, st *stageCost, i int) (fwd, bwd, times float64) {
	if f == nil {
		return st.Params, st.Params, float64(s.Plan.NumMicro)
	}
	v := st.view(i, &s.Plan)
	return f.Gathers(s, &v)
}

// fsdpSideCopies is what FSDP f (fsdpOf's) copies on its side streams
// beside the gathers and the reductions (cost.FSDP's SideCopies); zero
// Comms for Megatron-FSDP (nil).
func fsdpSideCopies(f cost.FSDP, s *cost.Shard, shard, lin, linears float64) (gather, reduce plan.Comm) {
	if f == nil {
		return plan.Comm{}, plan.Comm{}
	}
	return f.SideCopies(s, shard, lin, linears)
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
