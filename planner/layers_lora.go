package planner

import (
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// Fine-tuning's layer costs (plan/finetune.go): LoRA's frozen base and
// its adapters, as layer costs around a stack's (loraLayers). The
// parameters it trains are stageCost.trained's, the FLOPs it counts
// stepFLOPs's, its state in memory planner/memory's loraMemory; packing
// is the attention's causal keys (Plan.PackedKeys, read by
// coreAttention).
//
// LoRA's kernels are mechanisms.LoRA's (its frozen base's weight
// gradients, its adapters): the registered cost.FineTune, which the
// coster wraps a stack's layer costs with where it prices the shard
// (newCosterOf).

// loraLayers are a stack's layer costs with fine-tuning's adapters (the
// registered cost.FineTune that prices the shard): the stack's, less the
// base's weight gradients, plus the adapters.
type loraLayers struct {
	stack LayerCoster
	pts   *cost.Points // the plug-ins asked: the coster's
}

func (l loraLayers) Name() string { return l.stack.Name() }

// When is the stack's layer costs' declaration: the adapters wrap them.
func (l loraLayers) When() cost.When { return l.stack.When() }

// Dense is the stack's dense block with the weight gradients of its
// four linear layers gone and the adapters of the targeted ones added
// (their forward again in the backward under full recomputation).
func (l loraLayers) Dense(b cost.Blocks) (fwd, bwd phase) {
	fwd, bwd = l.stack.Dense(b)
	s := b.Base()
	ft := l.pts.FineTune.Of(s)
	af, ab := ft.Adapters(s)
	fwd = fwd.Plus(af)
	bwd = minus(bwd, ft.FrozenWeightGrads(s)).Plus(ab)
	if s.Plan.Recompute == plan.FullRecompute {
		bwd = bwd.Plus(af)
	}
	return fwd, bwd
}

// MoE is the stack's MoE block with the base's weight gradients gone
// and the adapters added (moeLoRA).
func (l loraLayers) MoE(b cost.Blocks) (fwd, bwd phase) {
	fwd, bwd = l.stack.MoE(b)
	return moeLoRA(l.pts, b, fwd, bwd)
}

// Embedding is the stack's (its weight gradient left in: above).
func (l loraLayers) Embedding(b cost.Blocks) (fwd, bwd phase) { return l.stack.Embedding(b) }

// Output is the stack's output layer less its weight-gradient GEMM.
func (l loraLayers) Output(b cost.Blocks) (fwd, bwd phase) {
	fwd, bwd = l.stack.Output(b)
	s := b.Base()
	return fwd, minus(bwd, s.Run(l.pts.FineTune.Of(s).OutputWeightGrad(s)))
}

// minus is phase a less b (b's kernels taken out of a).
func minus(a, b phase) phase { return a.Plus(cost.Scale(b, -1)) }

// expertFineTune is what fine-tuning prices of an MoE block beside a
// dense block's (mechanisms.LoRA's): the attention's adapters and
// frozen weight gradients alone, and the experts' adapters over rows
// rows.
type expertFineTune interface {
	AttentionAdapters(s *cost.Shard) (fwd, bwd phase)
	AttentionFrozenWeightGrads(s *cost.Shard) phase
	ExpertAdapters(s *cost.Shard, rows float64) (fwd, bwd phase)
}

// moeLoRA is an MoE block's LoRA (plan/loramoe.go) around the stack's
// MoE block (fwd, bwd): the attention's two linear layers', the routed
// experts' grouped and the shared experts' weight gradients gone
// (expertWork's wgrad) and the router's (frozen, not a target), and the
// adapters of the attention's targets and of the experts added (their
// forward again in the backward under full recomputation).
func moeLoRA(pts *cost.Points, b cost.Blocks, fwd, bwd phase) (phase, phase) {
	s := b.Base()
	x, ok := pts.FineTune.Of(s).(expertFineTune)
	if !ok {
		return fwd, bwd
	}
	c := coster{Shard: *s, Points: pts}
	w := c.expertWork()
	router, _, _, _ := moeGlue(c.M, w.nl)
	af, ab := x.AttentionAdapters(s)
	ef, eb := x.ExpertAdapters(s, w.rows)
	frozen := x.AttentionFrozenWeightGrads(s).Plus(w.wgrad).Plus(c.Run(router))
	fwd = fwd.Plus(af).Plus(ef)
	bwd = minus(bwd, frozen).Plus(ab).Plus(eb)
	if s.Plan.Recompute == plan.FullRecompute {
		bwd = bwd.Plus(af).Plus(ef)
	}
	return fwd, bwd
}
