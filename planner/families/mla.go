package families

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// LatentAttention is DeepSeek's multi-head latent attention (DeepSeek-V2
// and V3: transformer.Spec's QLoRA, KVLoRA and RopeDim), a layer's
// attention in place of the block's own (cost.AttentionBlock).
type LatentAttention struct{}

var _ cost.AttentionBlock = LatentAttention{}

// Name is the trait's registered name.
func (LatentAttention) Name() string { return "latent-attention" }

// When is the trait's declaration: a model that attends through
// latents (Spec.MLA).
func (LatentAttention) When() cost.When { return mlaWhen }

var mlaWhen = cost.When{cost.Model("latent attention", func(m *transformer.Spec) bool { return m.MLA() })}

// AttentionBlock is latentBlock's on shard s.
func (LatentAttention) AttentionBlock(s *cost.Shard) (fwd, bwd, rec cost.Phase) {
	return latent{s}.latentBlock()
}

// latent is the shard latent attention's kernels are priced on.
type latent struct{ *cost.Shard }

// latentBlock is a block's multi-head latent attention (DeepSeek-V2/V3,
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
// transformer's (AttentionFLOPs: ModelFLOPs counts the same
// projections). Without a query latent (QLoRA 0) the query is one
// projection of the hidden state (linear_q_proj). Left out: the down
// projections' weight gradients all-reduced over the tensor group with
// sequence parallelism (finalize_model_grads' sequence-parallel
// parameters, once a step, Hidden x (QLoRA + KVLoRA + RopeDim) x 4
// bytes a layer). rec is the forward of what selective recomputation
// runs again (as the block's own attention's): the core attention (core_attn), the up
// projections with their gathers and the rotary embedding (mla_up_proj:
// Megatron-Core's qkv_up_proj_and_rope_apply), the input norm, a module
// of its own here (layernorm, with its output's FP8 casts).
func (c latent) latentBlock() (fwd, bwd, rec cost.Phase) {
	m, T := c.M, float64(c.Plan.TP)
	n, h := c.Tokens, float64(m.Hidden)
	heads := float64(m.Heads) / T
	d, r := float64(m.HeadDim()), float64(m.RopeDim)
	ql, kl := float64(m.QLoRA), float64(m.KVLoRA)
	sp := c.SP()
	nd := n * sp // the down projections' tokens on this GPU
	act := n * h * cost.BF16
	red := func(e float64) cost.Kernel {
		return cost.Kernel{Class: graph.ClassReduction, FLOPs: 8 * e, Read: e * cost.BF16, Writes: e * cost.BF16}
	}
	norm := red(nd * h)
	resid := cost.Kernel{Class: graph.ClassElementwise, FLOPs: 3 * nd * h, Read: 2 * act * sp, Writes: 1.5 * act * sp}
	before, after, bwdAfter, bwdBefore := c.TPKinds()
	t := c.Run
	// The query: a latent (down, norm, up) or one projection.
	var qf, qb, up cost.Phase // up: the query's up projection (or its one projection)
	qw := heads * (d + r)     // this GPU's query width
	if ql > 0 {
		gD := c.LGEMM(2*nd*h*ql, nd*h*cost.BF16+h*ql*cost.BF16, nd*ql*cost.BF16)
		gU := c.LGEMM(2*n*ql*qw, n*ql*cost.BF16+ql*qw*cost.BF16, n*qw*cost.BF16)
		bD, bU := c.Back(gD), c.Back(gU)
		lat := n * ql * cost.BF16
		up = c.Pair(gU, before, lat)
		qf = t(gD).Plus(t(red(nd * ql))).Plus(up)
		qb = c.Pair(bU, bwdBefore, lat).Plus(c.Pair(bU, before, lat)).Plus(t(cost.Twice(red(nd * ql)))).Plus(t(bD)).Plus(t(bD))
		if c.FP8Fwd > 0 {
			qf = qf.Plus(mechanisms.Casts(c.Shard, nd*ql))
			qb = qb.Plus(mechanisms.BwdCasts(c.Shard, nd*ql))
		}
	} else {
		g := c.LGEMM(2*n*h*qw, act+h*qw*cost.BF16, n*qw*cost.BF16)
		b := c.Back(g)
		up = c.Pair(g, before, act)
		qf = up
		qb = c.Pair(b, bwdBefore, act).Plus(c.Pair(b, before, act))
	}
	// The keys and values: the latent with the rotary key, its norm, the
	// up projection to every head's key (without position) and value.
	kvw := heads * 2 * d
	gKD := c.LGEMM(2*nd*h*(kl+r), nd*h*cost.BF16+h*(kl+r)*cost.BF16, nd*(kl+r)*cost.BF16)
	gKU := c.LGEMM(2*n*kl*kvw, n*kl*cost.BF16+kl*kvw*cost.BF16, n*kvw*cost.BF16)
	bKD, bKU := c.Back(gKD), c.Back(gKU)
	lat := n * (kl + r) * cost.BF16
	kvUp := c.Pair(gKU, before, lat)
	kvf := t(gKD).Plus(t(red(nd * kl))).Plus(kvUp)
	kvb := c.Pair(bKU, bwdBefore, lat).Plus(c.Pair(bKU, before, lat)).Plus(t(cost.Twice(red(nd * kl)))).Plus(t(bKD)).Plus(t(bKD))
	// Rotary embedding of the query's and the key's rotary parts, and
	// the heads' queries and keys assembled (read the parts, write Q and
	// K of Head + RopeDim a head).
	qk := n * heads * (d + r)
	rope := cost.Kernel{Class: graph.ClassElementwise, FLOPs: 3 * n * (heads + 1) * r,
		Read: (qk + n*heads*d + n*r) * cost.BF16, Writes: 2 * qk * cost.BF16}
	// Flash attention over the causal half (the window's keys where the
	// model has one, by whole tiles: TiledKeys): Q K^T at Head + RopeDim,
	// P V at Head.
	attnFlops := 2 * n * c.Plan.TiledKeys(m, cost.AttnTile) * heads * (2*d + r)
	qkv := 2*qk + n*heads*d // Q, K, V elements
	o := n * heads * d      // the output's
	attn := cost.Kernel{Class: graph.ClassMatMul, FLOPs: attnFlops, Read: qkv * cost.BF16, Writes: o * cost.BF16}
	attnB := cost.Kernel{Class: graph.ClassMatMul, FLOPs: 2.5 * attnFlops, Read: (qkv + 2*o) * cost.BF16, Writes: qkv * cost.BF16}
	msg := cost.RingMsg{KV: n * heads * (2*d + r) * cost.BF16, Out: o} // this GPU's K and V (context parallelism's message), its output
	e := n * heads * (2*d + r)                                         // the queries' elements: Q and K of Head + RopeDim, V of Head
	row := n * (2*d + r)                                               // a causal call's last row
	fa := mechanisms.RingAttention(c.Shard, cost.FusedAttn{K: attn, Elems: e, Tail: row, HeadDim: int(d + r)}, false, msg)
	fb := mechanisms.RingAttention(c.Shard, cost.FusedAttn{K: attnB, Elems: e, Tail: row, HeadDim: int(d + r)}, true, msg)
	gProj := c.LGEMM(2*n*heads*d*h, o*cost.BF16+heads*d*h*cost.BF16, act)
	bProj := c.Back(gProj)
	fwd = t(norm).Plus(qf).Plus(kvf).Plus(t(rope)).Plus(fa).Plus(c.Pair(gProj, after, act)).Plus(t(resid))
	bwd = t(cost.Twice(resid)).Plus(c.Pair(bProj, bwdAfter, act)).Plus(t(bProj)).Plus(fb).Plus(t(cost.Twice(rope))).
		Plus(kvb).Plus(qb).Plus(t(cost.Twice(norm)))
	if c.FP8Fwd > 0 {
		fwd, bwd = fwd.Plus(mechanisms.Casts(c.Shard, nd*h, nd*kl, o)), bwd.Plus(mechanisms.BwdCasts(c.Shard, nd*h, nd*kl, o))
	}
	if mods := c.Plan.Recomputes(); mods != 0 {
		if mods.Has(plan.RecomputeCoreAttn) {
			rec = fa
		}
		if mods.Has(plan.RecomputeMLAUpProj) {
			rec = rec.Plus(up).Plus(kvUp).Plus(t(rope))
		}
		if mods.Has(plan.RecomputeLayerNorm) {
			rec = rec.Plus(t(norm)).Plus(mechanisms.Casts(c.Shard, nd*h))
		}
	}
	return fwd, bwd, rec
}

var _ cost.AttentionMemory = LatentAttention{}

// Units is what one block's latent attention keeps for its backward, in
// units of s b h bytes before any split over the tensor group
// (cost.AttentionMemory; planner/memory's blockUnits), as Megatron-Core's
// MLASelfAttention keeps it (latentBlock): the down projections' input
// 2; the query's latent before and after its norm (the norm's input,
// the up projection's), 4 QLoRA/h; the keys' and values' latent with the
// rotary key (the down projection's output, the norm's input) and the
// normed latent (the up projection's input), 2 (KVLoRA + RopeDim)/h + 2
// KVLoRA/h; every head's Q and K of Head + RopeDim and V of Head as
// flash attention saves them (the up projections' outputs are not kept:
// the rotary embedding and the concatenation need no input for their
// backward), the output 2 heads Head/h, the dropout mask's mask. The
// down projections' input and the up projections' normed latents in
// bytes of in (a GEMM's saved input's). Latents, the latents alone:
// replicated over the tensor group without sequence parallelism.
func (LatentAttention) Units(m transformer.Spec, in, mask float64) (attn, latents float64) {
	h, heads := float64(m.Hidden), float64(m.Heads)
	d, r := float64(m.HeadDim()), float64(m.RopeDim)
	ql, kl := float64(m.QLoRA), float64(m.KVLoRA)
	lat := (2*ql + in*ql + 2*(kl+r) + in*kl) / h
	attn = in + lat + 2*heads*(2*(d+r)+d)/h + 2*heads*d/h + mask
	return attn, lat
}

// OutputUnits is the latent attention's output, every head's V of Head,
// in units of s b h bytes: what recomputing the core attention frees.
func (LatentAttention) OutputUnits(m transformer.Spec) float64 {
	return 2 * float64(m.Heads) * float64(m.HeadDim()) / float64(m.Hidden)
}

// RecomputeFreed is what selective recomputation's modules mods free of
// a block's latent attention, each piece its replicated and its split
// units of s b h bytes: layernorm its input norm's output (the down
// projections' input, in bytes an element, in: FP8 where they run in
// FP8), replicated; mla_up_proj every head's query, key and value
// (flash attention's saved inputs), split.
func (LatentAttention) RecomputeFreed(m transformer.Spec, mods plan.RecomputeModules, in float64) (freed [2][2]float64) {
	if mods.Has(plan.RecomputeLayerNorm) {
		freed[0] = [2]float64{in, 0}
	}
	if mods.Has(plan.RecomputeMLAUpProj) {
		d, r, h := float64(m.HeadDim()), float64(m.RopeDim), float64(m.Hidden)
		freed[1] = [2]float64{0, 2 * float64(m.Heads) * (2*(d+r) + d) / h}
	}
	return freed
}
