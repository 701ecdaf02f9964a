package memory

import "github.com/placer/placer/planner/plan"

// outputProjSaved is what an MXFP8 output layer (fp8-output-proj=on:
// Megatron-Core core_v0.18.0's TELMHeadColumnParallelLinear, a
// Transformer Engine Linear under the MXFP8 recipe) keeps for its
// backward on the last stage, bytes, for the one micro-batch whose
// output layer runs (its backward follows its forward, as the logits'):
// the columnwise MXFP8 copies of its input (tokens x hidden) and of its
// weight (hidden x vocab/T, cast from the BF16 parameter in the
// forward), 1 + 1/32 bytes an element each (plan.SavedInputBytes; TE
// v2.10 linear.py _Linear.forward keeps the columnwise usage of both
// for the data- and weight-gradient GEMMs). 0 in BF16.
func (c *counter) outputProjSaved() float64 {
	pl, m := &c.pl, &c.m
	if !pl.FP8OutputProj || pl.FP8 != plan.FP8MX {
		return 0
	}
	h, T := float64(m.Hidden), float64(pl.TP)
	return plan.SavedInputBytes(plan.FP8MX) * (m.OutputTokens(c.tokens)*h + h*float64(m.Vocab)/T)
}
