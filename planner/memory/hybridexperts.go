package memory

import "github.com/placer/placer/planner/plan"

// hybridExpertsMemory is what one of a hybrid's blocks of experts keeps
// for its backward on one GPU for one micro-batch, bytes (hybridMemory's
// E blocks): its norm's input, 2 units split over the tensor group
// (sequence-parallel where T > 1, as Resolve asks of experts), and the
// MoE path's moeActivations (the norm's output the router and the
// shared expert read, the router's scores, the permuted tokens and the
// grouped GEMMs' saved tensors on the most loaded rank, the shared
// expert's); less what selective recomputation's modules free of an MoE
// block (recomputeSaved's: layernorm, moe, moe_act, shared_experts).
func (c *counter) hybridExpertsMemory(split func(units, rep float64) float64) float64 {
	a := split(2, 2) + c.moeActivations()
	if c.pl.Recomputes()&^plan.RecomputeCoreAttn != 0 {
		a -= c.recomputeSaved(true)
	}
	return a
}
