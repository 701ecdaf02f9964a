package mechanisms

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// HybridZero is the data-parallel exchange of InternEvo's hybrid ZeRO-1
// (InternLM/InternEvo internlm/solver/optimizer/hybrid_zero_optim.py and
// utils.py at 34fc28d7, with configs/7B_sft.py's overlap_sync_grad=True,
// overlap_sync_param=True, reduce_bucket_size 512 x 1024 x 1024):
//
//   - the gradients: each parameter's AccumulateGrad hook fills a bucket
//     of up to 512 Mi elements in the order the backward makes them,
//     and a full bucket is reduced with reduce_tensor(dst_rank=None),
//     which with no destination is dist.all_reduce (ReduceOp.AVG) of
//     the flattened BF16 gradients over the whole data-parallel group
//     (ParallelMode.DATA, not the ZeRO group), on the last micro-batch
//     only (the no-pipeline scheduler's skip_grad_reduce): beside the
//     last backward. step() reduces the bucket left, which holds the
//     backward's last gradient, the embedding table's (vocabulary x
//     hidden / T, 0.42 Gi elements for InternLM-7B, at most one bucket),
//     after the backward: that all-reduce exposed (the bucket's other
//     gradients, those of the first block's last tensors, are not
//     counted: a lower bound);
//   - the parameters: broadcast_params issues one dist.broadcast a
//     rank of the ZeRO group (ParallelMode.ZERO1: Z consecutive
//     data-parallel ranks), each of its BF16 partition (the blocks'
//     parameters split evenly over the Z ranks, ParamBcastSyncHandler),
//     one after the other on one stream, then torch.cuda.synchronize():
//     the step waits for every broadcast, so none runs beside the next
//     forward although overlap_sync_param hooks the forward to wait.
//
// The key hybrid-zero=Z (InternEvo's zero1 size; zero1=-1 writes the
// data-parallel degree) with distopt=on (ZeRO-1's sharded optimizer)
// switches it on. Megatron's distributed optimizer (distopt=on alone)
// reduce-scatters FP32 gradients beside the backward and all-gathers
// the parameters beside the next forward instead.
type HybridZero struct{}

const (
	hybridZeroKey = "hybrid-zero"
	// hybridZeroGrad is the bytes of a gradient element on the wire:
	// the BF16 model's own .grad, flattened as it is.
	hybridZeroGrad = 2
)

// Name is the mechanism's registered name.
func (HybridZero) Name() string { return "hybrid-zero" }

// Keys is the count the mechanism declares: hybrid-zero=Z.
func (HybridZero) Keys() []plan.Key {
	return []plan.Key{plan.CountKey(plan.Key{Name: hybridZeroKey,
		Help: "with distopt=on: InternEvo's hybrid ZeRO-1 over Z data-parallel ranks: BF16 gradients all-reduced over every replica beside the last backward (the embedding's bucket after it), then one broadcast a ZeRO rank, exposed",
		Doc:  "docs/cluster-scale.md"})}
}

// When is the key set with the distributed optimizer over more than one
// replica.
func (HybridZero) When() cost.When {
	return cost.When{
		cost.Key(hybridZeroKey, hybridZeroKey+"=Z", func(pl *plan.Plan) bool { return pl.Declared.Count(hybridZeroKey) > 0 }),
		cost.Key("distopt", "distopt=on, dp x cp>1", func(pl *plan.Plan) bool { return pl.DistOpt && pl.DP*pl.CP > 1 }),
	}
}

var _ cost.DataParallel = HybridZero{}

// DPExposed is the exchange's time in the step, on its slowest stage:
// the all-reduce of the stage's trained BF16 gradients but the
// embedding's beside its backward (what the backward does not hide),
// the embedding's bucket's all-reduce after it, and the Z broadcasts of
// the stage's BF16 parameters, 1/Z each, over the ZeRO group (Z capped
// at the data-parallel group), all of them exposed.
func (HybridZero) DPExposed(s *cost.Shard, stages []cost.Stage) float64 {
	pl, p, m := &s.Plan, s.Pod, &s.M
	var exposed float64
	for _, st := range stages {
		_, dpG := pl.Groups(*p, st.Index)
		last := 0.0
		if st.Index == 0 {
			last = min(st.Trained, float64(m.Vocab)*float64(m.Hidden)/float64(pl.TPs[0]))
		}
		rest := p.StateComm(roofline.AllReduce, dpG, (st.Trained-last)*hybridZeroGrad)
		t := p.BesideIn(rest, cost.Window(st.Bwd, st.BwdSM)) + p.StateCollective(roofline.AllReduce, dpG, last*hybridZeroGrad)
		z := zeroGroup(dpG, pl.Declared.Count(hybridZeroKey))
		t += float64(z.Size()) * p.Rooted(z, st.Trained*p.WeightBytes()/float64(z.Size()))
		exposed = max(exposed, t)
	}
	return exposed
}

// zeroGroup is InternEvo's ZeRO group of z consecutive ranks of
// data-parallel group dp (ParallelMode.ZERO1): inside a node while z is
// at most the node's data-parallel ranks, else whole nodes; z at most
// dp's size.
func zeroGroup(dp plan.Group, z int) plan.Group {
	z = min(z, dp.Size())
	if z <= dp.PerNode {
		return plan.Group{PerNode: z, Nodes: 1}
	}
	return plan.Group{PerNode: dp.PerNode, Nodes: (z + dp.PerNode - 1) / dp.PerNode}
}
