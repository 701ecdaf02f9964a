package scale

import (
	"fmt"
	"math"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
)

// Result is a plan's predicted training step.
type Result struct {
	Plan Plan `json:"-"`
	// Step is the step's time in seconds; TFLOPs the model TFLOP/s per
	// GPU (Megatron's count: transformer.ModelFLOPs over the step and
	// the GPUs) and MFU their fraction of the GPU's dense BF16 peak.
	Step   float64 `json:"step_s"`
	TFLOPs float64 `json:"tflops_per_gpu"`
	MFU    float64 `json:"mfu"`
	// Memory is the peak bytes of the most loaded GPU (weights,
	// gradients, optimizer state, activations in flight); Fits whether
	// it is within the GPU's memory.
	Memory int64 `json:"memory_bytes"`
	Fits   bool  `json:"fits"`
	// Where the step goes, seconds: the pipeline's busy time on its most
	// loaded device (Compute, tensor-parallel communication included),
	// the bubble (fill and drain, stage imbalance, their point-to-point
	// transfers), exposed data-parallel communication, the tied
	// embedding's gradient all-reduce, and the optimizer step.
	Compute   float64 `json:"compute_s"`
	Bubble    float64 `json:"bubble_s"`
	DPExposed float64 `json:"dp_exposed_s"`
	Embedding float64 `json:"embedding_allreduce_s"`
	Optimizer float64 `json:"optimizer_s"`
	// TPExposed is the tensor-parallel communication not hidden behind
	// GEMMs, per step on the most loaded device (part of Compute).
	TPExposed float64 `json:"tp_exposed_s"`
	// CPExposed is the context-parallel key/value exchange not hidden
	// behind the attention blocks, per step on the most loaded device
	// (part of Compute; 0 without context parallelism).
	CPExposed float64 `json:"cp_exposed_s,omitempty"`
	// EPExposed is the experts' communication (the token all-to-alls
	// and the expert-tensor-parallel collectives, not overlapped), per
	// step on the most loaded device (part of Compute; 0 without
	// experts).
	EPExposed float64 `json:"ep_exposed_s,omitempty"`
	// MemoryByKind splits Memory: weights, gradients, optimizer state and
	// activations, bytes.
	Weights     int64 `json:"weights_bytes"`
	Grads       int64 `json:"grads_bytes"`
	OptState    int64 `json:"optimizer_state_bytes"`
	Activations int64 `json:"activations_bytes"`
	// LayerForward and LayerBackward are one transformer block's kernels
	// on one GPU for one micro-batch (its tensor-parallel shard, its
	// recomputation included, no communication): what one GPU measures
	// running the block alone (tools/layerbench).
	LayerForward  float64 `json:"layer_forward_s"`
	LayerBackward float64 `json:"layer_backward_s"`
}

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
// context-parallel exchange's exposed time.
type phase struct{ busy, tpAll, tpExposed, cpExposed, epExposed float64 }

func (a phase) plus(b phase) phase {
	return phase{a.busy + b.busy, a.tpAll + b.tpAll, a.tpExposed + b.tpExposed, a.cpExposed + b.cpExposed, a.epExposed + b.epExposed}
}

// coster holds what every layer of one plan shares.
type coster struct {
	m      transformer.Spec
	pl     Plan
	h      *roofline.Hardware
	pod    *Pod // the caller's, as h is its Hardware
	tpG    Group
	tokens float64 // tokens per micro-batch on one GPU (its 1/C with context parallelism)
	noComm bool    // cost the kernels alone, no collectives
	// fp8 and fp8b are what an FP8 GEMM of the blocks takes of the BF16
	// GEMM's time at its shape, forward and backward, where the blocks'
	// GEMMs run in FP8 (0: BF16): Kernels.fp8Speedups' inverses.
	fp8, fp8b float64
}

// newCoster is the coster of plan pl's stages of tensor-parallel degree
// T (its hardware p's: p is the caller's, not copied).
func newCoster(m transformer.Spec, pl Plan, p *Pod, T int, tokens float64) coster {
	c := coster{m: m, pl: pl, h: &p.Hardware, pod: p, tpG: Group{PerNode: T, Nodes: 1}, tokens: tokens}
	c.pl.T = T
	if pl.FP8 != "" && p.Kernels.FP8Peak > 0 {
		fwd, bwd := p.Kernels.fp8Speedups(pl.FP8, p.Hardware.PeakFLOPS(graph.ClassMatMul, graph.BF16))
		c.fp8, c.fp8b = 1/fwd, 1/bwd
	}
	return c
}

// gemmComm is a GEMM with a tensor-parallel collective beside it (an
// all-gather or a reduce-scatter with sequence parallelism, an all-reduce
// without). With tpoverlap=on the collective is overlapped with the GEMM
// in T chunks (Megatron-Core's --tp-comm-overlap, which needs sequence
// parallelism): the longer of the two plus a T-th of the shorter.
// Otherwise the two run one after the other.
func (c *coster) gemmComm(g kernel, k roofline.Collective, bytes float64) phase {
	gt := g.time(c.h)
	if c.pl.T == 1 || c.noComm {
		return phase{busy: gt}
	}
	ct, _ := c.pod.Collective(k, c.tpG, bytes)
	if c.pl.TPOverlap {
		og := c.overlapped(gt)
		busy := max(og, ct) + min(og, ct)/float64(c.pl.T)
		return phase{busy: busy, tpAll: ct, tpExposed: busy - gt}
	}
	return phase{busy: gt + ct, tpAll: ct, tpExposed: ct}
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
		return kernel{class: graph.ClassMatMul, flops: flops * c.fp8, read: read / 2, writes: write}
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
func (c *coster) cast(e float64) float64 {
	if c.fp8 == 0 || e <= 0 {
		return 0
	}
	one := kernel{class: graph.ClassElementwise, flops: e, read: 2 * e, writes: e}.time(c.h)
	if c.pl.FP8 == FP8Current {
		return one + kernel{class: graph.ClassReduction, flops: e, read: 2 * e}.time(c.h)
	}
	return one
}

// layer is one transformer block's forward and backward for one
// micro-batch on one GPU, its recomputation in the backward included: in
// a model with experts an MoE block (block).
func (c *coster) layer() (fwd, bwd phase) { return c.block(c.m.MoE()) }

// block is one transformer block's forward and backward for one
// micro-batch on one GPU, its recomputation in the backward included:
// the attention (attnBlock), then with moe the experts (moeBlock), else
// the dense MLP of FFN (mlpBlock).
func (c *coster) block(moe bool) (fwd, bwd phase) {
	af, ab, fa := c.attnBlock()
	var mf, mb phase
	if moe {
		mf, mb = c.moeBlock()
	} else {
		mf, mb = c.mlpBlock()
	}
	fwd, bwd = af.plus(mf), mb.plus(ab)
	switch c.pl.Recompute {
	case SelectiveRecompute:
		bwd = bwd.plus(fa)
	case FullRecompute:
		bwd = bwd.plus(fwd)
	}
	return fwd, bwd
}

// tpKinds are the tensor-parallel collectives of a block's GEMMs:
// before a column-parallel GEMM (an all-gather with sequence
// parallelism, none without: -1), after a row-parallel one (a
// reduce-scatter, or an all-reduce), and their mirrors in the backward.
func (c *coster) tpKinds() (before, after, bwdAfter, bwdBefore roofline.Collective) {
	if !c.pl.SequenceParallel {
		return -1, roofline.AllReduce, -1, roofline.AllReduce
	}
	return roofline.AllGather, roofline.ReduceScatter, roofline.AllGather, roofline.ReduceScatter
}

// pair is GEMM g with tensor-parallel collective k of bytes (BF16)
// beside it (gemmComm), or g alone where k is none (-1).
//
// With tpoverlap=on every such GEMM runs on the GPU's SMs less
// Kernels.OverlapSMs. That is Transformer Engine's userbuffers for a
// reduce-scatter after a row-parallel GEMM ("pipeline") and the
// backward's bulk overlaps (num_sm 16 with an SM margin: module/base.py,
// initialize_ub). Its all-gathers before a column-parallel GEMM and
// before a row-parallel layer's data gradient ("ring_exchange") take one
// SM and no margin, but run the GEMM as TP GEMMs of M/TP rows, one a ring
// step; those chunks measured 1.02-1.92 times the whole GEMM's time at
// the nine Megatron rows' shard shapes on an H100, median 1.124
// (measurements/2026-11-26-h100-b/kb-ringsplit.jsonl), against the
// 132/116 = 1.138 the SM charge gives: placer keeps the one charge for
// both until GEMMs are costed by shape.
//
// With per-tensor FP8 (fp8=current or delayed) an all-gather carries
// the GEMM's input already cast to FP8, one byte an element: TE
// quantizes the local shard into the gathered buffer before the
// all-gather (fill_userbuffers_buffer_for_all_gather, for
// Float8Quantizer and Float8CurrentScalingQuantizer; its userbuffers
// default fp8_buf for every all-gather layer). Reduce-scatters carry
// the GEMM's BF16 output; blockwise FP8 gathers BF16 (not found
// otherwise).
func (c *coster) pair(g kernel, k roofline.Collective, bytes float64) phase {
	if k < 0 {
		return phase{busy: g.time(c.h)}
	}
	return c.gemmComm(g, k, c.tpBytes(k, bytes))
}

// tpBytes is what tensor-parallel collective k of bytes (BF16) carries:
// half of it for an all-gather under per-tensor FP8 (pair).
func (c *coster) tpBytes(k roofline.Collective, bytes float64) float64 {
	if k == roofline.AllGather && (c.pl.FP8 == FP8Current || c.pl.FP8 == FP8Delayed) {
		return bytes / 2
	}
	return bytes
}

// sp is the share of a sequence-split activation on this GPU: 1/T with
// sequence parallelism, else 1.
func (c *coster) sp() float64 {
	if c.pl.SequenceParallel {
		return 1 / float64(c.pl.T)
	}
	return 1
}

// twice is a kernel's backward as the block costs it: twice its FLOPs
// and traffic.
func twice(k kernel) kernel { k.read *= 2; k.writes *= 2; k.flops *= 2; return k }

// attnBlock is one block's attention for one micro-batch on one GPU,
// forward and backward (no recomputation), and the core attention's
// forward (what selective recomputation runs again): the norm, the QKV
// GEMM (or latent attention's projections: mlaBlock), flash attention,
// the output projection and the residual, the tensor-parallel
// collectives beside them, and the FP8 casts of the GEMMs' inputs.
func (c *coster) attnBlock() (fwd, bwd, fa phase) {
	if c.m.MLA() {
		return c.mlaBlock()
	}
	m, T := c.m, float64(c.pl.T)
	n, h := c.tokens, float64(m.Hidden)
	d, heads, kv := float64(m.HeadDim()), float64(m.Heads), float64(m.KVHeads)
	sp := c.sp()
	act := n * h * bf16 // one full activation
	qkv := (heads + 2*kv) * d / T
	qd := h // the attention's width: heads x head_dim
	if m.Head > 0 {
		qd = heads * d
	}
	norm := kernel{class: graph.ClassReduction, flops: 8 * n * h * sp, read: act * sp, writes: act * sp}
	resid := kernel{class: graph.ClassElementwise, flops: 3 * n * h * sp, read: 2 * act * sp, writes: 1.5 * act * sp}
	// Flash attention: the causal half of the scores, Q K^T and P V,
	// for this GPU's queries against the whole sequence's keys (with
	// context parallelism its n = 1/C of the tokens, two chunks placed
	// so that its share of the causal half is 1/C: ringAttention); with
	// a sliding window in some layers, the keys a query meets on average
	// over the layers (CausalKeys: the layers' costs are one layer's
	// times their number, so the mean is exact in the sum; a kernel's
	// time is linear in its FLOPs).
	attnFlops := 2 * 2 * n * m.CausalKeys() * (heads / T) * d
	attn := kernel{class: graph.ClassMatMul, flops: attnFlops, read: n * qkv * bf16, writes: n * heads / T * d * bf16}
	attnB := kernel{class: graph.ClassMatMul, flops: 2.5 * attnFlops, read: n * (qkv + 2*heads/T*d) * bf16, writes: n * qkv * bf16}
	gQKV := c.lgemm(2*n*h*qkv, act+h*qkv*bf16, n*qkv*bf16)
	gProj := c.lgemm(2*n*qd/T*h, n*qd/T*bf16+qd*h/T*bf16, act)
	bQKV, bProj := c.back(gQKV), c.back(gProj)
	before, after, bwdAfter, bwdBefore := c.tpKinds()
	t := func(k kernel) phase { return phase{busy: k.time(c.h)} }
	kvChunk := n * 2 * kv / T * d * bf16 // this GPU's K and V (context parallelism's message)
	var fb phase
	if c.pod.Kernels.UnfusedAttention && c.pl.C <= 1 {
		uf, ub := c.unfusedAttention()
		fa, fb = phase{busy: uf}, phase{busy: ub}
	} else {
		e := n * heads / T * 2 * d // the queries' elements: Q and K of d, V of d
		fa, fb = c.ringAttention(fusedAttn{attn, e, int(d)}, false, kvChunk), c.ringAttention(fusedAttn{attnB, e, int(d)}, true, kvChunk)
	}
	// Backward: each GEMM's input gradient and weight gradient (each the
	// forward's FLOPs), twice the elementwise traffic, flash attention's
	// backward (2.5x its forward). The collectives mirror the forward's:
	// an all-gather's backward is a reduce-scatter and the reverse; with
	// sequence parallelism the column-parallel GEMMs' inputs are gathered
	// again for their weight gradients.
	fwd = t(norm).plus(c.pair(gQKV, before, act)).plus(fa).plus(c.pair(gProj, after, act)).plus(t(resid))
	bwd = t(twice(resid)).plus(c.pair(bProj, bwdAfter, act)).plus(t(bProj)).plus(fb).
		plus(c.pair(bQKV, bwdBefore, act)).plus(c.pair(bQKV, before, act)).plus(t(twice(norm)))
	if c.fp8 > 0 {
		casts := phase{busy: c.cast(n*h*sp) + c.cast(n*qd/T)}
		fwd, bwd = fwd.plus(casts), bwd.plus(casts)
	}
	return fwd, bwd, fa
}

// mlaBlock is attnBlock's multi-head latent attention (DeepSeek-V2/V3,
// arXiv 2412.19437 section 2.1.1), as Megatron-Core's MLASelfAttention
// runs it (megatron/core/transformer/multi_latent_attention.py): the
// down projections of the normed hidden state to the query's latent of
// QLoRA and the keys' and values' latent of KVLoRA with the shared
// rotary key of RopeDim (linear_q_down_proj, linear_kv_down_proj:
// duplicated over the tensor group, on this GPU's sequence shard with
// sequence parallelism), an RMS norm of each latent, the latents
// all-gathered over the tensor group with sequence parallelism, the up
// projections to every head's query of Head + RopeDim and key and value
// of Head (linear_q_up_proj, linear_kv_up_proj: column-parallel, the
// heads split over the group), the rotary embedding of the query's and
// the key's rotary parts and their concatenation into each head's query
// and key (the rotary key broadcast to every head), flash attention at
// query/key width Head + RopeDim and value width Head (its FLOPs at the
// node's attention rate, measured at head width 128), and the output
// projection of heads x Head (row-parallel). The GEMMs' FLOPs are
// transformer.Spec's (AttentionFLOPs: ModelFLOPs counts the same
// projections). Without a query latent (QLoRA 0) the query is one
// projection of the hidden state (linear_q_proj). Left out: the down
// projections' weight gradients all-reduced over the tensor group with
// sequence parallelism (finalize_model_grads' sequence-parallel
// parameters, once a step, Hidden x (QLoRA + KVLoRA + RopeDim) x 4
// bytes a layer).
func (c *coster) mlaBlock() (fwd, bwd, fa phase) {
	m, T := c.m, float64(c.pl.T)
	n, h := c.tokens, float64(m.Hidden)
	heads := float64(m.Heads) / T
	d, r := float64(m.HeadDim()), float64(m.RopeDim)
	ql, kl := float64(m.QLoRA), float64(m.KVLoRA)
	sp := c.sp()
	nd := n * sp // the down projections' tokens on this GPU
	act := n * h * bf16
	red := func(e float64) kernel {
		return kernel{class: graph.ClassReduction, flops: 8 * e, read: e * bf16, writes: e * bf16}
	}
	norm := red(nd * h)
	resid := kernel{class: graph.ClassElementwise, flops: 3 * nd * h, read: 2 * act * sp, writes: 1.5 * act * sp}
	before, after, bwdAfter, bwdBefore := c.tpKinds()
	t := func(k kernel) phase { return phase{busy: k.time(c.h)} }
	// The query: a latent (down, norm, up) or one projection.
	var qf, qb phase
	qw := heads * (d + r) // this GPU's query width
	if ql > 0 {
		gD := c.lgemm(2*nd*h*ql, nd*h*bf16+h*ql*bf16, nd*ql*bf16)
		gU := c.lgemm(2*n*ql*qw, n*ql*bf16+ql*qw*bf16, n*qw*bf16)
		bD, bU := c.back(gD), c.back(gU)
		lat := n * ql * bf16
		qf = t(gD).plus(t(red(nd * ql))).plus(c.pair(gU, before, lat))
		qb = c.pair(bU, bwdBefore, lat).plus(c.pair(bU, before, lat)).plus(t(twice(red(nd * ql)))).plus(t(bD)).plus(t(bD))
		if c.fp8 > 0 {
			qf = qf.plus(phase{busy: c.cast(nd * ql)})
			qb = qb.plus(phase{busy: c.cast(nd * ql)})
		}
	} else {
		g := c.lgemm(2*n*h*qw, act+h*qw*bf16, n*qw*bf16)
		b := c.back(g)
		qf = c.pair(g, before, act)
		qb = c.pair(b, bwdBefore, act).plus(c.pair(b, before, act))
	}
	// The keys and values: the latent with the rotary key, its norm, the
	// up projection to every head's key (without position) and value.
	kvw := heads * 2 * d
	gKD := c.lgemm(2*nd*h*(kl+r), nd*h*bf16+h*(kl+r)*bf16, nd*(kl+r)*bf16)
	gKU := c.lgemm(2*n*kl*kvw, n*kl*bf16+kl*kvw*bf16, n*kvw*bf16)
	bKD, bKU := c.back(gKD), c.back(gKU)
	lat := n * (kl + r) * bf16
	kvf := t(gKD).plus(t(red(nd * kl))).plus(c.pair(gKU, before, lat))
	kvb := c.pair(bKU, bwdBefore, lat).plus(c.pair(bKU, before, lat)).plus(t(twice(red(nd * kl)))).plus(t(bKD)).plus(t(bKD))
	// Rotary embedding of the query's and the key's rotary parts, and
	// the heads' queries and keys assembled (read the parts, write Q and
	// K of Head + RopeDim a head).
	qk := n * heads * (d + r)
	rope := kernel{class: graph.ClassElementwise, flops: 3 * n * (heads + 1) * r,
		read: (qk + n*heads*d + n*r) * bf16, writes: 2 * qk * bf16}
	// Flash attention over the causal half (the window's keys where the
	// model has one: CausalKeys): Q K^T at Head + RopeDim, P V at Head.
	attnFlops := 2 * n * m.CausalKeys() * heads * (2*d + r)
	qkv := 2*qk + n*heads*d // Q, K, V elements
	o := n * heads * d      // the output's
	attn := kernel{class: graph.ClassMatMul, flops: attnFlops, read: qkv * bf16, writes: o * bf16}
	attnB := kernel{class: graph.ClassMatMul, flops: 2.5 * attnFlops, read: (qkv + 2*o) * bf16, writes: qkv * bf16}
	kvChunk := n * heads * (2*d + r) * bf16 // this GPU's K and V (context parallelism's message)
	e := n * heads * (2*d + r)              // the queries' elements: Q and K of Head + RopeDim, V of Head
	fa = c.ringAttention(fusedAttn{attn, e, int(d + r)}, false, kvChunk)
	fb := c.ringAttention(fusedAttn{attnB, e, int(d + r)}, true, kvChunk)
	gProj := c.lgemm(2*n*heads*d*h, o*bf16+heads*d*h*bf16, act)
	bProj := c.back(gProj)
	fwd = t(norm).plus(qf).plus(kvf).plus(t(rope)).plus(fa).plus(c.pair(gProj, after, act)).plus(t(resid))
	bwd = t(twice(resid)).plus(c.pair(bProj, bwdAfter, act)).plus(t(bProj)).plus(fb).plus(t(twice(rope))).
		plus(kvb).plus(qb).plus(t(twice(norm)))
	if c.fp8 > 0 {
		casts := phase{busy: c.cast(nd*h) + c.cast(nd*kl) + c.cast(o)}
		fwd, bwd = fwd.plus(casts), bwd.plus(casts)
	}
	return fwd, bwd, fa
}

// mlpBlock is one block's dense MLP of FFN for one micro-batch on one
// GPU, forward and backward: the norm, FC1 (column-parallel), the
// activation (GeLU, or SwiGLU's), FC2 (row-parallel), the residual, the
// tensor-parallel collectives beside the GEMMs and the FP8 casts.
func (c *coster) mlpBlock() (fwd, bwd phase) {
	m, T := c.m, float64(c.pl.T)
	n, h, f := c.tokens, float64(m.Hidden), float64(m.FFN)
	sp := c.sp()
	act := n * h * bf16
	fcols := f / T
	if m.SwiGLU() {
		fcols = 2 * f / T
	}
	norm := kernel{class: graph.ClassReduction, flops: 8 * n * h * sp, read: act * sp, writes: act * sp}
	resid := kernel{class: graph.ClassElementwise, flops: 3 * n * h * sp, read: 2 * act * sp, writes: 1.5 * act * sp}
	var actFn kernel
	if m.SwiGLU() {
		actFn = kernel{class: graph.ClassElementwise, flops: 6 * n * f / T, read: 2 * n * f / T * bf16, writes: n * f / T * bf16}
	} else {
		actFn = kernel{class: graph.ClassElementwise, flops: 10 * n * f / T, read: n * f / T * bf16, writes: n * f / T * bf16}
	}
	gFC1 := c.lgemm(2*n*h*fcols, act+h*fcols*bf16, n*fcols*bf16)
	gFC2 := c.lgemm(2*n*f/T*h, n*f/T*bf16+f/T*h*bf16, act)
	bFC1, bFC2 := c.back(gFC1), c.back(gFC2)
	before, after, bwdAfter, bwdBefore := c.tpKinds()
	t := func(k kernel) phase { return phase{busy: k.time(c.h)} }
	fwd = t(norm).plus(c.pair(gFC1, before, act)).plus(t(actFn)).plus(c.pair(gFC2, after, act)).plus(t(resid))
	bwd = t(twice(resid)).plus(c.pair(bFC2, bwdAfter, act)).plus(t(bFC2)).plus(t(twice(actFn))).
		plus(c.pair(bFC1, bwdBefore, act)).plus(c.pair(bFC1, before, act)).plus(t(twice(norm)))
	if c.fp8 > 0 {
		casts := phase{busy: c.cast(n*h*sp) + c.cast(n*f/T)}
		fwd, bwd = fwd.plus(casts), bwd.plus(casts)
	}
	return fwd, bwd
}

// moeBlock is one MoE block's MLP part for one micro-batch on one GPU:
// the norm, the experts (moe) and the residual, forward and backward.
func (c *coster) moeBlock() (fwd, bwd phase) {
	m := c.m
	n, h := c.tokens, float64(m.Hidden)
	sp := c.sp()
	act := n * h * bf16
	norm := kernel{class: graph.ClassReduction, flops: 8 * n * h * sp, read: act * sp, writes: act * sp}
	resid := kernel{class: graph.ClassElementwise, flops: 3 * n * h * sp, read: 2 * act * sp, writes: 1.5 * act * sp}
	t := func(k kernel) phase { return phase{busy: k.time(c.h)} }
	mf, mb := c.moe()
	fwd = t(norm).plus(mf).plus(t(resid))
	bwd = t(twice(resid)).plus(mb).plus(t(twice(norm)))
	return fwd, bwd
}

// moe is one MoE block's experts for one micro-batch on one GPU, forward
// and backward, as Megatron-Core's all-to-all token dispatcher runs them
// (moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher; dropless, every
// token reaching its TopK experts): the router (a BF16 GEMM to the
// experts' scores, a softmax and top-k over them), the tokens permuted
// into expert order, dispatched over the expert-parallel group by an
// all-to-all (each GPU sends its n/T tokens x TopK copies, an equal share
// to each rank when balanced), all-gathered over the expert-tensor group,
// the local experts' grouped GEMMs (FC1, the activation, FC2) over the
// tokens the rank receives (Imbalance x the mean: the most loaded rank's),
// reduce-scattered back, combined by the reverse all-to-all and unpermuted
// (the TopK outputs weighted and summed), and the shared experts over the
// GPU's tokens. The backward mirrors it: the GEMMs twice, the same
// collectives, twice the elementwise traffic. The experts' communication
// is not overlapped (Megatron-Core overlaps it only with
// --overlap-moe-expert-parallel-comm, off by default).
// moeGlue is what an MoE block runs around its experts for nl tokens on
// one GPU (moe): the router's GEMM to the experts' scores (FP32), the
// scores' softmax and top-k, the permutation of each token's TopK copies
// into expert order and the unpermutation (the copies weighted and
// summed back), each a memory-bound pass at the rate of a fused kernel
// (Megatron-Core's moe_permute_fusion, Transformer Engine's), backward
// twice its traffic.
func moeGlue(m transformer.Spec, nl float64) (router, scores, permute, unpermute kernel) {
	h, E, k := float64(m.Hidden), float64(m.Experts), float64(m.TopK)
	routed := nl * k
	ew := func(flops, read, write float64) kernel {
		return kernel{class: graph.ClassElementwise, flops: flops, read: read, writes: write}
	}
	router = kernel{class: graph.ClassMatMul, flops: 2 * nl * h * E, read: nl*h*bf16 + h*E*bf16, writes: nl * E * 4}
	scores = ew(5*nl*E, nl*E*4, nl*E*4+routed*8)
	permute = kernel{class: graph.ClassDataMovement, read: nl * h * bf16, writes: routed * h * bf16}
	unpermute = ew(2*routed*h, routed*h*bf16+routed*4, nl*h*bf16)
	return router, scores, permute, unpermute
}

func (c *coster) moe() (fwd, bwd phase) {
	m, pl := c.m, c.pl
	h, E, k := float64(m.Hidden), float64(m.Experts), float64(m.TopK)
	nl := c.tokens / float64(pl.T)  // this GPU's sequence shard
	routed := nl * k                // the token copies it dispatches
	recv := routed * pl.imbalance() // those the most loaded rank receives
	ETP := float64(pl.ETP)
	rows := recv * ETP // its expert GEMMs' rows, gathered over the expert-tensor group
	local := E / float64(pl.EP)
	fe := float64(m.ExpertFFN)
	cols := fe / ETP
	up := cols
	if m.SwiGLU() {
		up = 2 * cols
	}
	t := func(k kernel) phase { return phase{busy: k.time(c.h)} }
	ew := func(flops, read, write float64) kernel {
		return kernel{class: graph.ClassElementwise, flops: flops, read: read, writes: write}
	}
	router, scores, permute, unpermute := moeGlue(m, nl)
	// The local experts' GEMMs grouped: each at the grouped GEMM's
	// efficiency against a dense GEMM of its FLOPs (Kernels.groupedEff,
	// its forward shape's for the backward too).
	grouped := func(g kernel, n float64) kernel {
		g.flops /= c.pod.Kernels.groupedEff(local, rows/local, n)
		return g
	}
	fc1 := grouped(c.lgemm(2*rows*h*up, rows*h*bf16+local*h*up*bf16, rows*up*bf16), up)
	actFn := ew(10*rows*cols, rows*cols*bf16, rows*cols*bf16)
	if m.SwiGLU() {
		actFn = ew(6*rows*cols, 2*rows*cols*bf16, rows*cols*bf16)
	}
	fc2 := grouped(c.lgemm(2*rows*cols*h, rows*cols*bf16+local*cols*h*bf16, rows*h*bf16), h)
	fc1b, fc2b := c.back(fc1), c.back(fc2)
	experts := t(fc1).plus(t(actFn)).plus(t(fc2)).plus(phase{busy: c.cast(rows*h) + c.cast(rows*cols)})
	expertsB := t(fc1b).plus(t(fc1b)).plus(t(actFn)).plus(t(actFn)).plus(t(fc2b)).plus(t(fc2b)).
		plus(phase{busy: c.cast(rows*h) + c.cast(rows*cols)})
	if sh := float64(m.SharedExperts) * fe; sh > 0 {
		sup := sh
		if m.SwiGLU() {
			sup = 2 * sh
		}
		s1 := c.lgemm(2*nl*h*sup, nl*h*bf16+h*sup*bf16, nl*sup*bf16)
		sa := ew(6*nl*sh, 2*nl*sh*bf16, nl*sh*bf16)
		s2 := c.lgemm(2*nl*sh*h, nl*sh*bf16+sh*h*bf16, nl*h*bf16)
		experts = experts.plus(t(s1)).plus(t(sa)).plus(t(s2))
		s1b, s2b := c.back(s1), c.back(s2)
		expertsB = expertsB.plus(t(s1b)).plus(t(s1b)).plus(t(sa)).plus(t(sa)).plus(t(s2b)).plus(t(s2b))
	}
	var comm phase
	if !c.noComm {
		etpG, epG, _ := pl.expertGroups(*c.pod)
		a2a := c.pod.AllToAll(epG, recv*h*bf16)
		ag, _ := c.pod.Collective(roofline.AllGather, etpG, rows*h*bf16)
		rs, _ := c.pod.Collective(roofline.ReduceScatter, etpG, rows*h*bf16)
		all := 2*a2a + ag + rs // dispatch, gather, scatter, combine
		comm = phase{busy: all, epExposed: all}
	}
	twice := func(k kernel) kernel { k.read *= 2; k.writes *= 2; k.flops *= 2; return k }
	fwd = t(router).plus(t(scores)).plus(t(permute)).plus(experts).plus(t(unpermute)).plus(comm)
	bwd = t(twice(unpermute)).plus(expertsB).plus(t(twice(permute))).plus(t(twice(scores))).
		plus(t(router)).plus(t(router)).plus(comm)
	return fwd, bwd
}

// embedding is the first stage's token (and position) embedding: a
// vocabulary-parallel lookup whose partial rows are summed over the
// tensor group (a reduce-scatter with sequence parallelism, an
// all-reduce without), not overlapped.
func (c *coster) embedding() (fwd, bwd phase) {
	act := c.tokens * float64(c.m.Hidden) * bf16
	look := kernel{class: graph.ClassEmbedding, read: act, writes: act}
	fwd = phase{busy: look.time(c.h)}
	if c.pl.T > 1 {
		k := roofline.AllReduce
		if c.pl.SequenceParallel {
			k = roofline.ReduceScatter
		}
		ct, _ := c.pod.Collective(k, c.tpG, act)
		fwd = fwd.plus(phase{busy: ct, tpAll: ct, tpExposed: ct})
		if c.pl.SequenceParallel {
			ct, _ = c.pod.Collective(roofline.AllGather, c.tpG, act)
			bwd = phase{busy: ct, tpAll: ct, tpExposed: ct}
		}
	}
	// The gradient: PyTorch's embedding backward writes a dense BF16
	// gradient of the whole table shard (zeroed, then the tokens' rows
	// added), and Megatron-Core's DDP adds it into the FP32 main
	// gradient (a hook's main_grad.add_: the fused accumulation into
	// main_grad is the linear layers' only; a BF16 one with grads=bf16). Measured on an H100
	// (measurements/2026-11-26-h100/kernelbench.jsonl, 1.7B.embedding):
	// the backward of a 131,072 x 2,048 table takes 0.93 ms, where
	// scattering only the tokens' rows would take 0.02.
	table := float64(c.m.Vocab) / float64(c.pl.T) * float64(c.m.Hidden)
	bwd = bwd.plus(phase{busy: kernel{class: graph.ClassEmbedding, read: act, writes: table * bf16}.time(c.h) +
		kernel{class: graph.ClassElementwise, flops: table, read: table * (bf16 + c.pl.gradBytes()), writes: table * c.pl.gradBytes()}.time(c.h)})
	return fwd, bwd
}

// output is the last stage's final norm, vocabulary-parallel output layer
// and cross-entropy, the logits never gathered (a max and a sum
// all-reduced over the tensor group). The cross-entropy is Megatron-Core's
// unfused one (tensor_parallel/cross_entropy.py; --cross-entropy-loss-fusion
// is off by default), one kernel per pass over the FP32 logits: forward
// the cast to FP32, the max, the subtraction, the exponential, the sum and
// the division (22 bytes read and 16 written per logit); backward the
// multiplication by the loss's gradient, in place, and the cast back to
// BF16 (8 read, 6 written).
func (c *coster) output() (fwd, bwd phase) {
	T := float64(c.pl.T)
	n, h, V := c.tokens, float64(c.m.Hidden), float64(c.m.Vocab)
	act := n * h * bf16
	sp := 1.0
	if c.pl.SequenceParallel {
		sp = 1 / T
	}
	norm := kernel{class: graph.ClassReduction, flops: 8 * n * h * sp, read: act * sp, writes: act * sp}
	logits := c.gemm(2*n*h*V/T, act+h*V/T*bf16, n*V/T*bf16)
	logit := n * V / T // logits on this GPU
	pass := func(class graph.Class, read, write float64) float64 {
		return kernel{class: class, flops: logit, read: logit * read, writes: logit * write}.time(c.h)
	}
	ce := pass(graph.ClassElementwise, bf16, 4) + pass(graph.ClassReduction, 4, 0) + pass(graph.ClassElementwise, 4, 4) +
		pass(graph.ClassElementwise, 4, 4) + pass(graph.ClassReduction, 4, 0) + pass(graph.ClassElementwise, 4, 4)
	ceB := pass(graph.ClassElementwise, 4, 4) + pass(graph.ClassElementwise, 4, bf16)
	k := roofline.Collective(-1)
	if c.pl.SequenceParallel {
		k = roofline.AllGather
	}
	pair := func(g kernel, k roofline.Collective) phase {
		if k < 0 {
			return phase{busy: g.time(c.h)}
		}
		return c.gemmComm(g, k, act)
	}
	small, _ := c.pod.Collective(roofline.AllReduce, c.tpG, 3*n*4) // max, sum and target logit
	fwd = phase{busy: norm.time(c.h)}.plus(pair(logits, k)).plus(phase{busy: ce + small, tpAll: small, tpExposed: small})
	bk := roofline.Collective(-1)
	if c.pl.SequenceParallel {
		bk = roofline.ReduceScatter
	} else if c.pl.T > 1 {
		bk = roofline.AllReduce
	}
	bwd = phase{busy: ceB}.plus(pair(logits, bk)).plus(phase{busy: logits.time(c.h)}).plus(phase{busy: 2 * norm.time(c.h)})
	return fwd, bwd
}

// mtp is the multi-token-prediction modules on the last stage for one
// micro-batch on one GPU, forward and backward, as Megatron-Core's
// MultiTokenPredictionLayer runs DeepSeek-V3's (arXiv 2412.19437 section
// 2.2; Megatron-LM's multi_token_prediction guide): each the shared
// embedding's lookup of the next tokens (ef, eb: the last stage's copy
// of the embedding with pipeline stages), an RMS norm of it and of the
// main model's last hidden state, the two concatenated and projected
// from 2 x Hidden to Hidden (eh_proj, column-parallel: its output
// gathered back over the tensor group), one block like the model's last
// (an MoE block in a model with experts: DeepSeek-V3's MTP module is a
// full block of the main model's kind), and the shared output layer
// with its own cross-entropy (of, ob). The block keeps its activations
// (not recomputed).
func (c *coster) mtp(ef, eb, of, ob phase) (fwd, bwd phase) {
	m := c.m
	n, h := c.tokens, float64(m.Hidden)
	T := float64(c.pl.T)
	sp := c.sp()
	act := n * h * bf16
	norm := kernel{class: graph.ClassReduction, flops: 8 * n * h * sp, read: act * sp, writes: act * sp}
	cat := kernel{class: graph.ClassDataMovement, read: 2 * act * sp, writes: 2 * act * sp}
	g := c.lgemm(2*n*2*h*h/T, 2*act+2*h*h/T*bf16, act/T)
	b := c.back(g)
	before, _, _, bwdBefore := c.tpKinds()
	var gather phase
	if c.pl.T > 1 && !c.noComm {
		ct, _ := c.pod.Collective(roofline.AllGather, c.tpG, act)
		gather = phase{busy: ct, tpAll: ct, tpExposed: ct}
	}
	keep := *c
	keep.pl.Recompute = NoRecompute
	bf, bb := keep.block(m.MoE())
	t := func(k kernel) phase { return phase{busy: k.time(c.h)} }
	fwd = ef.plus(t(norm)).plus(t(norm)).plus(t(cat)).plus(c.pair(g, before, 2*act)).plus(gather).plus(bf).plus(of)
	bwd = ob.plus(bb).plus(gather).plus(c.pair(b, bwdBefore, 2*act)).plus(c.pair(b, before, 2*act)).
		plus(t(twice(cat))).plus(t(twice(norm))).plus(t(twice(norm))).plus(eb)
	if c.fp8 > 0 {
		casts := phase{busy: c.cast(2 * n * h * sp)}
		fwd, bwd = fwd.plus(casts), bwd.plus(casts)
	}
	x := float64(m.MTP)
	return scalePhase(fwd, x), scalePhase(bwd, x)
}

// Evaluate predicts one training step of model m under strategy s on pod
// p. The errors are Resolve's.
func Evaluate(m transformer.Spec, s Strategy, p Pod) (Result, error) {
	pl, err := Resolve(m, s, p)
	if err != nil {
		return Result{}, err
	}
	return evaluate(m, pl, p), nil
}

// stageCost is one pipeline device's forward and backward per
// micro-batch (all its chunks), and its parameter count.
type stageCost struct {
	fwd, bwd phase
	params   float64
	// experts are the experts' share of params (0 without experts),
	// layers the transformer blocks' (FP8 copies are kept of them).
	experts, layers float64
	// dense and denseRec are the stage's dense layers before the experts
	// and how many of them recompute (denseOn's, computed once a stage).
	dense, denseRec int
}

// stageKit is what the stages of one tensor-parallel degree share: the
// coster of that degree (its tensor group, its kernels' shards) and one
// layer's, the embedding's and the output layer's forward and backward.
type stageKit struct {
	c coster
	*kitPhases
}

// kitPhases are a stageKit's phases: a layer's forward, its backward
// (recomputing as the plan says, and keeping its activations), the
// embedding's and the output layer's; in a model with experts and dense
// layers before them, a dense layer's (df, db, dbKeep); with
// multi-token prediction, its modules' (tf, tb: mtp). alone is one
// block's forward and backward kernels alone (the coster's layer
// without communication: Result's LayerForward and LayerBackward), set
// (hasAlone) the first time a plan's middle stage is of the kit's
// degree.
type kitPhases struct {
	lf, lb, lbKeep, ef, eb, of, ob, df, db, dbKeep, tf, tb phase
	alone                                                  [2]float64
	hasAlone                                               bool
}

// costKey is what a stageKit's phases depend on besides the model and
// the pod.
type costKey struct {
	T, C, MBS int
	sp, ov    bool
	rc        Recompute
	blockRec  bool
	EP, ETP   int
	imbalance uint64 // its bits (keys of plain words hash fastest)
	fp8       uint8  // fp8Code's
	gradBF16  bool   // the embedding's gradient accumulation
}

// fp8Code numbers the FP8 recipes for costKey (0: BF16).
func fp8Code(recipe string) uint8 {
	switch recipe {
	case FP8Current:
		return 1
	case FP8Delayed:
		return 2
	case FP8Blockwise:
		return 3
	}
	return 0
}

// phaseCache keeps the phases of a model on a pod across evaluations
// (Search's): a plan's layers cost the same for every pipeline depth,
// replica count and split that shares its degree, micro-batch size,
// sequence parallelism and recomputation.
type phaseCache map[costKey]*kitPhases

func evaluate(m transformer.Spec, pl Plan, p Pod) Result { return evaluateCached(m, pl, &p, nil) }

// evaluateCached is evaluate with the phases kept in cache (nil: none).
func evaluateCached(m transformer.Spec, pl Plan, p *Pod, cache phaseCache) Result {
	tokens := float64(pl.MBS) * float64(m.Seq) / float64(pl.C)
	// One coster per distinct tensor-parallel degree (one for a uniform
	// plan, at most three for end stages of their own).
	// A plan has at most three (the end stages' and the middle's); kept
	// on the stack, as the stages of a pipeline of up to 32 are.
	var kitBuf [3]stageKit
	kits := kitBuf[:0]
	kitOf := func(T int) *stageKit {
		for i := range kits {
			if kits[i].c.pl.T == T {
				return &kits[i]
			}
		}
		kits = append(kits, stageKit{c: newCoster(m, pl, p, T, tokens)})
		k := &kits[len(kits)-1]
		c := &k.c
		block := pl.Recompute == FullRecompute && pl.RecomputeLayers > 0
		key := costKey{T: T, C: pl.C, MBS: pl.MBS, sp: pl.SequenceParallel, ov: pl.TPOverlap, rc: pl.Recompute, blockRec: block,
			EP: pl.EP, ETP: pl.ETP, imbalance: math.Float64bits(pl.Imbalance), fp8: fp8Code(pl.FP8), gradBF16: pl.GradBF16}
		ph := cache[key]
		if ph == nil {
			ph = &kitPhases{}
			ph.lf, ph.lb = c.layer()
			ph.lbKeep = ph.lb // a layer's backward when it keeps its activations (block recomputation's other layers)
			if block {
				keep := *c
				keep.pl.Recompute = NoRecompute
				_, ph.lbKeep = keep.layer()
			}
			ph.ef, ph.eb = c.embedding()
			ph.of, ph.ob = c.output()
			if m.MoE() && m.DenseLayers > 0 {
				ph.df, ph.db = c.block(false)
				ph.dbKeep = ph.db
				if block {
					keep := *c
					keep.pl.Recompute = NoRecompute
					_, ph.dbKeep = keep.block(false)
				}
			}
			if m.MTP > 0 {
				ph.tf, ph.tb = c.mtp(ph.ef, ph.eb, ph.of, ph.ob)
			}
			if cache != nil {
				cache[key] = ph
			}
		}
		k.kitPhases = ph
		return k
	}
	for _, T := range pl.TPs {
		kitOf(T)
	}
	// A pipeline of up to 128 stages keeps its costs on the stack.
	var stageBuf [128]stageCost
	stages := stageBuf[:0]
	if pl.P > len(stageBuf) {
		stages = make([]stageCost, 0, pl.P)
	}
	stages = stages[:pl.P]
	lp := float64(m.LayerParams())
	for s := range stages {
		st := &stages[s]
		k := kitOf(pl.TPs[s])
		layers := float64(pl.Stages[s]) // on this pipeline device, over its V chunks
		// Its dense layers (before the experts) and its MoE ones, each
		// with its share of the recomputation.
		st.dense, st.denseRec = pl.denseOn(&m, s)
		dn := st.dense
		dense, drec := float64(dn), float64(st.denseRec)
		kk := pl.recomputed(s)
		mrec := min(max(kk-drec, 0), layers-dense)
		st.fwd = scalePhase(k.lf, layers-dense)
		st.bwd = scalePhase(k.lb, mrec).plus(scalePhase(k.lbKeep, layers-dense-mrec))
		if dn > 0 {
			st.fwd = st.fwd.plus(scalePhase(k.df, dense))
			st.bwd = st.bwd.plus(scalePhase(k.db, drec)).plus(scalePhase(k.dbKeep, dense-drec))
		}
		st.weigh(&m, &pl, s, lp)
		if s == 0 {
			st.fwd, st.bwd = st.fwd.plus(k.ef), st.bwd.plus(k.eb)
		}
		if s == pl.P-1 {
			st.fwd, st.bwd = st.fwd.plus(k.of), st.bwd.plus(k.ob)
			if m.MTP > 0 {
				st.fwd, st.bwd = st.fwd.plus(k.tf), st.bwd.plus(k.tb)
			}
		}
	}
	if pl.EPOverlap {
		for s := range stages {
			epOverlap(&stages[s], pl, p, s)
		}
	}
	// The schedule: M micro-batches through P devices of V chunks each
	// (1F1B, interleaved when V > 1): the most loaded device is busy M
	// times its per-micro-batch time; fill and drain add the others'
	// time divided by V (Narayanan et al., SC'21: bubble (P-1)/(V M)),
	// and one point-to-point transfer per boundary each way.
	var busiest, sum float64
	var busiestTP, busiestCP, busiestEP float64
	for _, st := range stages {
		t := st.fwd.busy + st.bwd.busy
		sum += t
		if t > busiest {
			busiest, busiestTP, busiestCP = t, st.fwd.tpExposed+st.bwd.tpExposed, st.fwd.cpExposed+st.bwd.cpExposed
			busiestEP = st.fwd.epExposed + st.bwd.epExposed
		}
	}
	M := float64(pl.M)
	r := Result{Plan: pl}
	r.Compute = M * busiest
	r.TPExposed = M * busiestTP
	r.CPExposed = M * busiestCP
	r.EPExposed = M * busiestEP
	if pl.P > 1 {
		// The activation leaves stage i scattered over its tensor group
		// (each rank sends its 1/T_i: Megatron's scatter-gather, or the
		// rank's sequence shard with sp) and reaches stage i+1's: between
		// groups of different degrees the smaller group's ranks each
		// carry 1/min(T_i, T_i+1) of it, the larger's less, so the
		// transfer is that share's. A receiving group without sp gathers
		// the whole activation over NVSwitch, left out here as for equal
		// degrees.
		var p2ps float64
		first := -1.0
		same := true
		for i := 0; i+1 < pl.P; i++ {
			bytes := tokens * float64(m.Hidden) * bf16 / float64(min(pl.TPs[i], pl.TPs[i+1]))
			t := p.SendTime(pl.shareNode(*p, i, i+1), bytes)
			if first < 0 {
				first = t
			}
			same = same && t == first
			p2ps += t
		}
		if same {
			r.Bubble = (sum-busiest)/float64(pl.V) + 2*float64(pl.P-1)*first
		} else {
			r.Bubble = (sum-busiest)/float64(pl.V) + 2*p2ps
		}
	}
	// Data-parallel gradients (FP32 main grads, Megatron's default with
	// BF16; BF16 with grads=bf16: gradBytes) reduced over the replicas, overlapped with the last
	// micro-batch's backward (--overlap-grad-reduce); with the
	// distributed optimizer a reduce-scatter, and the updated BF16
	// parameters all-gathered under the next step's first forward
	// (--overlap-param-gather). Each stage over its own data-parallel
	// group (groups: placed by its tensor-parallel degree), which with
	// context parallelism is its C x D GPUs of the same weights.
	var paramsMax float64
	for _, st := range stages {
		paramsMax = max(paramsMax, st.params)
	}
	D := float64(pl.D * pl.C) // the GPUs of a stage's weights
	gb := pl.gradBytes()
	switch {
	case m.MoE():
		r.DPExposed = expertsDP(pl, *p, stages)
	case pl.FSDP:
		// Every micro-batch: the stage's weights all-gathered beside its
		// forward and again beside its backward, the gradients
		// reduce-scattered (FP32) beside the backward.
		var exposed float64
		for s, st := range stages {
			_, dpG := pl.groups(*p, s)
			ag, _ := p.Collective(roofline.AllGather, dpG, st.params*bf16)
			rs, _ := p.Collective(roofline.ReduceScatter, dpG, st.params*gb)
			exposed = max(exposed, p.beside(ag, st.fwd.busy)+p.beside(ag+rs, st.bwd.busy))
		}
		r.DPExposed = float64(pl.M) * exposed
	case pl.D*pl.C > 1:
		var exposed float64
		for s, st := range stages {
			_, dpG := pl.groups(*p, s)
			if pl.DistOpt {
				rs, _ := p.Collective(roofline.ReduceScatter, dpG, st.params*gb)
				ag, _ := p.Collective(roofline.AllGather, dpG, st.params*bf16)
				exposed = max(exposed, p.beside(rs, st.bwd.busy/float64(pl.V))+p.beside(ag, st.fwd.busy/float64(pl.V)))
			} else {
				ar, _ := p.Collective(roofline.AllReduce, dpG, st.params*gb)
				exposed = max(exposed, p.beside(ar, st.bwd.busy/float64(pl.V)))
			}
		}
		r.DPExposed = exposed
	}
	// Tied embeddings on two stages: their gradients are all-reduced
	// between the first and the last stage after the backward (FP32, or
	// BF16 with grads=bf16); of
	// different degrees, each rank of the smaller group holds 1/min of it.
	// Multi-token prediction keeps a copy of the embedding on the last
	// stage, all-reduced the same way (Megatron-Core's
	// finalize_model_grads, _allreduce_word_embedding_grads).
	if (m.Tied || m.MTP > 0) && pl.P > 1 {
		T := float64(min(pl.TPs[0], pl.TPs[pl.P-1]))
		r.Embedding, _ = p.Collective(roofline.AllReduce, Group{PerNode: 1, Nodes: 2}, float64(m.Vocab)*float64(m.Hidden)/T*gb)
		if pl.shareNode(*p, 0, pl.P-1) {
			r.Embedding, _ = p.Collective(roofline.AllReduce, Group{PerNode: 2, Nodes: 1}, float64(m.Vocab)*float64(m.Hidden)/T*gb)
		}
	}
	// Adam over the device's share of the optimizer state: read the FP32
	// gradient, master weight and two moments, write the three back and
	// the BF16 weight (30 bytes a parameter), and zero the gradient
	// buffer (4 bytes a parameter of the device's whole model). With
	// BF16 gradients the share's gradient is first cast to an FP32 main
	// gradient (read 2, write 4) and the buffer zeroed is 2 bytes a
	// parameter.
	opt := paramsMax
	if pl.DistOpt || pl.FSDP {
		opt /= D
	}
	if m.MoE() {
		// Each stage's share: the experts' over their expert-data-parallel
		// replicas, the rest over the data-parallel ones.
		opt = 0
		for _, st := range stages {
			o := st.params
			if pl.DistOpt {
				o = (st.params-st.experts)/D + st.experts/float64(pl.EDP)
			}
			opt = max(opt, o)
		}
	}
	optRead, optWrite := 16.0, 14.0
	if pl.GradBF16 {
		optRead, optWrite = 16+bf16, 14+4
	}
	r.Optimizer = kernel{class: graph.ClassElementwise, read: optRead * opt, writes: optWrite*opt + gb*paramsMax}.time(&p.Hardware)
	if pl.FP8 != "" {
		// The blocks' weights cast to FP8 once a step (the first
		// micro-batch's; Transformer Engine keeps them for the others):
		// read as BF16, written row- and column-wise (Hopper's FP8 GEMMs
		// take both layouts), and with current scaling read once more
		// for their amax.
		var lw float64
		for _, st := range stages {
			lw = max(lw, st.layers)
		}
		r.Optimizer += kernel{class: graph.ClassElementwise, flops: lw, read: 2 * lw, writes: 2 * lw}.time(&p.Hardware)
		if pl.FP8 == FP8Current {
			r.Optimizer += kernel{class: graph.ClassReduction, flops: lw, read: 2 * lw}.time(&p.Hardware)
		}
	}
	r.Step = r.Compute + r.Bubble + r.DPExposed + r.Embedding + r.Optimizer
	gpus := float64(p.GPUs())
	r.TFLOPs = m.ModelFLOPs() / r.Step / gpus / 1e12
	if peak := p.Hardware.PeakFLOPS(graph.ClassMatMul, graph.BF16); peak > 0 {
		r.MFU = m.ModelFLOPs() / r.Step / gpus / peak
	}
	memory(&r, stages, kits, pl.TPs)
	// One block alone: an interior stage's (the middle one's). Without
	// communication a block depends on nothing outside costKey, so the
	// kit's phases keep it for every plan of the cache that shares them.
	k := kitOf(pl.TPs[pl.P/2])
	if !k.hasAlone {
		alone := k.c
		alone.noComm = true
		f, b := alone.layer()
		k.alone, k.hasAlone = [2]float64{f.busy, b.busy}, true
	}
	r.LayerForward, r.LayerBackward = k.alone[0], k.alone[1]
	return r
}

// epOverlap is stage s's forward and backward with the experts'
// all-to-alls overlapped (epoverlap=on: Megatron-Core's
// --overlap-moe-expert-parallel-comm, the forward of one micro-batch and
// the backward of another merged layer by layer): in a merged pair the
// forward's exchanges run beside the backward's computation and the
// backward's beside the forward's (Pod.beside: what does not fit is
// exposed, and the computation beside them slows by the overlap's
// charge). Only the steady state's micro-batches pair: without a
// pipeline the first forward and the last backward run alone; in the
// interleaved schedule stage s's warm-up forwards and cool-down
// backwards, (P-s-1) x 2 + (V-1) x P model chunks each (Megatron-Core's
// get_pp_rank_microbatches), are not paired. The saving is spread over
// the stage's per-micro-batch phases, the forward's and the backward's
// in proportion to their exchanges.
func epOverlap(st *stageCost, pl Plan, p *Pod, s int) {
	fe, be := st.fwd.epExposed, st.bwd.epExposed
	if fe+be <= 0 || pl.M <= 1 {
		return
	}
	fc, bc := st.fwd.busy-fe, st.bwd.busy-be
	save := fe + be - (p.beside(fe, bc) + p.beside(be, fc))
	if save <= 0 {
		return
	}
	M := float64(pl.M)
	alone := 1.0 // micro-batches whose forward (and backward) run unpaired
	if pl.P > 1 {
		warm := min(pl.M*pl.V, (pl.P-s-1)*2+(pl.V-1)*pl.P)
		alone = max(1, float64(warm)/float64(pl.V))
	}
	cut := save * max(0, M-alone) / M
	ff := fe / (fe + be)
	st.fwd.busy -= cut * ff
	st.fwd.epExposed -= cut * ff
	st.bwd.busy -= cut * (1 - ff)
	st.bwd.epExposed -= cut * (1 - ff)
}

// gradBytes is the bytes of a gradient element: FP32 main gradients, or
// BF16 with grads=bf16 (Strategy.GradBF16).
func (pl *Plan) gradBytes() float64 {
	if pl.GradBF16 {
		return bf16
	}
	return 4
}

// expertsDP is the exposed data-parallel communication of a plan of a
// model with experts: each stage's gradients reduced as a dense plan's
// (evaluateCached), the experts' over their expert-data-parallel group and
// the rest over the data-parallel one, one after the other beside the
// same backward (and the parameters' all-gathers beside the forward with
// the distributed optimizer).
func expertsDP(pl Plan, p Pod, stages []stageCost) float64 {
	var exposed float64
	gb := pl.gradBytes()
	_, _, edpG := pl.expertGroups(p)
	for s, st := range stages {
		_, dpG := pl.groups(p, s)
		dense := st.params - st.experts
		if pl.DistOpt {
			rs, _ := p.Collective(roofline.ReduceScatter, dpG, dense*gb)
			ag, _ := p.Collective(roofline.AllGather, dpG, dense*bf16)
			rsE, _ := p.Collective(roofline.ReduceScatter, edpG, st.experts*gb)
			agE, _ := p.Collective(roofline.AllGather, edpG, st.experts*bf16)
			exposed = max(exposed, p.beside(rs+rsE, st.bwd.busy/float64(pl.V))+p.beside(ag+agE, st.fwd.busy/float64(pl.V)))
		} else {
			ar, _ := p.Collective(roofline.AllReduce, dpG, dense*gb)
			arE, _ := p.Collective(roofline.AllReduce, edpG, st.experts*gb)
			exposed = max(exposed, p.beside(ar+arE, st.bwd.busy/float64(pl.V)))
		}
	}
	return exposed
}

// stageLayerParams is stage s's experts' parameters on one of its GPUs
// (its MoE layers' local experts, 1/ETP of each) and its blocks' (the
// experts included, its dense layers' before the experts, the
// multi-token-prediction modules' on the last stage; the embedding and
// output layer not). dn is the stage's dense layers (denseOn's).
func stageLayerParams(m *transformer.Spec, pl *Plan, s, dn int) (experts, layers float64) {
	l := float64(pl.Stages[s])
	T := float64(pl.TPs[s])
	if !m.MoE() {
		layers = l * (float64(m.LayerParams()) / T)
	} else {
		dense := float64(dn)
		experts = (l - dense) * float64(m.Experts/pl.EP) * float64(m.ExpertParams()) / float64(pl.ETP)
		layers = experts + (l-dense)*moeDenseParams(m, pl.TPs[s])
		if dn > 0 {
			layers += dense * (float64(m.DenseLayerParams()) / T)
		}
	}
	if s == pl.P-1 && m.MTP > 0 {
		// Each module: the projection of 2h to h (column-parallel), its
		// two norms, and a block like the last (transformer.MTPParams).
		h := float64(m.Hidden)
		x := float64(m.MTP)
		block := float64(m.DenseLayerParams()) / T
		if m.MoE() {
			e := float64(m.Experts/pl.EP) * float64(m.ExpertParams()) / float64(pl.ETP)
			experts += x * e
			block = e + moeDenseParams(m, pl.TPs[s])
		}
		layers += x * (2*h*h/T + 2*h + block)
	}
	return experts, layers
}

// moeDenseParams is one MoE block's parameters besides its routed
// experts on one GPU of a tensor group of T: the attention's and the
// shared experts' shards, the router (replicated over the group).
func moeDenseParams(m *transformer.Spec, T int) float64 {
	return float64(m.AttentionParams()+int64(m.SharedExperts)*m.ExpertParams())/float64(T) + float64(m.RouterParams())
}

// stageParams is stage s's parameters on one of its GPUs: its layers'
// shards, and the embedding's on the first stage, the output layer's
// (and a tied embedding's copy) on the last.
// lp is m.LayerParams() (computed once by the caller).
func stageParams(m transformer.Spec, pl Plan, s int, lp float64) float64 {
	dn, _ := pl.denseOn(&m, s)
	_, layers := stageLayerParams(&m, &pl, s, dn)
	return stageParamsOf(&m, &pl, s, lp, layers)
}

// stageParamsOf is stageParams with the stage's blocks' parameters
// given (stageLayerParams' layers, read in a model with experts or
// multi-token prediction only).
func stageParamsOf(m *transformer.Spec, pl *Plan, s int, lp, layers float64) float64 {
	T := float64(pl.TPs[s])
	params := float64(pl.Stages[s]) * (lp / T)
	if m.MoE() || m.MTP > 0 {
		params = layers
	}
	if s == 0 {
		params += float64(m.EmbeddingParams()) / T
	}
	if s == pl.P-1 {
		params += float64(m.OutputParams()) / T
		if (m.Tied || m.MTP > 0) && pl.P > 1 {
			params += float64(m.Vocab) * float64(m.Hidden) / T // the output layer's (or MTP's) copy of the embedding
		}
	}
	return params
}

// weigh sets stage s's parameters (stageParams'), and where the plan
// needs them apart (a model with experts, FP8, FSDP) its experts' and
// blocks' (stageLayerParams'), from its dense layers st.dense: the
// blocks' parameters computed once for both.
func (st *stageCost) weigh(m *transformer.Spec, pl *Plan, s int, lp float64) {
	split := m.MoE() || pl.FP8 != "" || pl.FSDP
	var experts, layers float64
	if split || m.MTP > 0 {
		experts, layers = stageLayerParams(m, pl, s, st.dense)
	}
	st.params = stageParamsOf(m, pl, s, lp, layers)
	if split {
		st.experts, st.layers = experts, layers
	}
}

// fits reports whether plan pl fits the GPUs' memory, as
// evaluateCached's Result.Fits says, computing the memory alone (no
// kernel or collective times).
func fits(m transformer.Spec, pl Plan, p *Pod) bool {
	tokens := float64(pl.MBS) * float64(m.Seq) / float64(pl.C)
	var kitBuf [3]stageKit
	kits := kitBuf[:0]
	for _, T := range pl.TPs {
		if kitIndex(kits, T) < 0 {
			kits = append(kits, stageKit{c: newCoster(m, pl, p, T, tokens)})
		}
	}
	// A pipeline of up to 128 stages keeps its costs on the stack.
	var stageBuf [128]stageCost
	stages := stageBuf[:0]
	if pl.P > len(stageBuf) {
		stages = make([]stageCost, 0, pl.P)
	}
	stages = stages[:pl.P]
	lp := float64(m.LayerParams())
	for s := range stages {
		st := &stages[s]
		st.dense, st.denseRec = pl.denseOn(&m, s)
		st.weigh(&m, &pl, s, lp)
	}
	var r Result
	memory(&r, stages, kits, pl.TPs)
	return r.Fits
}

// kitIndex is the index in kits of the kit of tensor-parallel degree T
// (-1: none), the kits looked at in place (a stageKit is large to copy).
func kitIndex(kits []stageKit, T int) int {
	for i := range kits {
		if kits[i].c.pl.T == T {
			return i
		}
	}
	return -1
}

func scalePhase(a phase, k float64) phase {
	return phase{a.busy * k, a.tpAll * k, a.tpExposed * k, a.cpExposed * k, a.epExposed * k}
}

// memory is the most loaded GPU's peak: BF16 weights, FP32 main
// gradients, FP32 master weights and Adam moments (divided over the
// replicas with the distributed optimizer), and the activations of the
// micro-batches in flight: with 1F1B the first stage holds P of them
// (times 1 + (P-1)/(P V) interleaved; all M with GPipe), each L/P layers
// of activations (Korthikanti et al., 2022, with flash attention: no
// S x S scores), the last stage one micro-batch's FP32 logits. Stage s
// is costed by the coster of kits of its tensor-parallel degree, tps[s].
func memory(r *Result, stages []stageCost, kits []stageKit, tps []int) {
	// One layer's activations at each kit's degree, shared by its
	// stages (a plan has at most three kits: kept on the stack).
	var lmBuf [3]layerMemory
	lms := lmBuf[:0]
	for i := range kits {
		lms = append(lms, kits[i].c.layerMemory())
	}
	var peak, wPeak, gPeak, oPeak, aPeak float64
	for s := range stages {
		k := kitIndex(kits, tps[s])
		w, g, o, acts := kits[k].c.stageMemory(s, &stages[s], &lms[k])
		if tot := w + g + o + acts; tot > peak {
			peak, wPeak, gPeak, oPeak, aPeak = tot, w, g, o, acts
		}
	}
	r.Memory = int64(peak)
	r.Weights, r.Grads, r.OptState, r.Activations = int64(wPeak), int64(gPeak), int64(oPeak), int64(aPeak)
	r.Fits = r.Memory <= kits[0].c.pod.Hardware.Memory-Reserve
}

// layerMemory is what stageMemory's stages of one tensor-parallel degree
// share, bytes for one micro-batch: one layer's activations (a block's
// of the model's kind, and in a model with experts a dense block's
// before them), the multi-token-prediction module's block's, and the
// input a recomputing layer keeps.
type layerMemory struct{ perLayer, perDense, mtpBlock, layerInput float64 }

// layerMemory is c's layerMemory (stageMemory's), computed once for all
// the stages of its degree.
func (c *coster) layerMemory() layerMemory {
	m, pl := &c.m, &c.pl
	T := float64(pl.T)
	n, h, f := c.tokens, float64(m.Hidden), float64(m.FFN)
	heads, kv := float64(m.Heads), float64(m.KVHeads)
	unit := n * h // s b h
	// Per layer, in units of s b h bytes (Korthikanti's 34 for GPT):
	// layer norm inputs 4, attention: its input 2, Q K V, its output 2,
	// dropout mask 1; MLP: its input 2, the activation's input and the
	// second GEMM's input (2 f/h each; SwiGLU 4 f/h and 2 f/h), mask 1.
	attn := 2 + 2*(heads+2*kv)/heads + 2 + 1
	if m.Head > 0 {
		d := float64(m.HeadDim())
		attn = 2 + 2*(heads+2*kv)*d/h + 2*heads*d/h + 1
	}
	lat := 0.0 // latent attention's latents (replicated over the tensor group without sp)
	if m.MLA() {
		// Latent attention, as Megatron-Core's MLASelfAttention keeps it
		// (mlaBlock): the down projections' input 2; the query's latent
		// before and after its norm (the norm's input, the up
		// projection's), 4 QLoRA/h; the keys' and values' latent with the
		// rotary key (the down projection's output, the norm's input) and
		// the normed latent (the up projection's input), 2 (KVLoRA +
		// RopeDim)/h + 2 KVLoRA/h; every head's Q and K of Head + RopeDim
		// and V of Head as flash attention saves them (the up
		// projections' outputs are not kept: the rotary embedding and
		// the concatenation need no input for their backward), the
		// output 2 heads Head/h, mask 1.
		d, r := float64(m.HeadDim()), float64(m.RopeDim)
		ql, kl := float64(m.QLoRA), float64(m.KVLoRA)
		lat = (4*ql + 2*(kl+r) + 2*kl) / h
		attn = 2 + lat + 2*heads*(2*(d+r)+d)/h + 2*heads*d/h + 1
	}
	mlp := 2 + 4*f/h + 1
	if m.SwiGLU() {
		mlp = 2 + 6*f/h
	}
	replicated := 4.0 + 2 + 2 + 2 + lat // norms' inputs, the two column-parallel inputs, masks, latents
	if pl.FP8 != "" {
		// Transformer Engine keeps the FP8 copies of the GEMMs' inputs
		// for their weight gradients, one byte an element: QKV's and
		// FC1's inputs (1 unit each, not 2) and FC2's (f/h, not 2 f/h);
		// the attention's output stays BF16 (flash attention's backward
		// reads it).
		attn--
		mlp -= 1 + f/h
		replicated -= 2
		if m.MLA() {
			// The up projections' normed latents in FP8 too.
			fp8Lat := (float64(m.QLoRA) + float64(m.KVLoRA)) / h
			attn -= fp8Lat
			replicated -= fp8Lat
		}
	}
	perLayer := (4 + attn + mlp) * unit
	perDense := perLayer // a dense block's in a model with experts
	switch {
	case m.MoE():
		// Attention as a dense block's (sequence-parallel where T > 1:
		// Resolve requires it); the experts' on this GPU's tokens
		// (moeActivations). Its dense blocks before the experts, all of
		// their activations sequence-parallel likewise.
		perLayer = (4+attn)*unit/T + c.moeActivations()
		perDense /= T
	case pl.SequenceParallel:
		perLayer /= T
	case pl.T > 1:
		perLayer = replicated*unit + (4+attn+mlp-replicated)*unit/T
	}
	mtpBlock := perLayer // the multi-token-prediction module's block: not recomputed
	if pl.Recompute == SelectiveRecompute {
		// The attention output, recomputed.
		out := 2 * unit / T
		if m.MLA() {
			out = 2 * heads * float64(m.HeadDim()) / h * unit / T
		}
		perLayer -= out
		perDense -= out
	} else if c.pod.Kernels.UnfusedAttention && pl.C <= 1 {
		// Unfused attention's softmax output, dropout mask and dropout
		// output, 5 bytes a score (Korthikanti's 5 a s / h).
		perLayer += 5 * n * heads / T * float64(m.Seq)
		perDense += 5 * n * heads / T * float64(m.Seq)
	}
	layerInput := 2 * unit
	if pl.SequenceParallel {
		layerInput /= T
	}
	return layerMemory{perLayer: perLayer, perDense: perDense, mtpBlock: mtpBlock, layerInput: layerInput}
}

// stageMemory is stage s's weights, gradients, optimizer state and
// activations in flight, bytes, at c's tensor-parallel degree; lm is
// c's layerMemory.
func (c *coster) stageMemory(s int, st *stageCost, lm *layerMemory) (w, g, o, acts float64) {
	m, pl := &c.m, &c.pl
	T := float64(pl.T)
	n, kv := c.tokens, float64(m.KVHeads)
	unit := n * float64(m.Hidden) // s b h
	perLayer, perDense, mtpBlock, layerInput := lm.perLayer, lm.perDense, lm.mtpBlock, lm.layerInput
	perDevice := float64(pl.Stages[s])
	inflight := float64(min(pl.M, pl.P-s))
	if pl.V > 1 && s == 0 {
		inflight = float64(pl.P) * (1 + float64(pl.P-1)/float64(pl.P*pl.V))
	}
	if pl.P > 1 && pl.Sched() == decision.GPipe {
		inflight = float64(pl.M)
	}
	if pl.EPOverlap && pl.M > 1 {
		// A merged pair runs the next forward before the backward before
		// it has freed its activations: one model chunk more.
		inflight += 1 / float64(pl.V)
	}
	// A model with experts' dense blocks before them (denseOn's, in st):
	// the stage's dense layers and how many of them recompute.
	dn := st.dense
	dense, drec := float64(dn), float64(st.denseRec)
	if pl.Recompute == FullRecompute {
		// The recomputing layers keep their input; the others (block
		// recomputation) all they save; one layer's worth while one
		// recomputes.
		kk := pl.recomputed(s)
		mrec := min(max(kk-drec, 0), perDevice-dense)
		keep := (perDevice-dense-mrec)*perLayer + (dense-drec)*perDense
		most := perLayer
		if dn == pl.Stages[s] {
			most = perDense
		} else if dn > 0 {
			most = max(perLayer, perDense)
		}
		acts = inflight*(kk*layerInput+keep) + most
	} else {
		acts = inflight * ((perDevice-dense)*perLayer + dense*perDense)
	}
	if s == 0 {
		acts += inflight * 3 * unit / T
	}
	if s == pl.P-1 {
		acts += n * float64(m.Vocab) / T * (bf16 + 4 + 4) // logits, their FP32 copy and its gradient
		if m.MTP > 0 {
			// Each multi-token-prediction module (mtp), for the
			// micro-batches in flight on the last stage: the two norms'
			// inputs and the projection's input (2 + 2 + 4 units, the
			// latter 2 in FP8; sequence-parallel), its block's (kept, not
			// recomputed), and its own logits as the output layer's.
			proj := 4.0
			if pl.FP8 != "" {
				proj = 2
			}
			acts += float64(m.MTP) * (inflight*((2+2+proj)*unit*c.sp()+mtpBlock) + n*float64(m.Vocab)/T*(bf16+4+4))
		}
	}
	if pl.C > 1 {
		// The context ring's buffers while one layer's attention runs:
		// the K and V chunk received and, in the backward, the chunk
		// sent on and a gradient chunk in flight (three chunks of this
		// GPU's K and V).
		acts += 3 * n * 2 * kv / T * float64(m.HeadDim()) * bf16
	}
	gb := pl.gradBytes()
	w = st.params * bf16
	g = st.params * gb
	o = st.params * 12
	if pl.DistOpt {
		o /= float64(pl.D * pl.C) // sharded over the data-parallel and context ranks
		if m.MoE() {
			o = (st.params-st.experts)*12/float64(pl.D*pl.C) + st.experts*12/float64(pl.EDP)
		}
	}
	if pl.FP8 != "" {
		w += 2 * st.layers // the blocks' FP8 weights, row- and column-wise
	}
	if pl.FSDP {
		// Sharded over the C x D ranks, but for two layers' weights
		// gathered (the one running and the next, prefetched) and one
		// layer's gradient before its reduce-scatter.
		D := float64(pl.D * pl.C)
		layer := st.layers / float64(pl.Stages[s])
		w, g, o = w/D+2*layer*bf16, g/D+layer*gb, st.params*12/D
	}
	return w, g, o, acts
}

// moeActivations is what one MoE block keeps for its backward on one GPU
// for one micro-batch besides its attention's, bytes: the router's FP32
// scores, the block's input, and on the most loaded rank the permuted
// tokens (FC1's input, gathered over the expert-tensor group), FC1's
// output (the activation's input), FC2's input, and FC2's output (the
// combine's input, for the routing weights' gradient); the shared
// experts' as a dense MLP's on the GPU's tokens.
func (c *coster) moeActivations() float64 {
	m, pl := c.m, c.pl
	h, E, k := float64(m.Hidden), float64(m.Experts), float64(m.TopK)
	nl := c.tokens / float64(pl.T)
	recv := nl * k * pl.imbalance()
	rows := recv * float64(pl.ETP)
	cols := float64(m.ExpertFFN) / float64(pl.ETP)
	up := cols
	if m.SwiGLU() {
		up = 2 * cols
	}
	in, mid := rows*h*bf16, rows*cols*bf16 // the expert GEMMs' inputs
	if pl.FP8 != "" {
		in, mid = in/2, mid/2 // kept in FP8 (stageMemory)
	}
	a := nl*E*4 + nl*h*bf16 + in + rows*up*bf16 + mid + recv*h*bf16
	if sh := float64(m.SharedExperts) * float64(m.ExpertFFN); sh > 0 {
		a += nl * sh * (2 + 1) * bf16
	}
	return a
}

// Reserve is the memory of a GPU a plan cannot use: the CUDA context,
// NCCL's buffers and the allocator's fragmentation (an assumption: a few
// GiB is what users of Megatron-LM and PyTorch see on 80 GB GPUs).
const Reserve = 6 << 30

// String is a plan's one-line summary.
func (r Result) String() string {
	return fmt.Sprintf("%s: %.3f s, %.1f TFLOP/s per GPU, MFU %.1f%%, %.1f GB per GPU", r.Plan, r.Step, r.TFLOPs, 100*r.MFU, float64(r.Memory)/1e9)
}
