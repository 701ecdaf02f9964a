package planner

import (
	"sync"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/codebases"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// bf16 is the element size of activations, weights and their gradients
// in BF16 mixed precision (cost.BF16).
const bf16 = cost.BF16

// registered is the registered plug-ins at each extension point
// (planner/cost), resolved once from the registries (families.Registered,
// mechanisms.Registered, codebases.Registered) by each point's
// rule (cost.Resolve), and handed down on every shard a step is costed
// on (cost.Shard.Points): the coster asks a point's plug-ins there, not
// here. Nothing changes it; a test that registers a plug-in of its own
// resolves its own (newCosterOf).
var registered = cost.Resolve(families.Registered, mechanisms.Registered, codebases.Registered)

// dispatcherOf is the token dispatch of shard s, the registered
// cost.TokenDispatcher's (mechanisms.TokenDispatch), the registered
// router mechanisms beside its top-k.
func dispatcherOf(s *cost.Shard) cost.Dispatch {
	return s.Points.TokenDispatcher.On(s, s.Points.RouterKernels)
}

// decide records on shard s which registered plug-ins price its step
// (cost.Shard.Priced), once: the families' traits, the mechanisms and
// the code base whose declarations hold for s (cost.Points.Decide). The extension points ask their
// plug-ins by the record (cost.Pricing, cost.EachPricing), and a
// figure's provenance names it (Result.PricedBy). Where the record has
// a plug-in price the plan's low-precision recipe (cost.LowPrecision),
// the blocks' GEMMs take its speedups' inverses of their BF16 time
// (cost.Shard.FP8Fwd, FP8Bwd); none: BF16.
// The plug-ins are asked on a pooled copy of s, so that s, a coster's
// shard on its caller's stack, is not moved to the heap by being handed
// to them.
func decide(s *cost.Shard) {
	t := shardPool.Get().(*cost.Shard)
	*t = *s
	s.Priced = s.Points.Decide(t)
	*t = cost.Shard{}
	shardPool.Put(t)
	if lp := s.Points.LowPrecision.Of(s); lp != nil {
		bf16 := s.H.PeakFLOPS(graph.ClassMatMul, graph.BF16)
		fwd, bwd := lp.Speedups(&s.Plan, s.Pod, bf16)
		s.FP8Fwd, s.FP8Bwd = 1/fwd, 1/bwd
	}
}

var shardPool = sync.Pool{New: func() any { return new(cost.Shard) }}

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

// coster holds what every layer of one plan shares: the shard its layers
// are costed at (cost.Shard, what the plug-ins are given) and the layer
// costs it asks.
type coster struct {
	cost.Shard
	// layers are the layer costs it asks (layersOf: the plan's stack's,
	// a profile's where the pod has one).
	layers LayerCoster
}

// newCoster is the coster of plan pl's stages of tensor-parallel degree
// T (its hardware p's: p is the caller's, not copied), its plug-ins the
// registered ones (newCosterOf).
func newCoster(m transformer.Spec, pl plan.Plan, p *plan.Pod, T int, tokens float64) coster {
	return newCosterOf(registered, m, pl, p, T, tokens)
}

// newCosterOf is newCoster with the plug-ins of pts.
func newCosterOf(pts *cost.Points, m transformer.Spec, pl plan.Plan, p *plan.Pod, T int, tokens float64) coster {
	c := coster{Shard: cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: p, TPG: plan.Group{PerNode: T, Nodes: 1}, Tokens: tokens, Points: pts}}
	c.Plan.TP = T
	decide(&c.Shard)
	c.layers = layersOf(&c.Plan.Run, p)
	if c.Points.FineTune.Of(&c.Shard) != nil {
		c.layers = loraLayers{c.layers}
	}
	return c
}
