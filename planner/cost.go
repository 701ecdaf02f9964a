package planner

import (
	"sync"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// bf16 is the element size of activations, weights and their gradients
// in BF16 mixed precision (cost.BF16).
const bf16 = cost.BF16

// The registered plug-ins at each extension point where they change a
// layer (planner/cost), set from the registries by hookUp: the
// mechanisms that price a layer's attention with its context-parallel
// exchange (mechanisms.Ring) and fine-tuning's adapters
// (mechanisms.LoRA), the hybrid models' mixers (families.Mamba,
// families.GatedDeltaNet), the experts' grouped GEMM
// (mechanisms.TEGroupedGEMM), the FP8 or FP4 recipe, its GEMMs'
// speedups and their inputs' casts (mechanisms.FP8Casts), the token dispatch
// (mechanisms.TokenDispatch), and the families' traits and mechanisms that
// add kernels, asked in the order registered (families first).
var (
	cpAttention      cost.CPAttention
	fineTune         cost.FineTune
	attentionKernels []cost.AttentionKernels
	expertActivation []cost.ExpertActivation
	expertOutput     []cost.ExpertOutput
	routerKernels    []cost.RouterKernels
	outputHeads      []cost.OutputHeads
	ssmBlock         cost.SSMBlock
	linearMixer      cost.LinearMixer
	groupedGEMM      cost.GroupedGEMM
	lowPrecision     cost.LowPrecision
	tokenDispatcher  cost.TokenDispatcher
	expertLoads      []cost.ExpertLoad
	// mechanismBits is each registered mechanism's bit in a record
	// (cost.Record.Mechanisms), by name.
	mechanismBits map[string]cost.Set
	// codeBaseBits is each registered code base's bit (cost.Record's
	// CodeBase), by name: the one whose codeBase.Prices holds on a shard
	// is its stack's layerCoster's, asked once.
	codeBaseBits map[string]cost.Set
)

func init() { hookUp() }

// hookUp sets the extension points' plug-ins from the registries
// (families.Registered, mechanisms.Registered): at the start, and again
// where a test registers a plug-in of its own (addMechanism).
func hookUp() {
	cpAttention = cost.First[cost.CPAttention](mechanisms.Registered)
	fineTune = cost.First[cost.FineTune](mechanisms.Registered)
	ssmBlock = cost.First[cost.SSMBlock](families.Registered)
	linearMixer = cost.First[cost.LinearMixer](families.Registered)
	groupedGEMM = cost.First[cost.GroupedGEMM](mechanisms.Registered)
	lowPrecision = cost.First[cost.LowPrecision](mechanisms.Registered)
	tokenDispatcher = cost.First[cost.TokenDispatcher](mechanisms.Registered)
	expertLoads = cost.Each[cost.ExpertLoad](mechanisms.Registered)
	attentionKernels = append(cost.Each[cost.AttentionKernels](families.Registered), cost.Each[cost.AttentionKernels](mechanisms.Registered)...)
	expertActivation = append(cost.Each[cost.ExpertActivation](families.Registered), cost.Each[cost.ExpertActivation](mechanisms.Registered)...)
	expertOutput = append(cost.Each[cost.ExpertOutput](families.Registered), cost.Each[cost.ExpertOutput](mechanisms.Registered)...)
	routerKernels = append(cost.Each[cost.RouterKernels](families.Registered), cost.Each[cost.RouterKernels](mechanisms.Registered)...)
	outputHeads = append(cost.Each[cost.OutputHeads](families.Registered), cost.Each[cost.OutputHeads](mechanisms.Registered)...)
	codeBaseBits = map[string]cost.Set{}
	for _, p := range cost.Each[cost.Plugin](layerCosters) {
		codeBaseBits[p.Name()] = layerCosters.Bit(p)
	}
	mechanismBits = map[string]cost.Set{}
	for _, p := range cost.Each[cost.Plugin](mechanisms.Registered) {
		mechanismBits[p.Name()] = mechanisms.Registered.Bit(p)
	}
	hookUpSteps()
}

// dispatcherOf is the token dispatch of shard s, the registered
// cost.TokenDispatcher's (mechanisms.TokenDispatch), the registered
// router mechanisms beside its top-k.
func dispatcherOf(s *cost.Shard) cost.Dispatch {
	return tokenDispatcher.On(s, routerKernels)
}

// decide records on shard s which registered plug-ins price its step
// (cost.Shard.Priced), once: the families' traits, the mechanisms and
// the code bases whose Prices hold for s. The extension points ask
// their plug-ins by the record (pricing, pricingOf), and a figure's
// provenance names it (Result.PricedBy).
// The plug-ins are asked on a pooled copy of s, so that s, a coster's
// shard on its caller's stack, is not moved to the heap by being handed
// to them.
func decide(s *cost.Shard) {
	t := shardPool.Get().(*cost.Shard)
	*t = *s
	s.Priced = cost.Record{Families: families.Registered.Decide(t), Mechanisms: mechanisms.Registered.Decide(t), CodeBase: codeBaseBits[layerCoster(&s.Plan.Run).Name()]}
	*t = cost.Shard{}
	shardPool.Put(t)
}

var shardPool = sync.Pool{New: func() any { return new(cost.Shard) }}

// pricing is whether the framework recorded mechanism p as pricing
// shard s's step (decide).
func pricing(s *cost.Shard, p cost.Plugin) bool {
	return s.Priced.Mechanisms&mechanismBits[p.Name()] != 0
}

// pricingOf is the first of ps recorded as pricing shard s's step
// (decide), the zero T where none is: how an extension point asked of
// its first pricing plug-in picks it (cost.RulePricing).
func pricingOf[T cost.Plugin](ps []T, s *cost.Shard) T {
	for _, p := range ps {
		if pricing(s, p) {
			return p
		}
	}
	var zero T
	return zero
}

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
// T (its hardware p's: p is the caller's, not copied).
func newCoster(m transformer.Spec, pl plan.Plan, p *plan.Pod, T int, tokens float64) coster {
	c := coster{Shard: cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: p, TPG: plan.Group{PerNode: T, Nodes: 1}, Tokens: tokens}}
	c.Plan.TP = T
	c.layers = layersOf(&c.Plan.Run, p)
	if pl.LoRA() {
		c.layers = loraLayers{c.layers}
	}
	if pl.FP8 != "" && p.Kernels.FP8Peak > 0 {
		bf16 := p.Hardware.PeakFLOPS(graph.ClassMatMul, graph.BF16)
		fwd, bwd := lowPrecision.Speedups(&pl, p, bf16) // the registered cost.LowPrecision's
		c.FP8Fwd, c.FP8Bwd = 1/fwd, 1/bwd
	}
	decide(&c.Shard)
	return c
}
