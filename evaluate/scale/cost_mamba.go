package scale

import (
	"github.com/placer/placer/evaluate/scale/cost"
	"github.com/placer/placer/evaluate/scale/mechanisms"
	"github.com/placer/placer/graph"
)

// A hybrid model (transformer.Spec.Pattern: Nemotron-H) is a stack of
// single-mixer blocks, each a norm, one mixer and the residual, as
// Megatron-Core's MambaStack builds it (megatron/core/ssm/mamba_block.py:
// MambaLayer, a TransformerLayer of self-attention only, or of an MLP
// only). The cost model's layer is the mean of the pattern's blocks: a
// stage's layers cost their number times one layer, so the mean is
// exact over the model; a stage whose layers are not the pattern's mix
// (a pipeline cut beside its attention layers) is costed at the mean,
// left out. Attention and MLP blocks are attnBlock's and mlpBlock's
// alone (each with its own norm and residual); the Mamba-2 block is
// mambaBlock's.

// hybridLayer is one layer of a hybrid model for one micro-batch on one
// GPU, forward and backward, recomputation included: the mean over its
// pattern of Mamba-2, attention and MLP blocks.
func (c *coster) hybridLayer() (fwd, bwd phase) {
	nm, na, nf := c.M.Kinds()
	l := float64(c.M.Layers)
	var p part
	add := func(f, b, r phase, k int) {
		w := float64(k) / l
		p.fwd, p.bwd, p.rec = p.fwd.Plus(cost.Scale(f, w)), p.bwd.Plus(cost.Scale(b, w)), p.rec.Plus(cost.Scale(r, w))
	}
	if nm > 0 {
		f, b, r := c.mambaBlock()
		add(f, b, r, nm)
	}
	if na > 0 {
		f, b, r := c.attnBlock()
		add(f, b, r, na)
	}
	if nf > 0 {
		f, b, r := c.mlpBlock()
		add(f, b, r, nf)
	}
	return c.join(p, part{}, false)
}

// mambaBlock is one Mamba-2 block for one micro-batch on one GPU (arXiv
// 2405.21060; Megatron-Core's MambaMixer, megatron/core/ssm/
// mamba_mixer.py, its heads and groups split over the tensor group):
// the norm; in_proj, column-parallel, to z, x, B, C and dt; the causal
// depthwise convolution of x, B and C with its SiLU; the SSD chunked
// scan (transformer.Spec.SSDFLOPs) with dt's softplus and the skip D x;
// the gated RMS norm of its output by SiLU(z); out_proj, row-parallel;
// the residual; the tensor-parallel collectives beside the two GEMMs as
// attention's beside QKV and its projection. Modelled, not measured:
// nothing here timed the SSD kernels (mamba_ssm's Triton
// mamba_chunk_scan_combined), so their FLOPs run at the pod's GEMM
// rate and bytes, and the convolution and the gated norm at memory
// bandwidth. Backward: each GEMM's two gradients; the scan's gradients
// of its four matmul families (twice its FLOPs) and the chunk states
// recomputed (the chunk-scan backward recomputes them, saving none:
// 2 State HeadDim Heads a token); the elementwise kernels twice. No
// selective recomputation of it (rec zero: Megatron-Core's recompute
// modules name none of the mixer).
func (c *coster) mambaBlock() (fwd, bwd, rec phase) {
	m, T := c.M, float64(c.Plan.TP)
	n, h := c.Tokens, float64(m.Hidden)
	s := m.SSM
	sp := c.SP()
	act := n * h * bf16
	in := float64(s.InProj()) / T
	di := float64(s.Inner()) / T
	xbc := di + 2*float64(s.Groups*s.State)/T // x, B and C: the convolution's channels
	heads := float64(s.Heads) / T
	norm := kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h * sp, Read: act * sp, Writes: act * sp}
	resid := kernel{Class: graph.ClassElementwise, FLOPs: 3 * n * h * sp, Read: 2 * act * sp, Writes: 1.5 * act * sp}
	conv := kernel{Class: graph.ClassElementwise, FLOPs: (2*float64(s.Conv) + 4) * n * xbc, Read: n * xbc * bf16, Writes: n * xbc * bf16}
	ssdFlops := n * m.SSDFLOPs() / T
	ssd := kernel{Class: graph.ClassMatMul, FLOPs: ssdFlops, Read: n * (xbc + heads) * bf16, Writes: n * di * bf16}
	states := 2 * float64(s.State*s.HeadDim) * heads * n
	ssdB := kernel{Class: graph.ClassMatMul, FLOPs: 2*ssdFlops + states, Read: n * (2*xbc + heads + 2*di) * bf16, Writes: n * (xbc + heads) * bf16}
	gated := kernel{Class: graph.ClassReduction, FLOPs: 10 * n * di, Read: 2 * n * di * bf16, Writes: n * di * bf16}
	fwd, bwd = c.recurrentBlock(n, h, in, di, sp, act, recurrentKernels{norm, conv, ssd, ssdB, gated, resid})
	return fwd, bwd, rec
}

// recurrentKernels are the kernels of a recurrent mixer's block (Mamba-2's
// or Gated DeltaNet's) between its two projections: the norm, the causal
// convolution, the scan forward and backward, the gated norm and the
// residual add.
type recurrentKernels struct{ norm, conv, scan, scanB, gated, resid kernel }

// recurrentBlock is a recurrent mixer's block for n tokens of hidden h:
// the norm, the input projection to in features (its tensor-parallel
// collective before it), the convolution, the scan, the gated norm, the
// output projection from inner features (its collective after), the
// residual; the backward in reverse, each elementwise kernel twice, the
// input projection's collective both ways; FP8's casts where the plan
// runs FP8. act is the bytes of the block's input activation; sp the
// sequence-parallel share of the tokens.
func (c *coster) recurrentBlock(n, h, in, inner, sp, act float64, k recurrentKernels) (fwd, bwd phase) {
	gIn := c.LGEMM(2*n*h*in, act+h*in*bf16, n*in*bf16)
	gOut := c.LGEMM(2*n*inner*h, n*inner*bf16+inner*h*bf16, act)
	bIn, bOut := c.Back(gIn), c.Back(gOut)
	before, after, bwdAfter, bwdBefore := c.TPKinds()
	t := c.Run
	fwd = t(k.norm).Plus(c.Pair(gIn, before, act)).Plus(t(k.conv)).Plus(t(k.scan)).Plus(t(k.gated)).Plus(c.Pair(gOut, after, act)).Plus(t(k.resid))
	bwd = t(cost.Twice(k.resid)).Plus(c.Pair(bOut, bwdAfter, act)).Plus(t(bOut)).Plus(t(cost.Twice(k.gated))).Plus(t(k.scanB)).Plus(t(cost.Twice(k.conv))).
		Plus(c.Pair(bIn, bwdBefore, act)).Plus(c.Pair(bIn, before, act)).Plus(t(cost.Twice(k.norm)))
	if c.FP8Fwd > 0 {
		fwd, bwd = fwd.Plus(mechanisms.Casts(&c.Shard, n*h*sp, n*inner)), bwd.Plus(mechanisms.BwdCasts(&c.Shard, n*h*sp, n*inner))
	}
	return fwd, bwd
}
