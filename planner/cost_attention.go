package planner

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// attnBlock is one block's attention for one micro-batch on one GPU,
// forward and backward (no recomputation), and the forward of what
// selective recomputation runs again of it (rec: the core attention,
// with recompute=selective's default modules): the norm, the QKV
// GEMM (or latent attention's projections: mlaBlock), flash attention,
// the output projection and the residual, the tensor-parallel
// collectives beside them, and the FP8 casts of the GEMMs' inputs.
func (c *coster) attnBlock() (fwd, bwd, rec phase) {
	if c.M.Mixed() {
		return c.mixerBlock() // cost_gdn.go
	}
	if c.M.MLA() {
		return c.mlaBlock()
	}
	m, T := c.M, float64(c.Plan.TP)
	n, h := c.Tokens, float64(m.Hidden)
	d, heads, kv := float64(m.HeadDim()), float64(m.Heads), float64(m.KVHeads)
	sp := c.SP()
	act := n * h * bf16 // one full activation
	qkv := (heads + 2*kv) * d / T
	qd := h // the attention's width: heads x head_dim
	if m.Head > 0 {
		qd = heads * d
	}
	norm := kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h * sp, Read: act * sp, Writes: act * sp}
	resid := kernel{Class: graph.ClassElementwise, FLOPs: 3 * n * h * sp, Read: 2 * act * sp, Writes: 1.5 * act * sp}
	fa, fb := c.coreAttention()
	gQKV := c.LGEMM(2*n*h*qkv, act+h*qkv*bf16, n*qkv*bf16)
	gProj := c.LGEMM(2*n*qd/T*h, n*qd/T*bf16+qd*h/T*bf16, act)
	bQKV, bProj := c.Back(gQKV), c.Back(gProj)
	before, after, bwdAfter, bwdBefore := c.TPKinds()
	t := c.Run
	// Backward: each GEMM's input gradient and weight gradient (each the
	// forward's FLOPs), twice the elementwise traffic, flash attention's
	// backward (2.5x its forward). The collectives mirror the forward's:
	// an all-gather's backward is a reduce-scatter and the reverse; with
	// sequence parallelism the column-parallel GEMMs' inputs are gathered
	// again for their weight gradients.
	fwd = t(norm).Plus(c.Pair(gQKV, before, act)).Plus(fa).Plus(c.Pair(gProj, after, act)).Plus(t(resid))
	bwd = t(cost.Twice(resid)).Plus(c.Pair(bProj, bwdAfter, act)).Plus(t(bProj)).Plus(fb).
		Plus(c.Pair(bQKV, bwdBefore, act)).Plus(c.Pair(bQKV, before, act)).Plus(t(cost.Twice(norm)))
	// The families' kernels in the attention (planner/families:
	// YaRN's unfused rotary embedding, the output projection's bias
	// outside a fused bias-dropout-add, Qwen3's query and key norms,
	// Gemma's norm of the attention's output).
	for p := range c.Points.AttentionKernels.On(&c.Shard) {
		f, b := p.Attention(&c.Shard)
		fwd, bwd = fwd.Plus(f), bwd.Plus(b)
	}
	if c.FP8Fwd > 0 {
		// wq, wk and wv's input and wo's; their outputs' gradients (the
		// registered cost.LowPrecision); three first linears, as
		// torchtitan's Attention and transformers' hold them.
		f, b := c.Points.LowPrecision.Linears(&c.Shard, n*h, n*qd/T, [2]float64{n * qkv, n * h}, 3)
		fwd, bwd = fwd.Plus(f), bwd.Plus(b)
	}
	if c.Plan.Recomputes().Has(plan.RecomputeCoreAttn) {
		rec = fa
	}
	return fwd, bwd, rec
}

// attnTile is the queries and the keys of one tile of a fused attention
// kernel, which computes a sliding window's keys by whole tiles
// (transformer.TiledKeys): FlashAttention-2's forward at head width
// 64, 128 x 128 (Dao-AILab/flash-attention 01afd16d,
// csrc/flash_attn/src/flash_fwd_launch_template.h run_mha_fwd_hdim64,
// Flash_fwd_kernel_traits<64, 128, 128, ...>). PyTorch's FlexAttention
// skips masked blocks of the same 128 x 128 (torch 2.14.1
// torch/nn/attention/flex_attention.py, _DEFAULT_SPARSE_BLOCK_SIZE, the
// default BLOCK_SIZE of create_block_mask). cuDNN's tiles are not
// public; FlashAttention-2's stand for them and for every head width
// (at 128 its forward tile is 128 x 64: a 128-key window still spans
// 256 keys a query tile).
const attnTile = 128

// coreAttention is a block's core attention forward and backward
// (attnBlock's; eagerBlock's SDPA): flash attention, context
// parallelism's ring of it, or the unfused kernels where the pod's
// attention is unfused.
func (c *coster) coreAttention() (fa, fb phase) {
	m, T := c.M, float64(c.Plan.TP)
	n := c.Tokens
	d, heads, kv := float64(m.HeadDim()), float64(m.Heads), float64(m.KVHeads)
	qkv := (heads + 2*kv) * d / T
	// Flash attention: the causal half of the scores, Q K^T and P V,
	// for this GPU's queries against the whole sequence's keys (with
	// context parallelism its n = 1/C of the tokens, two chunks placed
	// so that its share of the causal half is 1/C: mechanisms.Ring); with
	// a sliding window in some layers, the keys a query meets on average
	// over the layers (CausalKeys: the layers' costs are one layer's
	// times their number, so the mean is exact in the sum; a kernel's
	// time is linear in its FLOPs), each window layer's at the tile
	// granularity the kernel computes it (TiledKeys, attnTile).
	attnFlops := 2 * 2 * n * c.Plan.TiledKeys(m, attnTile) * (heads / T) * d
	attn := kernel{Class: graph.ClassMatMul, FLOPs: attnFlops, Read: n * qkv * bf16, Writes: n * heads / T * d * bf16}
	attnB := kernel{Class: graph.ClassMatMul, FLOPs: 2.5 * attnFlops, Read: n * (qkv + 2*heads/T*d) * bf16, Writes: n * qkv * bf16}
	// This GPU's K and V as a context-parallel ring moves them (every
	// query head's where the stack's model repeats them: RepeatKV) and
	// its output's elements.
	kvHeads := kv
	if c.Plan.Run.RepeatKV {
		kvHeads = heads
	}
	msg := cost.RingMsg{KV: n * 2 * kvHeads / T * d * bf16, Out: n * heads / T * d}
	if c.Pod.Kernels.UnfusedAttention && c.Plan.CP <= 1 {
		uf, ub := c.UnfusedAttention()
		fa, fb = phase{Busy: uf, Launches: 4}, phase{Busy: ub, Launches: 6} // unfusedAttention's kernels
	} else {
		e := n * heads / T * 2 * d // the queries' elements: Q and K of d, V of d
		row := n * 2 * d           // a causal call's last row: its keys, of d each way
		fa = c.Points.CPAttention.Attention(&c.Shard, fusedAttn{K: attn, Elems: e, Tail: row, HeadDim: int(d)}, false, msg)
		fb = c.Points.CPAttention.Attention(&c.Shard, fusedAttn{K: attnB, Elems: e, Tail: row, HeadDim: int(d)}, true, msg)
	}
	return fa, fb
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
// bytes a layer). rec is the forward of what selective recomputation
// runs again (attnBlock's): the core attention (core_attn), the up
// projections with their gathers and the rotary embedding (mla_up_proj:
// Megatron-Core's qkv_up_proj_and_rope_apply), the input norm, a module
// of its own here (layernorm, with its output's FP8 casts).
func (c *coster) mlaBlock() (fwd, bwd, rec phase) {
	m, T := c.M, float64(c.Plan.TP)
	n, h := c.Tokens, float64(m.Hidden)
	heads := float64(m.Heads) / T
	d, r := float64(m.HeadDim()), float64(m.RopeDim)
	ql, kl := float64(m.QLoRA), float64(m.KVLoRA)
	sp := c.SP()
	nd := n * sp // the down projections' tokens on this GPU
	act := n * h * bf16
	red := func(e float64) kernel {
		return kernel{Class: graph.ClassReduction, FLOPs: 8 * e, Read: e * bf16, Writes: e * bf16}
	}
	norm := red(nd * h)
	resid := kernel{Class: graph.ClassElementwise, FLOPs: 3 * nd * h, Read: 2 * act * sp, Writes: 1.5 * act * sp}
	before, after, bwdAfter, bwdBefore := c.TPKinds()
	t := c.Run
	// The query: a latent (down, norm, up) or one projection.
	var qf, qb, up phase  // up: the query's up projection (or its one projection)
	qw := heads * (d + r) // this GPU's query width
	if ql > 0 {
		gD := c.LGEMM(2*nd*h*ql, nd*h*bf16+h*ql*bf16, nd*ql*bf16)
		gU := c.LGEMM(2*n*ql*qw, n*ql*bf16+ql*qw*bf16, n*qw*bf16)
		bD, bU := c.Back(gD), c.Back(gU)
		lat := n * ql * bf16
		up = c.Pair(gU, before, lat)
		qf = t(gD).Plus(t(red(nd * ql))).Plus(up)
		qb = c.Pair(bU, bwdBefore, lat).Plus(c.Pair(bU, before, lat)).Plus(t(cost.Twice(red(nd * ql)))).Plus(t(bD)).Plus(t(bD))
		if c.FP8Fwd > 0 {
			qf = qf.Plus(c.Points.LowPrecision.Casts(&c.Shard, nd*ql))
			qb = qb.Plus(c.Points.LowPrecision.BwdCasts(&c.Shard, nd*ql))
		}
	} else {
		g := c.LGEMM(2*n*h*qw, act+h*qw*bf16, n*qw*bf16)
		b := c.Back(g)
		up = c.Pair(g, before, act)
		qf = up
		qb = c.Pair(b, bwdBefore, act).Plus(c.Pair(b, before, act))
	}
	// The keys and values: the latent with the rotary key, its norm, the
	// up projection to every head's key (without position) and value.
	kvw := heads * 2 * d
	gKD := c.LGEMM(2*nd*h*(kl+r), nd*h*bf16+h*(kl+r)*bf16, nd*(kl+r)*bf16)
	gKU := c.LGEMM(2*n*kl*kvw, n*kl*bf16+kl*kvw*bf16, n*kvw*bf16)
	bKD, bKU := c.Back(gKD), c.Back(gKU)
	lat := n * (kl + r) * bf16
	kvUp := c.Pair(gKU, before, lat)
	kvf := t(gKD).Plus(t(red(nd * kl))).Plus(kvUp)
	kvb := c.Pair(bKU, bwdBefore, lat).Plus(c.Pair(bKU, before, lat)).Plus(t(cost.Twice(red(nd * kl)))).Plus(t(bKD)).Plus(t(bKD))
	// Rotary embedding of the query's and the key's rotary parts, and
	// the heads' queries and keys assembled (read the parts, write Q and
	// K of Head + RopeDim a head).
	qk := n * heads * (d + r)
	rope := kernel{Class: graph.ClassElementwise, FLOPs: 3 * n * (heads + 1) * r,
		Read: (qk + n*heads*d + n*r) * bf16, Writes: 2 * qk * bf16}
	// Flash attention over the causal half (the window's keys where the
	// model has one, by whole tiles: TiledKeys): Q K^T at Head + RopeDim,
	// P V at Head.
	attnFlops := 2 * n * c.Plan.TiledKeys(m, attnTile) * heads * (2*d + r)
	qkv := 2*qk + n*heads*d // Q, K, V elements
	o := n * heads * d      // the output's
	attn := kernel{Class: graph.ClassMatMul, FLOPs: attnFlops, Read: qkv * bf16, Writes: o * bf16}
	attnB := kernel{Class: graph.ClassMatMul, FLOPs: 2.5 * attnFlops, Read: (qkv + 2*o) * bf16, Writes: qkv * bf16}
	msg := cost.RingMsg{KV: n * heads * (2*d + r) * bf16, Out: o} // this GPU's K and V (context parallelism's message), its output
	e := n * heads * (2*d + r)                                    // the queries' elements: Q and K of Head + RopeDim, V of Head
	row := n * (2*d + r)                                          // a causal call's last row
	fa := c.Points.CPAttention.Attention(&c.Shard, fusedAttn{K: attn, Elems: e, Tail: row, HeadDim: int(d + r)}, false, msg)
	fb := c.Points.CPAttention.Attention(&c.Shard, fusedAttn{K: attnB, Elems: e, Tail: row, HeadDim: int(d + r)}, true, msg)
	gProj := c.LGEMM(2*n*heads*d*h, o*bf16+heads*d*h*bf16, act)
	bProj := c.Back(gProj)
	fwd = t(norm).Plus(qf).Plus(kvf).Plus(t(rope)).Plus(fa).Plus(c.Pair(gProj, after, act)).Plus(t(resid))
	bwd = t(cost.Twice(resid)).Plus(c.Pair(bProj, bwdAfter, act)).Plus(t(bProj)).Plus(fb).Plus(t(cost.Twice(rope))).
		Plus(kvb).Plus(qb).Plus(t(cost.Twice(norm)))
	if c.FP8Fwd > 0 {
		fwd, bwd = fwd.Plus(c.Points.LowPrecision.Casts(&c.Shard, nd*h, nd*kl, o)), bwd.Plus(c.Points.LowPrecision.BwdCasts(&c.Shard, nd*h, nd*kl, o))
	}
	if mods := c.Plan.Recomputes(); mods != 0 {
		if mods.Has(plan.RecomputeCoreAttn) {
			rec = fa
		}
		if mods.Has(plan.RecomputeMLAUpProj) {
			rec = rec.Plus(up).Plus(kvUp).Plus(t(rope))
		}
		if mods.Has(plan.RecomputeLayerNorm) {
			rec = rec.Plus(t(norm)).Plus(c.Points.LowPrecision.Casts(&c.Shard, nd*h))
		}
	}
	return fwd, bwd, rec
}
