package scale

import (
	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/scale/mechanisms"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
)

// optimizerStep is the optimizer's step on the most loaded device.
// Adam over the device's share of the optimizer state: read the FP32
// gradient, master weight and two moments, write the three back and
// the BF16 weight (30 bytes a parameter), and zero the gradient
// buffer (4 bytes a parameter of the device's whole model). With
// BF16 gradients the share's gradient is first cast to an FP32 main
// gradient (read 2, write 4) and the buffer zeroed is 2 bytes a
// parameter.
func optimizerStep(m *transformer.Spec, pl *plan.Plan, p *plan.Pod, stages []stageCost) float64 {
	var paramsMax float64
	for _, st := range stages {
		paramsMax = max(paramsMax, st.trained(pl))
	}
	D := float64(pl.DP * pl.CP) // the GPUs of a stage's weights
	gb := pl.GradBytes()
	opt := paramsMax
	if pl.DistOpt || pl.FSDP {
		opt /= D
	}
	if m.MoE() {
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
		optRead, optWrite = 16+bf16, 14+4
	}
	zeroed := gb * paramsMax
	if pl.Titan() {
		zeroed = 0 // set to None, not zeroed (titanClip)
	}
	if pl.Run.LAMB {
		optRead, optWrite = optRead+mechanisms.LAMBExtraRead, optWrite+mechanisms.LAMBExtraWrite
	}
	t := kernel{Class: graph.ClassElementwise, Read: optRead * opt, Writes: optWrite*opt + zeroed}.Time(&p.Hardware)
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
	if mechanisms.TorchaoOn(pl) {
		// torchao casts them every micro-batch (mechanisms/torchao.go).
		return t + torchaoSteps(m, pl, p, stages)
	}
	if pl.FP8 != "" {
		// The blocks' weights cast to FP8 once a step (the first
		// micro-batch's; Transformer Engine keeps them for the others):
		// read as BF16, written row- and column-wise (Hopper's FP8 GEMMs
		// take both layouts), and with current scaling read once more
		// for their amax; with torchao's rowwise scaling the same (one
		// cast along the weight's rows, one along its columns after
		// their amax pass: mechanisms/rowwise.go).
		var lw float64
		for _, st := range stages {
			lw = max(lw, st.Layers)
		}
		t += kernel{Class: graph.ClassElementwise, FLOPs: lw, Read: 2 * lw, Writes: 2 * lw}.Time(&p.Hardware)
		if pl.FP8 == plan.FP8Current || plan.Rowwise(pl.FP8) {
			t += kernel{Class: graph.ClassReduction, FLOPs: lw, Read: 2 * lw}.Time(&p.Hardware)
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
// buffer is zeroed (optimizerStep charges Megatron's otherwise).
func titanClip(pl *plan.Plan, p *plan.Pod, opt float64) float64 {
	const grad = 4 // FP32 gradients of the FP32 sharded parameters
	t := kernel{Class: graph.ClassReduction, FLOPs: 2 * opt, Read: grad * opt}.Time(&p.Hardware)
	t += kernel{Class: graph.ClassElementwise, FLOPs: opt, Read: grad * opt, Writes: grad * opt}.Time(&p.Hardware)
	tpG, dpG := pl.Groups(*p, 0)
	for _, g := range []plan.Group{dpG, tpG} {
		c, _ := p.Collective(roofline.AllReduce, g, 4)
		t += c
	}
	return t
}

// torchaoSteps is what torchao's float8 adds to a step of plan pl on its
// busiest stage: the weights' casts every micro-batch
// (torchaoWeightCasts) and, with fp8gather=on, the scales computed once
// a step over the stage's shards (fp8GatherScales).
func torchaoSteps(m *transformer.Spec, pl *plan.Plan, p *plan.Pod, stages []stageCost) float64 {
	var t float64
	for s, st := range stages {
		c := mechanisms.TorchaoWeightCasts(pl, &p.Hardware, st.Layers)
		if pl.FP8Gather && !m.MoE() {
			_, dpG := pl.Groups(*p, s)
			c += mechanisms.FP8GatherScales(p, dpG, st.Layers/float64(dpG.Size()), mechanisms.TitanLinears*float64(pl.Stages[s]))
		}
		t = max(t, c)
	}
	return t
}
