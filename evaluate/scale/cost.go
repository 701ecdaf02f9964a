package scale

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
)

// bf16 is the element size of activations, weights and their gradients
// in BF16 mixed precision.
const bf16 = 2

// kernel is one kernel of a layer.
type kernel struct {
	class        graph.Class
	flops        float64
	read, writes float64
}

func (k kernel) time(h *roofline.Hardware) float64 {
	op := graph.Op{Class: k.class, DType: graph.BF16, FLOPs: k.flops, BytesRead: int64(k.read), BytesWritten: int64(k.writes)}
	return h.KernelTime(&op)
}

// phase is what one layer (or the embedding, or the output layer) does in
// one direction for one micro-batch on one GPU: its kernels' time and
// its tensor-parallel communication's, exposed and in all, and the
// context-parallel exchange's exposed time; the kernels the host issues
// for it (launches: each costed kernel and collective one; calls: the
// kernels a library launches in a loop of its own, without Python or
// autograd between them, as Transformer Engine's grouped GEMMs do), the
// device-to-host synchronizations it waits on (syncs) and what follows
// the last of them from an empty queue (tail: syncTail), the CUDA graphs
// it replays in place of launching their kernels (replays: graphed), and
// the time the GPU waits on its host (hostExposed, in busy: Host.expose).
type phase struct {
	busy, tpAll, tpExposed, cpExposed, epExposed float64
	launches, syncs, hostExposed                 float64
	replays, calls                               float64
	tail                                         syncTail
}

// syncTail is the part of a phase the host issues after a
// device-to-host synchronization, which it waited on until the GPU had
// run everything queued before it: its launches and calls, their GPU
// time (busy), and stall, how long the GPU sat idle while the host
// issued them one by one from the empty queue beyond the one issue
// expose charges each synchronization (drain).
type syncTail struct{ launches, calls, busy, stall float64 }

func (a syncTail) plus(b syncTail) syncTail {
	return syncTail{a.launches + b.launches, a.calls + b.calls, a.busy + b.busy, a.stall + b.stall}
}

func (a phase) plus(b phase) phase {
	return phase{a.busy + b.busy, a.tpAll + b.tpAll, a.tpExposed + b.tpExposed, a.cpExposed + b.cpExposed, a.epExposed + b.epExposed,
		a.launches + b.launches, a.syncs + b.syncs, a.hostExposed + b.hostExposed, a.replays + b.replays, a.calls + b.calls,
		a.tail.plus(b.tail)}
}

func scalePhase(a phase, k float64) phase {
	return phase{a.busy * k, a.tpAll * k, a.tpExposed * k, a.cpExposed * k, a.epExposed * k,
		a.launches * k, a.syncs * k, a.hostExposed * k, a.replays * k, a.calls * k,
		syncTail{a.tail.launches * k, a.tail.calls * k, a.tail.busy * k, a.tail.stall * k}}
}

// graphed is phase a captured in one CUDA graph and replayed: its
// kernels (their GPU time unchanged) issued by one replay, not launch by
// launch (Megatron-Core's Transformer Engine graphs, one per captured
// scope of a layer and direction: cuda_graph_impl "transformer_engine").
// A phase that syncs with its host cannot be captured: the caller keeps
// such phases eager (resolveSoftware refuses the plans that would graph
// them).
func graphed(a phase) phase {
	if a.launches == 0 && a.calls == 0 {
		return a
	}
	a.launches, a.calls, a.replays, a.tail = 0, 0, 1, syncTail{}
	return a
}

// run is kernel k as a phase: its time, one launch.
func (c *coster) run(k kernel) phase { return phase{busy: k.time(c.h), launches: 1} }

// coster holds what every layer of one plan shares.
type coster struct {
	m      transformer.Spec
	pl     plan.Plan
	h      *roofline.Hardware
	pod    *plan.Pod // the caller's, as h is its Hardware
	tpG    plan.Group
	tokens float64 // tokens per micro-batch on one GPU (its 1/C with context parallelism)
	noComm bool    // cost the kernels alone, no collectives
	noHost bool    // and no host: the GPU's time alone (Host.expose)
	// fp8 and fp8b are what an FP8 GEMM of the blocks takes of the BF16
	// GEMM's time at its shape, forward and backward, where the blocks'
	// GEMMs run in FP8 (0: BF16): Kernels.FP8Speedups' inverses.
	fp8, fp8b float64
	// layers are the layer costs it asks (layersOf: the plan's stack's,
	// a profile's where the pod has one).
	layers LayerCoster
}

// newCoster is the coster of plan pl's stages of tensor-parallel degree
// T (its hardware p's: p is the caller's, not copied).
func newCoster(m transformer.Spec, pl plan.Plan, p *plan.Pod, T int, tokens float64) coster {
	c := coster{m: m, pl: pl, h: &p.Hardware, pod: p, tpG: plan.Group{PerNode: T, Nodes: 1}, tokens: tokens}
	c.pl.TP = T
	c.layers = layersOf(&c.pl.Run, p)
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
		c.fp8, c.fp8b = 1/fwd, 1/bwd
	}
	return c
}

func (c *coster) gemm(flops, read, write float64) kernel {
	return kernel{class: graph.ClassMatMul, flops: flops, read: read, writes: write}
}

// lgemm is a forward GEMM of a transformer block: in FP8 with fp8= (the
// BF16 GEMM's time at its shape over the recipe's forward speedup: its
// FLOPs scaled by fp8 at the BF16 rate; its inputs and weights read as
// FP8, one byte; its output BF16), else gemm's.
func (c *coster) lgemm(flops, read, write float64) kernel {
	if c.fp8 > 0 {
		in := read / 2
		if c.pl.FP8 == plan.FP4NV {
			in = read / 4 // half a byte an element
		}
		return kernel{class: graph.ClassMatMul, flops: flops * c.fp8, read: in, writes: write}
	}
	return c.gemm(flops, read, write)
}

// back is one of the backward GEMMs (the data or the weight gradient) of
// forward GEMM g (lgemm's): as many FLOPs and bytes, in FP8 at the
// recipe's backward speedup.
func (c *coster) back(g kernel) kernel {
	if c.fp8 > 0 {
		g.flops *= c.fp8b / c.fp8
	}
	return g
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
	if c.fp8 == 0 || e <= 0 {
		return 0
	}
	if plan.Rowwise(c.pl.FP8) {
		return rowwiseCast(e).time(c.h)
	}
	one := kernel{class: graph.ClassElementwise, flops: e, read: 2 * e, writes: e}
	if plan.BlockScaled(c.pl.FP8) {
		one = blockCast(c.pl.FP8, e)
	}
	if amaxFirst(c.pl.FP8) {
		return one.time(c.h) + kernel{class: graph.ClassReduction, flops: e, read: 2 * e}.time(c.h)
	}
	return one.time(c.h)
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
	if c.fp8 == 0 {
		return p
	}
	per := 1.0
	if amaxFirst(c.pl.FP8) {
		per = 2
	}
	for _, e := range es {
		p.busy += c.cast(e)
		if e > 0 {
			p.launches += per
		}
	}
	return p
}

// sp is the share of a sequence-split activation on this GPU: 1/T with
// sequence parallelism, else 1.
func (c *coster) sp() float64 {
	if c.pl.SequenceParallel {
		return 1 / float64(c.pl.TP)
	}
	return 1
}

// twice is a kernel's backward as the block costs it: twice its FLOPs
// and traffic.
func twice(k kernel) kernel { k.read *= 2; k.writes *= 2; k.flops *= 2; return k }
