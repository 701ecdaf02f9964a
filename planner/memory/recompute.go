package memory

import "github.com/placer/placer/planner/plan"

// recomputeSaved is the bytes of one block's activations (an MoE
// block's with moe, else a dense block's) that selective
// recomputation's modules other than the core attention free, for one
// micro-batch on one GPU (layerMemory's): a family's attention's
// (Attention.RecomputeFreed); layernorm the output of the norms that are
// modules of their own (an MoE block's norm before its experts: the
// experts' input); mlp a
// dense MLP's saved tensors but the dropout mask (FC1's input, the
// activation's input, FC2's input; its checkpoint keeps the block's
// residual, counted as the norm's input); moe everything moeActivations
// counts but the experts' input; moe_act FC2's input (the activation's
// output); shared_experts the shared experts'. Held while one layer
// recomputes: not counted (a few of its tensors, not the stage's).
func (c *counter) recomputeSaved(moe bool) float64 {
	m, pl := &c.m, &c.pl
	mods := pl.Recomputes()
	T := float64(pl.TP)
	unit := c.tokens * float64(m.Hidden) // s b h
	in := c.gemmInputBytes()
	// rep units replicated over the tensor group without sequence
	// parallelism, shard units split over it.
	split := func(rep, shard float64) float64 {
		if pl.SequenceParallel {
			return (rep + shard) * unit / T
		}
		return rep*unit + shard*unit/T
	}
	var saved float64
	if c.attention != nil {
		for _, p := range c.attention.RecomputeFreed(*m, mods, in) {
			saved += split(p[0], p[1])
		}
	}
	if moe {
		a, input, mid, shared := c.moeActivationParts()
		if mods.Has(plan.RecomputeLayerNorm) {
			saved += input
		}
		switch {
		case mods.Has(plan.RecomputeMoE):
			saved += a - input // its checkpoint keeps the input
		default:
			if mods.Has(plan.RecomputeMoEAct) {
				saved += mid
			}
			if mods.Has(plan.RecomputeSharedExperts) {
				saved += shared
			}
		}
		return saved
	}
	if mods.Has(plan.RecomputeMLP) {
		_, mlp, _ := blockUnits(m, in, !c.dropoutFree(), c.attention)
		fc1In, mask := in, 1.0 // FC1's input (FP8: one byte), the dropout mask (SwiGLU's block has none)
		if m.SwiGLU() || m.Act == "relu2" || c.dropoutFree() {
			mask = 0
		}
		saved += split(fc1In, mlp-mask-fc1In)
	}
	return saved
}
