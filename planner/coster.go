package planner

import (
	"sync"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/codebases"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/mechanisms"
)

// The package's vocabulary, on which every other file builds and which
// builds on none of them: the terms every cost of a step is written in
// (kernel, phase; a phase graphed, exposed to its host, drained after a
// synchronization), the registered plug-ins, and the coster, which holds
// one plan's shard, decided (decide), and the layer costs it asks
// (LayerCoster). Above it, each on what is below: the blocks
// (cost_*.go), the layers (layers.go; a profile's and fine-tuning's
// around them; layercosts.go, which picks them), a tensor-parallel
// degree's kit (kits.go), the stages (stages.go), and the step (steps.go,
// the data-parallel communication, evaluate.go).

// bf16 is the element size of activations, weights and their gradients
// in BF16 mixed precision (cost.BF16).
const bf16 = cost.BF16

// registered is the registered plug-ins at each extension point
// (planner/cost), resolved once from the registries (families.Registered,
// mechanisms.Registered, codebases.Registered) by each point's
// rule (cost.Resolve), and handed down beside every shard a step is
// costed on (coster.Points): the coster asks a point's plug-ins there,
// not here. Nothing changes it; a test that registers a plug-in of its own
// resolves its own (newCosterOf).
var registered = cost.Resolve(families.Registered, mechanisms.Registered, codebases.Registered)

// kernel, phase and syncTail are the vocabulary every cost of a step is
// written in, shared with the plug-ins (planner/cost).
type (
	kernel    = cost.Kernel
	fusedAttn = cost.FusedAttn
	phase     = cost.Phase
	syncTail  = cost.SyncTail
)

// graphed is phase a captured in one CUDA graph and replayed: its
// kernels (their GPU time unchanged) issued by one replay, not launch by
// launch (Megatron-Core's Transformer Engine graphs, one per captured
// scope of a layer and direction: cuda_graph_impl "transformer_engine").
// A phase that syncs with its host cannot be captured: the caller keeps
// such phases eager (resolveSoftware refuses the plans that would graph
// them).
func graphed(a phase) phase {
	if a.Launches == 0 && a.Calls == 0 {
		return a
	}
	a.Launches, a.Calls, a.Replays, a.Tail = 0, 0, 1, syncTail{}
	return a
}

// expose is phase ph with its host's wait under host h, forward or
// backward (bwd), as the registered Host prices it (mechanisms.HostIssue:
// cost.Host's Expose); ph as it is without one.
func expose(pts *cost.Points, h *kernels.Host, ph phase, bwd bool) phase {
	if pts.Host == nil {
		return ph
	}
	return pts.Host.Expose(h, ph, bwd)
}

// drain is the tail of steps host h issues after a device-to-host
// synchronization with ahead seconds queued before it (cost.Host's
// Drain); none without a registered Host.
func drain(pts *cost.Points, h *kernels.Host, ahead float64, steps ...phase) syncTail {
	if pts.Host == nil {
		return syncTail{}
	}
	return pts.Host.Drain(h, ahead, steps...)
}

// coster holds what every layer of one plan shares: the shard its layers
// are costed at (cost.Shard, what the plug-ins are given), the
// registered plug-ins it asks at each extension point (the shard does
// not carry them: a plug-in is given the shard, never the points) and
// the layer costs it asks.
type coster struct {
	cost.Shard
	Points *cost.Points
	// layers are the layer costs it asks (layersOf: the plan's stack's,
	// a profile's where the pod has one).
	layers LayerCoster
}

// LayerCoster is what a stack's code costs of a training step's layers:
// one transformer block, dense or with experts, and the two ends of the
// model, the embedding and the output layer with its loss. It is the one
// seam between the plan (the model, the plan's shard shapes, the
// hardware and its measurements, all held by the coster it is given) and
// the kernels a stack issues for them (DESIGN §13: the same layer under
// two stacks is two lists of kernels, not one list and a fudge factor).
//
// Each method costs one micro-batch on one GPU of the plan's tensor
// group, at the coster's shard shape (c.pl.TP, c.pl.SequenceParallel,
// c.tokens, the experts' EP and ETP), and returns its forward and its
// backward as phases: the kernels' time (busy), the tensor-, context-
// and expert-parallel communication (all and exposed), the kernels and
// collectives the host launches, the CUDA graphs it replays and the
// device-to-host synchronizations it waits on. Where the coster says
// noComm (a block's kernels alone) no communication is costed; where it
// says noHost the host's wait is left out.
//
//   - Dense and MoE are a block's, its selective or full recomputation
//     included in the backward and the host's wait exposed in both
//     (coster.join does both for a block of two halves). Dense is a
//     block with a dense MLP: every block of a dense model, the dense
//     blocks before the experts in a model with experts. MoE is a block
//     whose MLP is routed experts.
//   - Embedding and Output are the first stage's lookup and the last
//     stage's final norm, output layer and loss, their host's wait not
//     exposed (the caller exposes it).
//
// A stack's layer costs are a code base (cost.CodeBase), one
// implementation in a file of its own in planner/codebases
// (fused.go, llamapy.go, ...), handed the coster's blocks (cost.Blocks),
// registered by name in codebases.Registered and chosen by its
// declaration of the stacks that run it (layerCoster). A profile wraps them (profiledLayers), answering where
// it measured.
type LayerCoster = cost.CodeBase

// decide records on shard s which of the plug-ins pts resolved price its
// step (cost.Shard.Priced), once: the families' traits, the mechanisms
// and the code base whose declarations hold for s (cost.Points.Decide). The extension points ask their
// plug-ins by the record (cost.Pricing, cost.EachPricing), and a
// figure's provenance names it (Result.PricedBy). Where the record has
// a plug-in price the plan's low-precision recipe (cost.LowPrecision),
// the blocks' GEMMs take its speedups' inverses of their BF16 time
// (cost.Shard.FP8Fwd, FP8Bwd); none: BF16.
// The plug-ins are asked on a pooled copy of s, so that s, a coster's
// shard on its caller's stack, is not moved to the heap by being handed
// to them.
func decide(pts *cost.Points, s *cost.Shard) {
	t := shardPool.Get().(*cost.Shard)
	*t = *s
	s.Priced = pts.Decide(t)
	*t = cost.Shard{}
	shardPool.Put(t)
	if lp := pts.LowPrecision.Of(s); lp != nil {
		bf16 := s.H.PeakFLOPS(graph.ClassMatMul, graph.BF16)
		fwd, bwd := lp.Speedups(&s.Plan, s.Pod, bf16)
		s.FP8Fwd, s.FP8Bwd = 1/fwd, 1/bwd
	}
}

var shardPool = sync.Pool{New: func() any { return new(cost.Shard) }}

// dispatcherOf is the token dispatch of shard s, pts' cost.TokenDispatcher's
// (mechanisms.TokenDispatch), pts' router mechanisms beside its top-k.
func dispatcherOf(pts *cost.Points, s *cost.Shard) cost.Dispatch {
	return pts.TokenDispatcher.On(s, pts.RouterKernels)
}
