package scale

import (
	"github.com/placer/placer/evaluate/profile"
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
	t := kernel{class: graph.ClassElementwise, read: optRead * opt, writes: optWrite*opt + gb*paramsMax}.time(&p.Hardware)
	if p.Profile != nil {
		// The profile's AdamW step over the device's share (its time per
		// parameter, FP32 weights and moments; profile.OptimizerTime).
		if mt, src := p.Profile.OptimizerTime(opt); src != profile.Modelled {
			t = mt
		}
	}
	if torchao(pl) {
		// torchao casts them every micro-batch (cost_torchao.go).
		return t + torchaoSteps(m, pl, p, stages)
	}
	if pl.FP8 != "" {
		// The blocks' weights cast to FP8 once a step (the first
		// micro-batch's; Transformer Engine keeps them for the others):
		// read as BF16, written row- and column-wise (Hopper's FP8 GEMMs
		// take both layouts), and with current scaling read once more
		// for their amax; with torchao's rowwise scaling the same (one
		// cast along the weight's rows, one along its columns after
		// their amax pass: rowwise.go).
		var lw float64
		for _, st := range stages {
			lw = max(lw, st.Layers)
		}
		t += kernel{class: graph.ClassElementwise, flops: lw, read: 2 * lw, writes: 2 * lw}.time(&p.Hardware)
		if pl.FP8 == plan.FP8Current || plan.Rowwise(pl.FP8) {
			t += kernel{class: graph.ClassReduction, flops: lw, read: 2 * lw}.time(&p.Hardware)
		}
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
		c := torchaoWeightCasts(pl, &p.Hardware, st.Layers)
		if pl.FP8Gather && !m.MoE() {
			_, dpG := pl.Groups(*p, s)
			c += fp8GatherScales(p, dpG, st.Layers/float64(dpG.Size()), titanLinears*float64(pl.Stages[s]))
		}
		t = max(t, c)
	}
	return t
}
