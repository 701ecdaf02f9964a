package mechanisms

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// DistLAMB is the data-parallel exchange of apex's DistributedFusedLAMB
// (apex/contrib/optimizers/distributed_fused_lamb.py, NVIDIA/apex at
// 7972dd2) as NVIDIA's MLPerf BERT runs it (training_results_v3.0
// NVIDIA/benchmarks/bert/implementations/pytorch/run_pretraining.py,
// --distributed_lamb; the other submitters' copies of it the same):
//
//   - the gradients are copied into one flat FP16 buffer
//     (_flat_grads, torch.float16): 2 bytes a parameter on the wire,
//     not Megatron's FP32 main gradients;
//   - on one node (world size at most the node's GPUs) they are
//     reduce-scattered over the node's GPUs; across nodes
//     run_pretraining.py sets full_ar = torch.cuda.device_count() <
//     world_size, and _full_all_reduce all-reduces the whole buffer over
//     every rank (the _ar_pg groups of all world ranks);
//   - without overlap_reductions (run_pretraining.py's
//     --dwu-overlap-reductions, off by default: grad-overlap=off on the
//     plan) nothing is reduced during the backward:
//     complete_reductions() runs _pipeline_block_reductions over every
//     block after it, and the step waits on them; with it, each block
//     is reduced beside the backward as its gradients are complete;
//   - _pipeline_step updates the GPU's shard of the FP32 master
//     parameters and all-gathers the new FP16 parameters
//     (_new_params, torch.float16) over the node's GPUs (the _ag_pg
//     groups: one node's ranks, stride device_count), on its completion
//     stream, which step() makes the compute stream wait on: exposed,
//     with or without the overlap.
//
// Its optimizer's arithmetic is LAMB's (lamb.go).
type DistLAMB struct{}

// distLAMBWire is the bytes a parameter of DistributedFusedLAMB's
// gradient and parameter buffers (FP16; e5m2_allgather off, as no
// MLPerf BERT config sets --dwu-e5m2-allgather).
const distLAMBWire = 2

// Name is the mechanism's registered name.
func (DistLAMB) Name() string { return "distributed-fused-lamb" }

// When is the optimizer's declaration: LAMB sharded over the
// data-parallel replicas (distributedLAMB).
func (DistLAMB) When() cost.When { return distLAMBWhen }

var distLAMBWhen = cost.When{
	lambSetting,
	cost.Key("distopt", "distopt=on, dp x cp>1", func(pl *plan.Plan) bool { return pl.DistOpt && pl.DP*pl.CP > 1 }),
}

var _ cost.DataParallel = DistLAMB{}

// DPExposed is the exchange's time in the step, on its slowest stage:
// the reduction (a reduce-scatter over one node, an all-reduce of every
// rank across nodes) after the backward with grad-overlap=off, else the
// part of it the backward does not hide, then the node's all-gather of
// the new parameters.
func (DistLAMB) DPExposed(s *cost.Shard, stages []cost.Stage) float64 {
	pl, p := &s.Plan, s.Pod
	var exposed float64
	for _, st := range stages {
		_, dpG := pl.Groups(*p, st.Index)
		bytes := st.Trained * distLAMBWire
		k := roofline.ReduceScatter
		if dpG.Nodes > 1 {
			k = roofline.AllReduce // full_ar
		}
		red := p.StateComm(k, dpG, bytes)
		t := red.Time
		if !pl.NoGradOverlap {
			t = p.BesideIn(red, st.BwdWindow().Scale(1/float64(pl.VP)))
		}
		ag := p.StateCollective(roofline.AllGather, plan.Group{PerNode: dpG.PerNode, Nodes: 1}, bytes)
		exposed = max(exposed, t+ag)
	}
	return exposed
}
