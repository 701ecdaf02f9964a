package planner

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/plan/adapters"
)

// Fine-tuning's costs (plan/finetune.go): LoRA's frozen base and its
// adapters, as layer costs around a stack's (loraLayers), and the
// parameters it trains (stageCost.trained; its state in memory is
// planner/memory's loraMemory); packing is the attention's
// causal keys (Plan.PackedKeys, read by coreAttention).
//
// LoRA's kernels are mechanisms.LoRA's (its frozen base's weight
// gradients, its adapters): the registered cost.FineTune, which the
// coster wraps a stack's layer costs with where it prices the shard
// (newCosterOf).

// loraLayers are a stack's layer costs with fine-tuning's adapters (the
// registered cost.FineTune that prices the shard): the stack's, less the
// base's weight gradients, plus the adapters.
type loraLayers struct{ stack LayerCoster }

func (l loraLayers) Name() string { return l.stack.Name() }

// When is the stack's layer costs' declaration: the adapters wrap them.
func (l loraLayers) When() cost.When { return l.stack.When() }

// Dense is the stack's dense block with the weight gradients of its
// four linear layers gone and the adapters of the targeted ones added
// (their forward again in the backward under full recomputation).
func (l loraLayers) Dense(b cost.Blocks) (fwd, bwd phase) {
	fwd, bwd = l.stack.Dense(b)
	s := b.Base()
	ft := s.Points.FineTune.Of(s)
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
	return moeLoRA(b, fwd, bwd)
}

// Embedding is the stack's (its weight gradient left in: above).
func (l loraLayers) Embedding(b cost.Blocks) (fwd, bwd phase) { return l.stack.Embedding(b) }

// Output is the stack's output layer less its weight-gradient GEMM.
func (l loraLayers) Output(b cost.Blocks) (fwd, bwd phase) {
	fwd, bwd = l.stack.Output(b)
	s := b.Base()
	return fwd, minus(bwd, s.Run(s.Points.FineTune.Of(s).OutputWeightGrad(s)))
}

// minus is phase a less b (b's kernels taken out of a).
func minus(a, b phase) phase { return a.Plus(cost.Scale(b, -1)) }

// trained is the parameters of stage st that get gradients and
// optimizer state on one GPU: its adapters' under LoRA, else all.
func (st *stageCost) trained(pl *plan.Plan) float64 {
	if pl.LoRA() {
		return st.Adapters
	}
	return st.Params
}

// stepFLOPs is the FLOPs a step of plan pl runs on model m in
// Megatron's count (transformer.ModelFLOPs: the matmuls, the scores
// over the whole sequence's square, a backward twice the forward),
// fine-tuning's counted as it runs: with packing the scores over each
// sample's square (the sequence s replaced by sum L^2 / sum L over the
// mix), with LoRA the frozen linear layers' and the output layer's
// backward once their forward (the data gradient only) and the
// adapters' three times theirs. Without either, ModelFLOPs.
func stepFLOPs(m *transformer.Spec, pl *plan.Plan) float64 {
	full := transformer.ModelFLOPs(*m)
	if !pl.LoRA() && !pl.Packed() {
		return full
	}
	tokens := float64(m.Batch) * float64(m.Seq)
	_, scores := transformer.AttentionFLOPs(*m, float64(m.Seq))
	L := float64(m.Layers)
	linear := full/(3*tokens) - L*scores // a token's forward matmuls but the scores
	if pl.Packed() {
		var sq, sum float64
		for _, l := range pl.PackLens {
			sq += float64(l) * float64(l)
			sum += float64(l)
		}
		scores *= sq / sum / float64(m.Seq)
	}
	if !pl.LoRA() {
		return 3 * tokens * (linear + L*scores)
	}
	adapters := 2 * adapters.Token(pl.FineTune, m)
	return tokens * (2*linear + 3*L*scores + 3*adapters)
}

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
func moeLoRA(b cost.Blocks, fwd, bwd phase) (phase, phase) {
	s := b.Base()
	x, ok := s.Points.FineTune.Of(s).(expertFineTune)
	if !ok {
		return fwd, bwd
	}
	c := coster{Shard: *s}
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
