package scale

import (
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph/transformer"
)

// smStep is the relative step of the compute's clock by which smBound
// tells a stage's SM-bound time from the rest: a kernel bound by its
// FLOPs (the roofline's compute side, a measured attention kernel's rate
// term) takes 1 + smStep times as long, one bound by its bytes or its
// launch as long, so the stage's time grows by smStep times its
// SM-bound part. A power of two, so that the step is exact.
const smStep = 1.0 / 64

// smBound sets each stage's SM-bound time per micro-batch, forward and
// backward (stageCost.fwdSM, bwdSM): the stages costed again with the
// compute's clock smStep slower (Hardware.ComputeSlowdown), their phases
// kept in cache under that clock. What a collective beside them takes
// from the SMs slows that part; its HBM traffic slows the rest
// (plan.Pod.BesideIn).
func smBound(m *transformer.Spec, pl *plan.Plan, p *plan.Pod, cache PhaseCache, tokens float64, stages []stageCost) {
	q := *p
	s := q.Hardware.ComputeSlowdown
	if s <= 0 {
		s = 1
	}
	q.Hardware.ComputeSlowdown = s * (1 + smStep)
	var kitBuf [3]stageKit
	kits := kitBuf[:0]
	for _, T := range pl.TPs {
		if kitIndex(kits, T) < 0 {
			kits = append(kits, stageKit{c: newCoster(*m, *pl, &q, T, tokens)})
			k := &kits[len(kits)-1]
			k.kitPhases = k.c.phases(cache)
		}
	}
	lp := float64(m.LayerParams())
	for i := range stages {
		var slow stageCost
		slow.assemble(&kits[kitIndex(kits, pl.TPs[i])], m, pl, i, lp)
		stages[i].fwdSM = max(0, (slow.fwd.Busy-stages[i].fwd.Busy)/smStep)
		stages[i].bwdSM = max(0, (slow.bwd.Busy-stages[i].bwd.Busy)/smStep)
	}
}

// contended says whether plan pl on p runs a collective beside compute
// that BesideIn charges by what it takes (smBound is then needed): a
// data-parallel or FSDP collective, or overlapped expert exchanges, on a
// pod that knows NCCL's CTAs.
func contended(pl *plan.Plan, p *plan.Pod) bool {
	if p.Kernels.CTAs <= 0 || p.Kernels.Serial {
		return false
	}
	return pl.DP*pl.CP > 1 || pl.FSDP || pl.EPOverlap
}

// window is phase ph's time as a plan.Window: its SM-bound part sm
// (smBound's) and its idle part, the host's waits and the
// communication exposed in it.
func window(ph phase, sm float64) plan.Window {
	return plan.Window{Busy: ph.Busy, Compute: min(sm, ph.Busy), Idle: ph.HostExposed + ph.TPExposed + ph.CPExposed + ph.EPExposed}
}

// fwdWindow and bwdWindow are stage st's forward and backward per
// micro-batch as windows (window).
func (st *stageCost) fwdWindow() plan.Window { return window(st.fwd, st.fwdSM) }
func (st *stageCost) bwdWindow() plan.Window { return window(st.bwd, st.bwdSM) }
