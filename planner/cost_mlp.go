package planner

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// mlpBlock is one block's dense MLP of FFN for one micro-batch on one
// GPU, forward and backward: the norm, FC1 (column-parallel), the
// activation (GeLU, or SwiGLU's), FC2 (row-parallel), the residual, the
// tensor-parallel collectives beside the GEMMs and the FP8 casts; and
// rec, the forward selective recomputation runs again of it: with the
// mlp module (Megatron-Core's checkpointed MLP, its norm fused into FC1
// by Transformer Engine) all of it but the residual.
func (c *coster) mlpBlock() (fwd, bwd, rec phase) {
	m, T := c.M, float64(c.Plan.TP)
	n, h, f := c.Tokens, float64(m.Hidden), float64(m.FFN)
	sp := c.SP()
	act := n * h * bf16
	fcols := f / T
	if m.SwiGLU() {
		fcols = 2 * f / T
	}
	norm := kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h * sp, Read: act * sp, Writes: act * sp}
	resid := kernel{Class: graph.ClassElementwise, FLOPs: 3 * n * h * sp, Read: 2 * act * sp, Writes: 1.5 * act * sp}
	var actFn kernel
	if m.SwiGLU() {
		actFn = kernel{Class: graph.ClassElementwise, FLOPs: 6 * n * f / T, Read: 2 * n * f / T * bf16, Writes: n * f / T * bf16}
	} else {
		actFn = kernel{Class: graph.ClassElementwise, FLOPs: 10 * n * f / T, Read: n * f / T * bf16, Writes: n * f / T * bf16}
	}
	gFC1 := c.LGEMM(2*n*h*fcols, act+h*fcols*bf16, n*fcols*bf16)
	gFC2 := c.LGEMM(2*n*f/T*h, n*f/T*bf16+f/T*h*bf16, act)
	bFC1, bFC2 := c.Back(gFC1), c.Back(gFC2)
	before, after, bwdAfter, bwdBefore := c.TPKinds()
	t := c.Run
	fwd = t(norm).Plus(c.Pair(gFC1, before, act)).Plus(t(actFn)).Plus(c.Pair(gFC2, after, act)).Plus(t(resid))
	bwd = t(cost.Twice(resid)).Plus(c.Pair(bFC2, bwdAfter, act)).Plus(t(bFC2)).Plus(t(cost.Twice(actFn))).
		Plus(c.Pair(bFC1, bwdBefore, act)).Plus(c.Pair(bFC1, before, act)).Plus(t(cost.Twice(norm)))
	// The families' and the mechanisms' kernels in the MLP
	// (cost.MLPKernels: planner/families' traits).
	for p := range c.Points.MLPKernels.On(&c.Shard) {
		f, b := p.MLP(&c.Shard)
		fwd, bwd = fwd.Plus(f), bwd.Plus(b)
	}
	// w1 and w3's input and w2's; their outputs' gradients (the
	// registered cost.LowPrecision that prices the shard; none in BF16).
	var casts, castsB phase
	if lp := c.Points.LowPrecision.Of(&c.Shard); lp != nil {
		firsts := 1.0 // fc1; w1 and w3 under SwiGLU
		if m.SwiGLU() {
			firsts = 2
		}
		casts, castsB = lp.Linears(&c.Shard, n*h, n*f/T, [2]float64{n * fcols, n * h}, firsts)
		fwd, bwd = fwd.Plus(casts), bwd.Plus(castsB)
	}
	if c.Plan.Recomputes().Has(plan.RecomputeMLP) {
		rec = t(norm).Plus(c.Pair(gFC1, before, act)).Plus(t(actFn)).Plus(c.Pair(gFC2, after, act)).Plus(casts)
	}
	return fwd, bwd, rec
}
