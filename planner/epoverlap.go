package planner

import (
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// epOverlap is stage s's forward and backward with the experts'
// all-to-alls overlapped (epoverlap=on: Megatron-Core's
// --overlap-moe-expert-parallel-comm, the forward of one micro-batch and
// the backward of another merged layer by layer). Each exchange runs
// beside one node of the other pass only, as
// TransformerLayerSchedulePlan.run schedules a forward layer with a
// backward one (megatron/core/models/common/model_chunk_schedule_plan.py
// at d7288711, the Megatron-LM commit Megatron-Bridge v0.4.0 pins):
//
//	comm_stream: combine_bwd | dispatch_fwd->dispatch_bwd  | combine_fwd
//	comp_stream: attn_fwd    | mlp_bwd->mlp_bwd_dw->mlp_fwd| attn_bwd
//
// and mlp_fwd waits for dispatch_fwd, dispatch_bwd for mlp_bwd's data
// gradient (pairSaving). What does not fit beside its node is exposed,
// and the computation beside an exchange slows by the SMs and HBM
// bandwidth it takes (Pod.BesideIn). Only the steady state's
// micro-batches pair: without a pipeline the first forward and the last
// backward run alone; in the interleaved schedule stage s's warm-up
// forwards and cool-down backwards, (P-s-1) x 2 + (V-1) x P model chunks
// each (Megatron-Core's get_pp_rank_microbatches), are not paired. The
// saving is spread over the stage's per-micro-batch phases, the
// forward's and the backward's in proportion to their exchanges. A stage
// whose layers' parts are unknown (no experts' work: a hybrid model's)
// pairs its whole forward with its whole backward instead.
func epOverlap(pts *cost.Points, st *stageCost, pl plan.Plan, p *plan.Pod, s int) {
	fe, be := st.fwd.EPExposed, st.bwd.EPExposed
	if fe+be <= 0 || pl.NumMicro <= 1 {
		return
	}
	_, epG, _ := pl.ExpertGroups(*p)
	sms := pts.TokenDispatcher.ExchangeSMs(&pl) // DeepEP's SMs under the flex dispatcher
	fw, bw := st.fwdWindow(), st.bwdWindow()
	var save float64
	if st.moeLayers > 0 {
		save = st.moeLayers * st.ep.pairSaving(p, epG, sms, smShare(fw), smShare(bw))
	} else {
		fw.Busy, fw.Idle = fw.Busy-fe, fw.Idle-fe // the computation beside the other side's exchanges
		bw.Busy, bw.Idle = bw.Busy-be, bw.Idle-be
		save = fe + be - (p.BesideIn(p.ExchangeComm(epG, fe, sms), bw) + p.BesideIn(p.ExchangeComm(epG, be, sms), fw))
	}
	if save <= 0 {
		return
	}
	M := float64(pl.NumMicro)
	alone := 1.0 // micro-batches whose forward (and backward) run unpaired
	if pl.PP > 1 {
		warm := min(pl.NumMicro*pl.VP, (pl.PP-s-1)*2+(pl.VP-1)*pl.PP)
		alone = max(1, float64(warm)/float64(pl.VP))
	}
	cut := save * max(0, M-alone) / M
	ff := fe / (fe + be)
	st.fwd.Busy -= cut * ff
	st.fwd.EPExposed -= cut * ff
	st.bwd.Busy -= cut * (1 - ff)
	st.bwd.EPExposed -= cut * (1 - ff)
}

// smShare is the SM-bound share of window w's computation (what is
// neither idle nor HBM-bound).
func smShare(w plan.Window) float64 {
	if c := w.Busy - w.Idle; c > 0 {
		return min(1, w.Compute/c)
	}
	return 0
}

// pairSaving is what one forward layer of e paired with one backward
// layer of e saves against running them one after the other (epOverlap):
// the combine's backward beside the forward's attention, the dispatch's
// forward beside the experts' data gradient (half the backward's
// experts: the data and weight gradients are GEMMs of equal FLOPs), the
// dispatch's backward beside the weight gradient and the forward's
// experts, the combine's forward beside the backward's attention; each
// exchange over group g with sms SMs (0: NCCL's), beside computation
// whose SM-bound share is sf forward and sb backward (Pod.BesideIn).
func (e epParts) pairSaving(p *plan.Pod, g plan.Group, sms int, sf, sb float64) float64 {
	beside := func(comm, fwd, bwd float64) float64 {
		w := plan.Window{Busy: fwd + bwd, Compute: fwd*sf + bwd*sb}
		return p.BesideIn(p.ExchangeComm(g, comm, sms), w)
	}
	exposed := beside(e.commB/2, max(0, e.attnF), 0) +
		beside(e.commF/2, 0, e.mlpB/2) +
		beside(e.commB/2, e.mlpF, e.mlpB/2) +
		beside(e.commF/2, 0, max(0, e.attnB))
	return e.commF + e.commB - exposed
}
