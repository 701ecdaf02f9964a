package families

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
)

// SandwichNorms is Gemma's norms of the attention's and the MLP's
// outputs before their residuals (transformer.Spec.Norms 4: Gemma 2's
// and 3's post_attention_layernorm and post_feedforward_layernorm beside
// the two input norms), on the fused layers: one RMS norm over the
// block's hidden state after each half, forward, and its backward
// (twice the traffic), as the block's own input norm is costed.
type SandwichNorms struct{}

var (
	_ cost.AttentionKernels = SandwichNorms{}
	_ cost.MLPKernels       = SandwichNorms{}
)

// Name is the trait's registered name.
func (SandwichNorms) Name() string { return "sandwich-norms" }

// When is the norms' declaration: a model that norms each half's output
// (more than the two norms a block of others has).
func (SandwichNorms) When() cost.When { return sandwichWhen }

var sandwichWhen = cost.When{cost.Model("norms>2", func(m *transformer.Spec) bool { return m.NormsPerBlock() > 2 })}

// Attention is the norm of the attention's output, forward and backward.
func (SandwichNorms) Attention(s *cost.Shard) (fwd, bwd cost.Phase) { return outputNorm(s) }

// MLP is the norm of the MLP's output, forward and backward.
func (SandwichNorms) MLP(s *cost.Shard) (fwd, bwd cost.Phase) { return outputNorm(s) }

// outputNorm is one RMS norm over the shard's tokens of the hidden size
// in BF16 (its sequence-parallel share), forward, and backward twice its
// traffic: the block's input norm's kernel.
func outputNorm(s *cost.Shard) (fwd, bwd cost.Phase) {
	n, h, sp := s.Tokens, float64(s.M.Hidden), s.SP()
	act := n * h * cost.BF16
	norm := cost.Kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h * sp, Read: act * sp, Writes: act * sp}
	return s.Run(norm), s.Run(cost.Twice(norm))
}
