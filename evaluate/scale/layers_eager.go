package scale

import (
	"github.com/placer/placer/evaluate/scale/eager"
	"github.com/placer/placer/evaluate/scale/plan"
)

// eagerLayers is what the eager stacks' layer costs share: a block as
// the ATen ops eager PyTorch issues for code base code's layer
// (eagerBlock: eager.LayerOps at the coster's shard shape), an MoE
// block's attention half so and its experts as the stack's MoE block
// (eagerMoE: eager.MoEOps), the embedding as the fused stack's (the
// lookup and its gradient are the same kernels), the output layer and
// loss as the code base writes them (eagerOutput). Each eager stack
// embeds it and says whose MoE block it runs (its MoE method).
type eagerLayers struct{ code eager.CodeBase }

func (e eagerLayers) Dense(c coster) (fwd, bwd phase) {
	// The whole layer is the attention half's part: the ops are one list.
	return c.join(half(c.eagerBlock(e.code, false)), part{}, false)
}

// moe is an MoE block of the eager stack: its attention half's ATen
// ops (eagerBlock, the norm and residual of the experts included) and
// the experts as MoE block impl runs them (loop: torchtitan's for-loop
// over the experts).
func (e eagerLayers) moe(c coster, impl eager.MoEImpl, loop bool) (fwd, bwd phase) {
	return c.join(half(c.eagerBlock(e.code, true)), half(c.eagerMoE(impl, loop, e.code.Traits().AttnGEMMs)), true)
}

func (eagerLayers) Embedding(c coster) (fwd, bwd phase) { return c.embedding() }

func (e eagerLayers) Output(c coster) (fwd, bwd phase) { return c.eagerOutput(e.code) }

// eagerCode is the eager code base the layer costs run (EagerCosting
// reads it).
func (e eagerLayers) eagerCode() eager.CodeBase { return e.code }

// eagerStack is layer costs of an eager stack: whose layer's ATen ops
// and whose MoE block (experts: the block and whether it loops over the
// experts) under settings run.
type eagerStack interface {
	LayerCoster
	eagerCode() eager.CodeBase
	experts(run plan.Settings) (impl eager.MoEImpl, loop bool)
}
