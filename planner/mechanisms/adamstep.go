package mechanisms

import (
	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// adamStep is the optimizer's step on the most loaded device of shard
// s's stages, with extraRead and extraWrite bytes a parameter of the
// device's share beyond Adam's (LAMB's passes). Adam over the device's
// share of the optimizer state: read the FP32 gradient, master weight
// and two moments, write the three back and the BF16 weight (30 bytes a
// parameter), and zero the gradient buffer (4 bytes a parameter of the
// device's whole model). With BF16 gradients the share's gradient is
// first cast to an FP32 main gradient (read 2, write 4) and the buffer
// zeroed is 2 bytes a parameter. torchtitan sets its gradients to None
// (no buffer zeroed) and clips them first (titanClip). Where the pod's
// profile measured an AdamW step, its time over the device's share
// stands in for all of it.
func adamStep(s *cost.Shard, stages []cost.Stage, extraRead, extraWrite float64) float64 {
	return adamStepOver(s, stages, extraRead, extraWrite, float64(s.Plan.DP*s.Plan.CP))
}

// adamStepOver is adamStep with the optimizer state sharded over D GPUs
// under distopt=on or fsdp=on (adamStep: every data-parallel and
// context-parallel GPU of a stage's weights; DistLAMBShards: the node's).
func adamStepOver(s *cost.Shard, stages []cost.Stage, extraRead, extraWrite, D float64) float64 {
	pl, p := &s.Plan, s.Pod
	var paramsMax float64
	for _, st := range stages {
		paramsMax = max(paramsMax, st.Trained)
	}
	gb := pl.GradBytes()
	opt := paramsMax
	if pl.DistOpt || pl.FSDP {
		opt /= D
	}
	if s.M.MoE() {
		// Each stage's share: the experts' over their expert-data-parallel
		// replicas, the rest over the data-parallel ones.
		opt = 0
		for _, st := range stages {
			o := st.Params
			if pl.DistOpt || pl.FSDP {
				o = (st.Params-st.Experts)/D + st.Experts/float64(pl.EDP)
			}
			opt = max(opt, o)
		}
	}
	optRead, optWrite := 16.0, 14.0
	if pl.GradBF16 {
		optRead, optWrite = 16+cost.BF16, 14+4
	}
	zeroed := gb * paramsMax
	if pl.Titan() {
		zeroed = 0 // set to None, not zeroed (titanClip)
	}
	if extraRead != 0 || extraWrite != 0 {
		optRead, optWrite = optRead+extraRead, optWrite+extraWrite
	}
	t := cost.Kernel{Class: graph.ClassElementwise, Read: optRead * opt, Writes: optWrite*opt + zeroed}.Time(&p.Hardware)
	if pl.Titan() {
		t += titanClip(pl, p, opt)
	}
	if p.Profile != nil {
		// The profile's AdamW step over the device's share (its time per
		// parameter, FP32 weights and moments; profile.OptimizerTime).
		if mt, src := p.Profile.OptimizerTime(opt); src != profile.Modelled {
			t = mt
		}
	}
	return t
}

// titanClip is torchtitan's gradient clipping, once a step before the
// optimizer: train.py (9dec370; the same at v0.2.0) calls
// utils.clip_grad_norm_(..., job_config.training.max_norm, foreach=True)
// with max_norm 1.0 by default (config_manager.py), which is
// torch.nn.utils.get_total_norm (torch._foreach_norm over the device's
// gradients, their norms stacked and normed) then clip_grads_with_norm_
// (torch._foreach_mul_ of every gradient by the clamped coefficient,
// always run: torch/nn/utils/clip_grad.py avoids the branch to spare a
// device-to-host synchronization). The gradients are the GPU's shard of
// the FP32 parameters' (opt of them, FSDP2's reduce-scatter output, or
// the replica's without FSDP): read once for the norm, read and written
// once for the product. The norm of DTensor shards is partial, so its
// scalar is all-reduced over the data-parallel and tensor-parallel
// groups. torchtitan's optimizers.zero_grad() is torch's default
// set_to_none=True (torch.optim.Optimizer.zero_grad), so no gradient
// buffer is zeroed (adamStep charges Megatron's otherwise).
func titanClip(pl *plan.Plan, p *plan.Pod, opt float64) float64 {
	const grad = 4 // FP32 gradients of the FP32 sharded parameters
	t := cost.Kernel{Class: graph.ClassReduction, FLOPs: 2 * opt, Read: grad * opt}.Time(&p.Hardware)
	t += cost.Kernel{Class: graph.ClassElementwise, FLOPs: opt, Read: grad * opt, Writes: grad * opt}.Time(&p.Hardware)
	tpG, dpG := pl.Groups(*p, 0)
	for _, g := range []plan.Group{dpG, tpG} {
		c, _ := p.Collective(roofline.AllReduce, g, 4)
		t += c
	}
	return t
}

// TitanClip is titanClip, for the by-hand tests of torchtitan's step.
func TitanClip(pl *plan.Plan, p *plan.Pod, opt float64) float64 { return titanClip(pl, p, opt) }
