package planner

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// fsdpExposed is dpExposed's with FSDP: every micro-batch, the stage's
// weights all-gathered beside its forward and again beside its
// backward, the gradients reduce-scattered (FP32) beside the backward;
// under a registered FSDP (fsdpOf: FSDP2) each all-gather after its
// copy-in and each reduce-scatter before its share of the gradient's
// accumulation, on the same side streams (fsdpSideCopies), and what it
// gathers, how often (fsdpGathers: as torchtitan reshards).
// In a model with experts (Megatron-FSDP's two meshes) the experts'
// weights are gathered and their gradients reduce-scattered over the
// expert-data-parallel group and the rest's over the data-parallel one
// (with context parallelism its C x D GPUs), one after the other beside
// the same compute.
func fsdpExposed(pts *cost.Points, step *cost.Shard, stages []stageCost) float64 {
	m, pl, p := &step.M, &step.Plan, step.Pod
	f := fsdpOf(pts, step)
	gb := pl.GradBytes()
	var exposed float64
	if m.MoE() {
		_, _, edpG := pl.ExpertGroups(*p)
		for s, st := range stages {
			_, dpG := pl.Groups(*p, s)
			dense := st.Params - st.Experts
			// Its gathers in BF16: the float8 all-gather's linears are
			// the dense blocks' (torchao's Float8Linear), not the experts'.
			gather, reduce := fsdpSideCopies(f, step, fsdpShard(m, &stages[s], dpG.Size(), edpG.Size()), 0, 0)
			ag := gather.Plus(p.StateComm(roofline.AllGather, dpG, dense*bf16)).Plus(p.StateComm(roofline.AllGather, edpG, st.Experts*bf16))
			rs := p.StateComm(roofline.ReduceScatter, dpG, dense*gb).Plus(p.StateComm(roofline.ReduceScatter, edpG, st.Experts*gb)).Plus(reduce)
			exposed = max(exposed, p.BesideIn(ag, st.fwdWindow())+p.BesideIn(ag.Plus(rs), st.bwdWindow()))
		}
		return float64(pl.NumMicro) * exposed
	}
	wire := gatherWireOf(pts, step)
	for s, st := range stages {
		_, dpG := pl.Groups(*p, s)
		fwd, bwd, times := fsdpGathers(f, step, &stages[s], s)
		shard := fsdpShard(m, &stages[s], dpG.Size(), 1)
		lin, linears := st.Layers/float64(dpG.Size()), blockLinears(wire)*float64(pl.Stages[s])
		gather, reduce := fsdpSideCopies(f, step, shard, lin, linears)
		ag := gather.Plus(p.StateComm(roofline.AllGather, dpG, gatheredBytes(wire, pl, p, fwd, st.Layers)))
		rs := p.StateComm(roofline.ReduceScatter, dpG, st.trained(pl)*gb).Plus(reduce)
		if bwd > 0 {
			// The blocks but the last gathered again: their linears.
			k := bwd / st.Layers
			again, _ := fsdpSideCopies(f, step, shard*bwd/fwd, k*lin, k*linears)
			rs = again.Plus(p.StateComm(roofline.AllGather, dpG, gatheredBytes(wire, pl, p, bwd, bwd))).Plus(rs)
		}
		exposed = max(exposed, times*(p.BesideIn(ag, st.fwdWindow())+p.BesideIn(rs, st.bwdWindow())))
	}
	return exposed
}

// fsdpOf is pts' fully sharded data parallelism that prices
// step shard s (cost.FSDP: mechanisms.FSDP2); nil: Megatron-FSDP's.
func fsdpOf(pts *cost.Points, s *cost.Shard) cost.FSDP {
	return pts.FSDP.Of(s)
}

// gatherWireOf is the format step shard s's FSDP all-gathers its
// parameters in (the first registered cost.GatherWire that prices it:
// mechanisms.TorchaoFloat8), nil where none does.
func gatherWireOf(pts *cost.Points, s *cost.Shard) cost.GatherWire {
	return pts.GatherWire.Of(s)
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

// fsdpShard is the parameters of stage st one GPU holds sharded: the
// dense ones over the data-parallel group dp, the experts' over the
// expert-data-parallel group edp.
func fsdpShard(m *transformer.Spec, st *stageCost, dp, edp int) float64 {
	if !m.MoE() {
		return st.Params / float64(dp)
	}
	return (st.Params-st.Experts)/float64(dp) + st.Experts/float64(edp)
}
