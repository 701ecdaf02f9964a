package mechanisms

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// Zero1AllReduce is the data-parallel exchange of ZeRO-1 as nanotron
// runs it with its gradients accumulated in FP32 (huggingface/nanotron
// at c2528430, the code of the Ultra-Scale Playbook's scaling
// benchmarks; their bench config, examples/config_tiny_llama_bench.yaml
// at 67c5ebb6, sets accumulate_grad_in_fp32: true):
//
//   - trainer.py init_model: make_ddp = dp > 1 and not
//     (accumulate_grad_in_fp32 and zero_stage > 0): no DDP, so no
//     reduction runs in the backward;
//   - trainer.py training_step, after the pipeline's last backward:
//     sync_gradients_across_dp(..., reduce_scatter=False) (the comment
//     beside it: "This is too memory hungry, instead we run
//     all_reduce"), which is FP32GradientAccumulator's
//     dist.all_reduce of its whole contiguous FP32 gradient buffer
//     (optim/gradient_accumulator.py): every gradient all-reduced,
//     not reduce-scattered;
//   - optim/zero.py ZeroDistributedOptimizer.step: each rank's shard
//     updated, then _all_gather_params all-gathers the updated BF16
//     parameters (distributed.py all_gather_coalesced, not async)
//     before the step returns.
//
// Both run after the backward, beside no compute, whatever the queue
// count. Megatron's distributed optimizer (distopt=on alone, the
// default pricing) reduce-scatters the gradients instead, half an
// all-reduce's bytes on a ring.
type Zero1AllReduce struct{}

const zero1AllReduceKey = "distopt-allreduce"

// Name is the mechanism's registered name.
func (Zero1AllReduce) Name() string { return "zero1-allreduce" }

// Keys is the switch the mechanism declares: distopt-allreduce=on.
func (Zero1AllReduce) Keys() []plan.Key {
	return []plan.Key{plan.SwitchKey(plan.Key{Name: zero1AllReduceKey,
		Help: "with distopt=on: gradients all-reduced whole after the backward, not reduce-scattered, then the parameters all-gathered, all exposed (nanotron's ZeRO-1 with FP32 accumulation)",
		Doc:  "docs/cluster-scale.md"})}
}

// When is the switch on with the distributed optimizer over more than
// one replica.
func (Zero1AllReduce) When() cost.When {
	return cost.When{
		cost.Key(zero1AllReduceKey, zero1AllReduceKey+"=on", func(pl *plan.Plan) bool { return pl.Declared.On(zero1AllReduceKey) }),
		cost.Key("distopt", "distopt=on, dp x cp>1", func(pl *plan.Plan) bool { return pl.DistOpt && pl.DP*pl.CP > 1 }),
	}
}

var _ cost.DataParallel = Zero1AllReduce{}

// DPExposed is the exchange's time in the step, on its slowest stage:
// the all-reduce of the stage's trained gradients (Plan.GradBytes a
// parameter: FP32 unless grads=bf16) over its data-parallel group, then
// the all-gather of its parameters (the pod's weight bytes), one after
// the other and both exposed.
func (Zero1AllReduce) DPExposed(s *cost.Shard, stages []cost.Stage) float64 {
	pl, p := &s.Plan, s.Pod
	var exposed float64
	for _, st := range stages {
		_, dpG := pl.Groups(*p, st.Index)
		ar := p.StateCollective(roofline.AllReduce, dpG, st.Trained*pl.GradBytes())
		ag := p.StateCollective(roofline.AllGather, dpG, st.Trained*p.WeightBytes())
		exposed = max(exposed, ar+ag)
	}
	return exposed
}
