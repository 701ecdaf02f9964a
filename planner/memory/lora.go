package memory

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// loraActivations is what one block's adapters keep for their backward
// for one micro-batch on one GPU, bytes: each A's r-wide output (B's
// input; A's input is the layer's, kept already).
func (c *counter) loraActivations() float64 {
	var k float64
	in, _, _ := transformer.BlockLinearWidths(&c.m, float64(c.pl.TP))
	for i := range in {
		if c.pl.Targets().Has(plan.LoRATargets(1) << i) {
			k++
		}
	}
	return k * c.tokens * float64(c.pl.LoRARank) * bf16
}

// loraMemory is stage s's memory sm (stageMemory's) under LoRA: the
// base weights as stageState counts them (BF16, or FP8 where fp8
// params), the adapters' BF16 weights beside them, gradients and
// optimizer state of the adapters only (Plan.GradBytes and Adam's 12 bytes
// a parameter, sharded as the plan shards them), and the adapters'
// activations for the micro-batches in flight (recomputed, not kept,
// under full recomputation). Without LoRA, sm.
func (c *counter) loraMemory(s int, st *Stage, sm stageMem) stageMem {
	if !c.pl.LoRA() {
		return sm
	}
	pl := &c.pl
	a := st.Adapters
	sm.weights += a * bf16
	sm.grads, sm.opt = a*pl.GradBytes(), a*12
	if pl.DistOpt || pl.FSDP {
		sm.opt /= float64(pl.DP * pl.CP)
	}
	if pl.FSDP {
		sm.grads /= float64(pl.DP * pl.CP)
	}
	if pl.Recompute != plan.FullRecompute {
		sm.acts += inflight(pl, s) * c.stageLoRAActivations(s, st)
	}
	return sm
}

// stageLoRAActivations is what stage s's blocks' adapters keep for one
// micro-batch on one GPU, bytes: loraActivations a dense block, and on
// an MoE block the attention's adapters' (tokens x r each) and the
// routed experts' shared adapters' (an r-wide row for each row their
// grouped GEMMs run on: the tokens the rank receives, gathered over
// the expert-tensor group) and the shared experts' (tokens x r each).
func (c *counter) stageLoRAActivations(s int, st *Stage) float64 {
	l := float64(c.pl.Stages[s])
	if !c.m.MoE() {
		return l * c.loraActivations()
	}
	pl := &c.pl
	r := float64(pl.LoRARank)
	var attn, fcs float64
	for _, t := range []plan.LoRATargets{plan.LoRAQKV, plan.LoRAProj} {
		if pl.Targets().Has(t) {
			attn++
		}
	}
	for _, t := range []plan.LoRATargets{plan.LoRAFC1, plan.LoRAFC2} {
		if pl.Targets().Has(t) {
			fcs++
		}
	}
	rows := c.tokens / float64(pl.TP) * float64(c.m.TopK) * pl.LoadFactor() * float64(pl.ETP)
	shared := 0.0
	if c.m.SharedExperts > 0 {
		shared = c.tokens
	}
	moe := (attn*c.tokens + fcs*(rows+shared)) * r * bf16
	dense := float64(st.Dense)
	return dense*c.loraActivations() + (l-dense)*moe
}
