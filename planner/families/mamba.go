package families

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/mechanisms"
)

// Mamba is the Mamba-2 mixer of a hybrid model's Mamba blocks
// (transformer.Spec.Pattern: Nemotron-H), as Megatron-Core's MambaStack
// builds it: SSMBlock (the cost.SSMBlock extension point), one block for one micro-batch on one GPU, which the
// coster's hybrid layer weighs by the pattern's Mamba blocks.
type Mamba struct{}

// Name is the family's registered name.
func (Mamba) Name() string { return "mamba" }

// When is the family's declaration: a hybrid model with Mamba blocks.
func (Mamba) When() cost.When { return mambaWhen }

var mambaWhen = cost.When{cost.Model("mamba layers", func(m *transformer.Spec) bool {
	nm, _, _ := m.Kinds()
	return m.Hybrid() && nm > 0
})}

// SSMBlock is one Mamba-2 block on shard s, forward, backward and what
// recomputation runs again (mambaBlock's).
func (Mamba) SSMBlock(s *cost.Shard) (fwd, bwd, rec cost.Phase) { return recurrent{s}.mambaBlock() }

// recurrent is the shard a recurrent mixer's kernels are priced on.
type recurrent struct{ *cost.Shard }

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
func (c recurrent) mambaBlock() (fwd, bwd, rec cost.Phase) {
	m, T := c.M, float64(c.Plan.TP)
	n, h := c.Tokens, float64(m.Hidden)
	s := m.SSM
	sp := c.SP()
	act := n * h * cost.BF16
	in := float64(s.InProj()) / T
	di := float64(s.Inner()) / T
	xbc := di + 2*float64(s.Groups*s.State)/T // x, B and C: the convolution's channels
	heads := float64(s.Heads) / T
	norm := cost.Kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h * sp, Read: act * sp, Writes: act * sp}
	resid := cost.Kernel{Class: graph.ClassElementwise, FLOPs: 3 * n * h * sp, Read: 2 * act * sp, Writes: 1.5 * act * sp}
	conv := cost.Kernel{Class: graph.ClassElementwise, FLOPs: (2*float64(s.Conv) + 4) * n * xbc, Read: n * xbc * cost.BF16, Writes: n * xbc * cost.BF16}
	ssdFlops := n * m.SSDFLOPs() / T
	ssd := cost.Kernel{Class: graph.ClassMatMul, FLOPs: ssdFlops, Read: n * (xbc + heads) * cost.BF16, Writes: n * di * cost.BF16}
	states := 2 * float64(s.State*s.HeadDim) * heads * n
	ssdB := cost.Kernel{Class: graph.ClassMatMul, FLOPs: 2*ssdFlops + states, Read: n * (2*xbc + heads + 2*di) * cost.BF16, Writes: n * (xbc + heads) * cost.BF16}
	gated := cost.Kernel{Class: graph.ClassReduction, FLOPs: 10 * n * di, Read: 2 * n * di * cost.BF16, Writes: n * di * cost.BF16}
	fwd, bwd = c.recurrentBlock(n, h, in, di, sp, act, recurrentKernels{norm, conv, ssd, ssdB, gated, resid})
	return fwd, bwd, rec
}

// recurrentKernels are the kernels of a recurrent mixer's block (Mamba-2's
// or Gated DeltaNet's) between its two projections: the norm, the causal
// convolution, the scan forward and backward, the gated norm and the
// residual add.
type recurrentKernels struct{ norm, conv, scan, scanB, gated, resid cost.Kernel }

// recurrentBlock is a recurrent mixer's block for n tokens of hidden h:
// the norm, the input projection to in features (its tensor-parallel
// collective before it), the convolution, the scan, the gated norm, the
// output projection from inner features (its collective after), the
// residual; the backward in reverse, each elementwise kernel twice, the
// input projection's collective both ways; FP8's casts where the plan
// runs FP8. act is the bytes of the block's input activation; sp the
// sequence-parallel share of the tokens.
func (c recurrent) recurrentBlock(n, h, in, inner, sp, act float64, k recurrentKernels) (fwd, bwd cost.Phase) {
	gIn := c.LGEMM(2*n*h*in, act+h*in*cost.BF16, n*in*cost.BF16)
	gOut := c.LGEMM(2*n*inner*h, n*inner*cost.BF16+inner*h*cost.BF16, act)
	bIn, bOut := c.Back(gIn), c.Back(gOut)
	before, after, bwdAfter, bwdBefore := c.TPKinds()
	t := c.Run
	fwd = t(k.norm).Plus(c.Pair(gIn, before, act)).Plus(t(k.conv)).Plus(t(k.scan)).Plus(t(k.gated)).Plus(c.Pair(gOut, after, act)).Plus(t(k.resid))
	bwd = t(cost.Twice(k.resid)).Plus(c.Pair(bOut, bwdAfter, act)).Plus(t(bOut)).Plus(t(cost.Twice(k.gated))).Plus(t(k.scanB)).Plus(t(cost.Twice(k.conv))).
		Plus(c.Pair(bIn, bwdBefore, act)).Plus(c.Pair(bIn, before, act)).Plus(t(cost.Twice(k.norm)))
	if c.FP8Fwd > 0 {
		fwd, bwd = fwd.Plus(mechanisms.Casts(c.Shard, n*h*sp, n*inner)), bwd.Plus(mechanisms.BwdCasts(c.Shard, n*h*sp, n*inner))
	}
	return fwd, bwd
}
