package planner

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// dpExposed is the exposed data-parallel communication of a step.
// Data-parallel gradients (FP32 main grads, Megatron's default with
// BF16; BF16 with grads=bf16: Plan.GradBytes) reduced over the replicas, overlapped with the last
// micro-batch's backward (--overlap-grad-reduce); with the
// distributed optimizer a reduce-scatter, and the updated BF16
// parameters all-gathered under the next step's first forward
// (--overlap-param-gather). Each stage over its own data-parallel
// group (groups: placed by its tensor-parallel degree), which with
// context parallelism is its C x D GPUs of the same weights. FSDP:
// fsdpExposed; a model with experts: expertsDP. step is the step's
// shard (its Plan the plan as resolved). With grad-overlap=off the
// reductions run after the backward (afterBwd). A registered
// cost.DataParallel that prices the step prices it in place of all this
// (mechanisms.DistLAMB: apex's DistributedFusedLAMB).
func dpExposed(pts *cost.Points, step *cost.Shard, stages []stageCost) float64 {
	m, pl, p := &step.M, &step.Plan, step.Pod
	if d := pts.DataParallel.Of(step); d != nil {
		return d.DPExposed(step, stageViews(stages, pl))
	}
	gb := pl.GradBytes()
	switch {
	case pl.FSDP:
		return fsdpExposed(pts, step, stages)
	case m.MoE():
		return expertsDP(*pl, *p, stages)
	case pl.DP*pl.CP > 1:
		var exposed float64
		for s, st := range stages {
			_, dpG := pl.Groups(*p, s)
			fwd, bwd := st.fwdWindow().Scale(1/float64(pl.VP)), st.bwdWindow().Scale(1/float64(pl.VP))
			if pl.DistOpt {
				rs := p.StateComm(roofline.ReduceScatter, dpG, st.trained(pl)*gb)
				less, _ := fp8GatherSaving(pl, &st, p.WeightBytes()) // fp8paramgather.go
				ag := p.StateComm(roofline.AllGather, dpG, st.trained(pl)*p.WeightBytes()-less)
				exposed = max(exposed, afterBwd(pl, p, rs, bwd)+beforeFwd(pl, p, ag, fwd))
			} else {
				ar := p.StateComm(roofline.AllReduce, dpG, st.trained(pl)*gb)
				exposed = max(exposed, afterBwd(pl, p, ar, bwd))
			}
		}
		return exposed
	}
	return 0
}

// afterBwd is what the gradients' reduction c adds to the step: the
// part of it backward window bwd does not hide, or with grad-overlap=off
// all of it, run after the backward; with connections=1 (without
// queue-ahead=on: Plan.QueueAhead, one bucket launched ahead) all of it too,
// its kernels run to their end before the backward's queued behind them
// (Plan.OneQueue: NVIDIA/Megatron-LM#1468's trace at
// CUDA_DEVICE_MAX_CONNECTIONS=1, no reduce-scatter overlapped).
func afterBwd(pl *plan.Plan, p *plan.Pod, c plan.Comm, bwd plan.Window) float64 {
	if pl.NoGradOverlap || pl.Serialized() {
		return c.Time
	}
	return p.BesideIn(c, bwd)
}

// beforeFwd is what the distributed optimizer's parameter all-gather c
// adds to the step: the part of it forward window fwd does not hide
// (--overlap-param-gather), or with connections=1 all of it (afterBwd:
// NVIDIA/Megatron-LM#1468's trace shows the all-gathers as exposed as the
// reduce-scatters).
func beforeFwd(pl *plan.Plan, p *plan.Pod, c plan.Comm, fwd plan.Window) float64 {
	if pl.Serialized() {
		return c.Time
	}
	return p.BesideIn(c, fwd)
}

// steadySends is the pipeline's point-to-point transfers in its steady
// state with connections=1 (Plan.OneQueue), on the busiest device: each
// micro-batch's model chunk receives its input and sends its output in
// the forward, and receives and sends the gradient in the backward
// (Megatron-Core's interleaved schedule with overlap_p2p_comm, its
// default: send_forward_recv_forward and send_backward_recv_backward
// each an isend and an irecv, _p2p_ops in p2p_communication.py, where
// batch_p2p_comm = not overlap_p2p_comm, arguments.py at 1e057005).
// With one hardware queue each is a kernel the compute queued behind it
// waits for, so the four run one after the other beside no compute: 4
// transfers of a boundary's time (the slowest boundary's: the busiest
// device's neighbours are taken at it) for each of the M micro-batches'
// V chunks. 0 without an interleaved pipeline (V = 1: Megatron turns
// overlap_p2p_comm off and batches each send with its receive, waited
// for at any number of queues, so one queue changes nothing placer
// prices there), with more queues, where bubble's fill and drain are
// the transfers priced, or with queue-ahead=on (Plan.QueueAhead: each
// transfer launched before the compute that hides it).
func steadySends(m *transformer.Spec, pl *plan.Plan, p *plan.Pod, tokens float64) float64 {
	if !pl.Serialized() || pl.PP < 2 || pl.VP < 2 {
		return 0
	}
	var slowest float64
	for i := 0; i+1 < pl.PP; i++ {
		bytes := tokens * float64(m.Hidden) * bf16 / float64(min(pl.TPs[i], pl.TPs[i+1]))
		slowest = max(slowest, p.SendTime(pl.ShareNode(*p, i, i+1), bytes))
	}
	return 4 * float64(pl.NumMicro) * float64(pl.VP) * slowest
}

// expertsDP is the exposed data-parallel communication of a plan of a
// model with experts: each stage's gradients reduced as a dense plan's
// (dpExposed), the experts' over their expert-data-parallel group and
// the rest over the data-parallel one, one after the other beside the
// same backward (and the parameters' all-gathers beside the forward with
// the distributed optimizer).
func expertsDP(pl plan.Plan, p plan.Pod, stages []stageCost) float64 {
	var exposed float64
	gb := pl.GradBytes()
	_, _, edpG := pl.ExpertGroups(p)
	for s, st := range stages {
		_, dpG := pl.Groups(p, s)
		dense := st.Params - st.Experts
		fwd, bwd := st.fwdWindow().Scale(1/float64(pl.VP)), st.bwdWindow().Scale(1/float64(pl.VP))
		if pl.DistOpt {
			rs := p.StateComm(roofline.ReduceScatter, dpG, dense*gb).Plus(p.StateComm(roofline.ReduceScatter, edpG, st.Experts*gb))
			ld, le := fp8GatherSaving(&pl, &st, bf16) // fp8paramgather.go
			ag := p.StateComm(roofline.AllGather, dpG, dense*bf16-ld).Plus(p.StateComm(roofline.AllGather, edpG, st.Experts*bf16-le))
			exposed = max(exposed, afterBwd(&pl, &p, rs, bwd)+beforeFwd(&pl, &p, ag, fwd))
		} else {
			ar := p.StateComm(roofline.AllReduce, dpG, dense*gb).Plus(p.StateComm(roofline.AllReduce, edpG, st.Experts*gb))
			exposed = max(exposed, afterBwd(&pl, &p, ar, bwd))
		}
	}
	return exposed
}

// embeddingAllReduce is the tied embeddings' all-reduce on two stages:
// their gradients are all-reduced between the first and the last stage
// after the backward (FP32, or BF16 with grads=bf16); of different
// degrees, each rank of the smaller group holds 1/min of it.
// Multi-token prediction keeps a copy of the embedding on the last
// stage, all-reduced the same way (Megatron-Core's
// finalize_model_grads, _allreduce_word_embedding_grads). 0 without a
// second copy or a pipeline.
func embeddingAllReduce(m *transformer.Spec, pl *plan.Plan, p *plan.Pod) float64 {
	if !((m.Tied || m.MTP > 0) && pl.PP > 1) {
		return 0
	}
	gb := pl.GradBytes()
	T := float64(min(pl.TPs[0], pl.TPs[pl.PP-1]))
	t := p.StateCollective(roofline.AllReduce, plan.Group{PerNode: 1, Nodes: 2}, float64(m.Vocab)*float64(m.Hidden)/T*gb)
	if pl.ShareNode(*p, 0, pl.PP-1) {
		t = p.StateCollective(roofline.AllReduce, plan.Group{PerNode: 2, Nodes: 1}, float64(m.Vocab)*float64(m.Hidden)/T*gb)
	}
	return t
}
