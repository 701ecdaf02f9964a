package codebases

import (
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/eager"
	"github.com/placer/placer/planner/plan"
)

// Eager is what the eager stacks' layer costs share: a block as
// the ATen ops eager PyTorch issues for code base code's layer
// (eagerBlock: eager.LayerOps at the coster's shard shape), an MoE
// block's attention half so and its experts as the stack's MoE block
// (eagerMoE: eager.MoEOps), the embedding as the fused stack's (the
// lookup and its gradient are the same kernels), the output layer and
// loss as the code base writes them (EagerOutput). Each eager stack
// embeds it and says whose MoE block it runs (its MoE method).
type Eager struct{ Code eager.CodeBase }

func (e Eager) Dense(b cost.Blocks) (fwd, bwd phase) {
	// The whole layer is the attention half's part: the ops are one list.
	return b.Join(cost.Half(eagerBlock(b, e.Code, false)), cost.Part{}, false)
}

// MoEWith is an MoE block of the eager stack: its attention half's ATen
// ops (eagerBlock, the norm and residual of the experts included) and
// the experts as MoE block impl runs them (loop: torchtitan's for-loop
// over the experts).
func (e Eager) MoEWith(b cost.Blocks, impl eager.MoEImpl, loop bool) (fwd, bwd phase) {
	return b.Join(cost.Half(eagerBlock(b, e.Code, true)), cost.Half(eagerMoE(b, impl, loop, e.Code.Traits().AttnGEMMs)), true)
}

func (Eager) Embedding(b cost.Blocks) (fwd, bwd phase) { return b.Embedding() }

func (e Eager) Output(b cost.Blocks) (fwd, bwd phase) { return EagerOutput(b, e.Code) }

// eagerCode is the eager code base the layer costs run (EagerCosting
// reads it).
func (e Eager) EagerCode() eager.CodeBase { return e.Code }

// EagerStack is layer costs of an eager stack: whose layer's ATen ops
// and whose MoE block (experts: the block and whether it loops over the
// experts) under settings run.
type EagerStack interface {
	cost.CodeBase
	EagerCode() eager.CodeBase
	Experts(run plan.Settings) (impl eager.MoEImpl, loop bool)
}
