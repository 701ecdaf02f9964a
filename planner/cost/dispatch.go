package cost

import "github.com/placer/placer/planner/plan"

// TokenDispatcher is the extension point of an MoE layer's token
// dispatch and permutation as the plan's stack runs them, the first
// registered plug-in that implements it (First): On is its work on
// shard s, with router the registered plug-ins that add kernels beside
// the router's top-k (RouterKernels), those s's record says price it;
// ExchangeSMs, the SMs plan pl's exchange kernels take from the
// computation beside them (0: the collectives library's channels).
//
// Dispatch: First.
type TokenDispatcher interface {
	Plugin
	On(s *Shard, router EachPricing[RouterKernels]) Dispatch
	ExchangeSMs(pl *plan.Plan) int
}

// Dispatch is a token dispatch's work in one MoE layer for one
// micro-batch on one GPU (TokenDispatcher):
//   - DispatchSyncs, the forward's device-to-host synchronizations (the
//     backward reuses what they fetched);
//   - Glue, the router's scores and top-k and the permutation of nl
//     tokens to rows expert rows, forward and backward, given the fused
//     kernels of each (the router's GEMM, the scores, the permutation
//     and the unpermutation);
//   - DispatchComm, the exchange of a forward (the backward's the same):
//     recv the token copies the most loaded GPU receives, rows its
//     expert GEMMs' rows, nl its own tokens;
//   - Bookkeeping, what it runs around its exchanges, forward and
//     backward, with local experts on the GPU;
//   - Issue, what the host issues after the forward's synchronization,
//     in runs each issued from an empty queue (Drain), given the glue,
//     the exchange, the bookkeeping's forward and the routed experts'
//     forward.
type Dispatch interface {
	DispatchSyncs() float64
	Glue(router, scores, permute, unpermute Kernel, rows, nl float64) Glue
	DispatchComm(recv, rows, nl float64) Phase
	Bookkeeping(recv, rows, local float64) (fwd, bwd Phase)
	Issue(g Glue, comm, book, routed Phase) []Drain
}

// Glue is an MoE layer's router top-k and permutation as the stack runs
// them, forward and backward; Multihot, where a dispatcher makes the
// tokens it received into the multihot map before the permutation in
// kernels of its own, their forward as its synchronizations split them
// (none elsewhere), and MultihotB their backward.
type Glue struct {
	Scores, ScoresB, Permute, PermuteB, Unpermute, UnpermuteB Phase
	Multihot                                                  []Phase
	MultihotB                                                 Phase
}

// MultihotF is g's multihot conversion forward, its runs together.
func (g *Glue) MultihotF() Phase {
	var f Phase
	for _, r := range g.Multihot {
		f = f.Plus(r)
	}
	return f
}

// Drain is a run of phases a host issues, in order, from a queue that a
// device-to-host synchronization emptied: Ahead, the GPU's seconds
// issued before the synchronization still queued ahead of them.
type Drain struct {
	Ahead float64
	Steps []Phase
}
