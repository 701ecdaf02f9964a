package scale

import (
	"github.com/placer/placer/evaluate/scale/cost"
	"github.com/placer/placer/evaluate/scale/families"
	"github.com/placer/placer/evaluate/scale/mechanisms"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
)

// bf16 is the element size of activations, weights and their gradients
// in BF16 mixed precision (cost.BF16).
const bf16 = cost.BF16

// The registered plug-ins at each extension point where they change a
// layer (evaluate/scale/cost): the mechanism that prices a layer's
// attention with its context-parallel exchange (mechanisms.Ring), and
// the families' traits and mechanisms that add kernels, asked in the
// order registered (families first).
var (
	cpAttention      = cost.First[cost.CPAttention](mechanisms.Registered)
	fineTune         = cost.First[cost.FineTune](mechanisms.Registered)
	attentionKernels = cost.Each[cost.AttentionKernels](families.Registered)
	expertActivation = cost.Each[cost.ExpertActivation](families.Registered)
	expertOutput     = append(cost.Each[cost.ExpertOutput](families.Registered), cost.Each[cost.ExpertOutput](mechanisms.Registered)...)
	routerKernels    = cost.Each[cost.RouterKernels](mechanisms.Registered)
)

// dispatcherOf is the token dispatch of shard s (mechanisms.Dispatcher),
// the registered router mechanisms beside its top-k.
func dispatcherOf(s *cost.Shard) mechanisms.Dispatcher {
	return mechanisms.Dispatcher{Shard: s, Router: routerKernels}
}

// kernel, phase and syncTail are the vocabulary every cost of a step is
// written in, shared with the plug-ins (evaluate/scale/cost).
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
		fwd, bwd := p.Kernels.FP8Speedups(pl.FP8 == plan.FP8Blockwise, bf16)
		if plan.Rowwise(pl.FP8) {
			fwd, bwd = plan.RowwiseSpeedups(p.Kernels, pl.FP8, bf16)
		}
		if plan.BlockScaled(pl.FP8) {
			fwd, bwd = blockSpeedups(pl.FP8, p, bf16)
		}
		c.FP8Fwd, c.FP8Bwd = 1/fwd, 1/bwd
	}
	return c
}

// cast is the FP8 quantisation of a GEMM's input of e elements (BF16)
// as the recipe runs it, a memory-bound pass or two (0 in BF16): current
// scaling reads the tensor for its amax and again to cast it (Transformer
// Engine's Float8CurrentScalingQuantizer); delayed scaling casts with the
// amax history's scale in one pass; blockwise computes each block's
// scale in the casting pass (its FP32 scales, one per 128, left out).
// kernelbench's fp8cast lines (measurements/2026-11-26-h100) time eager
// PyTorch's current scaling (abs, amax, to FP32, scale, to FP8: five
// kernels, about 25 bytes an element) at 10.5-17 ps an element, about
// 2.3 TB/s on those bytes at the larger tensors: memory-bound, as
// costed here, but not Transformer Engine's fused kernels' bytes, so
// the 5 (current) and 3 (delayed) bytes an element stay assumptions.
// MXFP8 and NVFP4 cast in one pass to both copies (blockCast), NVFP4
// after an amax pass of its own (amaxFirst); torchao's rowwise recipes
// along the rows in one pass forward (rowwise.go; their backward's:
// bwdCasts).
func (c *coster) cast(e float64) float64 {
	if c.FP8Fwd == 0 || e <= 0 {
		return 0
	}
	if plan.Rowwise(c.Plan.FP8) {
		return rowwiseCast(e).Time(c.H)
	}
	one := kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 2 * e, Writes: e}
	if plan.BlockScaled(c.Plan.FP8) {
		one = blockCast(c.Plan.FP8, e)
	}
	if amaxFirst(c.Plan.FP8) {
		return one.Time(c.H) + kernel{Class: graph.ClassReduction, FLOPs: e, Read: 2 * e}.Time(c.H)
	}
	return one.Time(c.H)
}

// amaxFirst is whether recipe reads a tensor for its amax before the
// pass that casts it: current scaling (its per-tensor scale), and NVFP4
// (its per-tensor FP32 scale over the blocks' E4M3 ones: blockCast).
func amaxFirst(recipe string) bool { return recipe == plan.FP8Current || recipe == plan.FP4NV }

// casts is the FP8 quantisations of GEMM inputs of es elements each
// (cast's), as a phase: one kernel each, two with current scaling and
// NVFP4 (their amax first).
func (c *coster) casts(es ...float64) phase {
	var p phase
	if c.FP8Fwd == 0 {
		return p
	}
	per := 1.0
	if amaxFirst(c.Plan.FP8) {
		per = 2
	}
	for _, e := range es {
		p.Busy += c.cast(e)
		if e > 0 {
			p.Launches += per
		}
	}
	return p
}
