package memory

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// hybridStageParams is stageLayerParams' for a hybrid with blocks of
// experts (transformer.KindExperts, E: Nemotron 3), counted on the
// layers stage s holds (plan.Plan.StagePattern's: the E layers may fall
// unevenly, and each stage holds its own). A block of experts keeps its local experts (Experts/EP
// of them, 1/ETP of each) and, over the tensor group, its norm, router
// (replicated) and shared expert (a 1/T shard, as moeDenseParams'); a
// Mamba-2, attention or MLP block 1/T of its parameters
// (transformer.HybridBlockParams).
func hybridStageParams(m *transformer.Spec, pl *plan.Plan, s int) (experts, layers float64) {
	T := float64(pl.TPs[s])
	local := float64(m.Experts/pl.EP) * float64(transformer.ExpertParams(*m)) / float64(pl.ETP)
	for _, k := range pl.StagePattern(m, s) {
		if k != transformer.KindExperts {
			layers += float64(transformer.HybridBlockParams(*m, k)) / T
			continue
		}
		experts += local
		layers += local + float64(int64(m.Hidden)+int64(m.SharedExperts)*transformer.ExpertParams(*m))/T + float64(transformer.RouterParams(*m))
	}
	return experts, layers
}

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
