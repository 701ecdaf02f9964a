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
// GEMM, flash attention, the output projection and the residual, the
// tensor-parallel collectives beside them, and the FP8 casts of the
// GEMMs' inputs; or a family's attention in place of them
// (cost.AttentionBlock: planner/families' latent attention).
func (c *coster) attnBlock() (fwd, bwd, rec phase) {
	if c.M.Mixed() {
		return c.mixerBlock() // below
	}
	if p := c.Points.AttentionBlock.Of(&c.Shard); p != nil {
		return p.AttentionBlock(&c.Shard) // a family's in place of the block's own
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
	// The families' and the mechanisms' kernels in the attention
	// (cost.AttentionKernels: planner/families' traits).
	for p := range c.Points.AttentionKernels.On(&c.Shard) {
		f, b := p.Attention(&c.Shard)
		fwd, bwd = fwd.Plus(f), bwd.Plus(b)
	}
	if lp := c.Points.LowPrecision.Of(&c.Shard); lp != nil {
		// wq, wk and wv's input and wo's; their outputs' gradients (the
		// registered cost.LowPrecision that prices the shard; none in
		// BF16); three first linears, as torchtitan's Attention and
		// transformers' hold them.
		f, b := lp.Linears(&c.Shard, n*h, n*qd/T, [2]float64{n * qkv, n * h}, 3)
		fwd, bwd = fwd.Plus(f), bwd.Plus(b)
	}
	if c.Plan.Recomputes().Has(plan.RecomputeCoreAttn) {
		rec = fa
	}
	return fwd, bwd, rec
}

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
	// granularity the kernel computes it (TiledKeys, cost.AttnTile).
	attnFlops := 2 * 2 * n * c.Plan.TiledKeys(m, cost.AttnTile) * (heads / T) * d
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
		fwd := fusedAttn{K: attn, Elems: e, Tail: row, HeadDim: int(d)}
		bwd := fusedAttn{K: attnB, Elems: e, Tail: row, HeadDim: int(d)}
		if r := c.Points.CPAttention.Of(&c.Shard); r != nil {
			// The registered context-parallel exchange that prices the
			// shard (cost.CPAttention: mechanisms.Ring, cp>1).
			fa, fb = r.Attention(&c.Shard, fwd, false, msg), r.Attention(&c.Shard, bwd, true, msg)
		} else {
			fa, fb = c.AttentionCall(fwd, false), c.AttentionCall(bwd, true)
		}
	}
	return fa, fb
}

// A model whose layers' token mixers differ (transformer.Spec.Mixers:
// Qwen3-Next) has in each layer one mixer and its experts. The
// attention half the cost model asks of a block (attnBlock) is the mean
// of the layers' mixers: a gated attention layer (attnBlock's, with the
// gate's GEMM and product: attnGate) or a Gated DeltaNet (gdnBlock: the
// registered cost.LinearMixer's, families.GatedDeltaNet); the
// experts are moeBlock's. As for hybridLayer, a stage's layers cost their
// number times one layer, so the mean is exact over the model and a
// stage of another mix is costed at it.

// mixerBlock is the mean of m's layers' mixers for one micro-batch on
// one GPU, forward, backward and what selective recomputation runs
// again (the attention layers' core attention).
func (c *coster) mixerBlock() (fwd, bwd, rec phase) {
	ng, na := c.M.MixerKinds()
	l := float64(c.M.Layers)
	add := func(f, b, r phase, k int) {
		w := float64(k) / l
		fwd, bwd, rec = fwd.Plus(cost.Scale(f, w)), bwd.Plus(cost.Scale(b, w)), rec.Plus(cost.Scale(r, w))
	}
	if na > 0 {
		plain := *c
		plain.M.Mixers = ""
		f, b, r := plain.attnBlock()
		gf, gb := c.Points.LinearMixer.AttnGate(&c.Shard)
		add(f.Plus(gf), b.Plus(gb), r, na)
	}
	if ng > 0 {
		f, b, r := c.Points.LinearMixer.MixerBlock(&c.Shard)
		add(f, b, r, ng)
	}
	return fwd, bwd, rec
}
