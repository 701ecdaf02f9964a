package scale

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/scale/cost"
	"github.com/placer/placer/graph"
)

// unfusedAttention is the core attention of one layer, forward and
// backward, for one micro-batch on one GPU, as Kernels.UnfusedAttention
// describes it: the kernels' time (no communication). e is the scores
// this GPU computes: its tokens' queries against the whole sequence's
// keys, for its heads; every score is computed, the masked ones too.
func (c *coster) unfusedAttention() (fwd, bwd float64) {
	m, T := c.M, float64(c.Plan.TP)
	n, s := c.Tokens, float64(m.Seq)
	heads, kv, d := float64(m.Heads)/T, float64(m.KVHeads)/T, float64(m.HeadDim())
	e := n * heads * s
	q := n * heads * d * bf16 // Q, the output, and their gradients
	k := s * kv * d * bf16    // K (and V) for the keys this GPU's queries see
	gemm := 2 * n * s * heads * d
	t := func(class graph.Class, flops, read, write float64) float64 {
		return kernel{Class: class, FLOPs: flops, Read: read, Writes: write}.Time(c.H)
	}
	scoresIn := t(graph.ClassMatMul, gemm, q+k, e*bf16)       // Q K^T
	softmax := t(graph.ClassReduction, 5*e, e*bf16, e*bf16)   // scale, mask, softmax
	dropout := t(graph.ClassElementwise, e, e*bf16, e*bf16+e) // dropped probabilities and the mask
	probsV := t(graph.ClassMatMul, gemm, e*bf16+k, q)         // P V
	fwd = scoresIn + softmax + dropout + probsV
	dP := t(graph.ClassMatMul, gemm, q+k, e*bf16)              // dO V^T
	dV := t(graph.ClassMatMul, gemm, e*bf16+q, k)              // P^T dO
	dDrop := t(graph.ClassElementwise, e, e*bf16+e, e*bf16)    // through the mask
	dSoftmax := t(graph.ClassReduction, 3*e, 2*e*bf16, e*bf16) // with the softmax output
	dQ := t(graph.ClassMatMul, gemm, e*bf16+k, q)              // dS K
	dK := t(graph.ClassMatMul, gemm, e*bf16+q, k)              // dS^T Q
	bwd = dP + dV + dDrop + dSoftmax + dQ + dK
	return fwd, bwd
}

// fusedAttn is one fused attention call on one GPU (cost.FusedAttn).
type fusedAttn = cost.FusedAttn

// overlapped is GEMM g's time beside tensor-parallel collective k of
// bytes over the tensor group, taking ct seconds (tpoverlap=on): its
// time at the SMs the collective leaves it (Transformer Engine's
// userbuffers take OverlapSMs of them and launch the GEMM on the rest
// for its whole run: g's time x SMs / (SMs - OverlapSMs)), or, where
// longer, its bytes at the HBM bandwidth the collective's traffic leaves
// (plan.Pod.Rates), that traffic spread over the longer of the two.
func (c *coster) overlapped(g kernel, k roofline.Collective, bytes, ct float64) float64 {
	kk := c.Pod.Kernels
	gt := g.Time(c.H)
	if kk.SMs <= 0 || kk.OverlapSMs <= 0 || kk.OverlapSMs >= kk.SMs {
		return gt
	}
	traffic := c.Pod.BesideComm(k, c.TPG, bytes, max(ct, gt))
	_, hbm := traffic.Share()
	_, mem := c.Pod.Rates(0, hbm)
	memory := kernel{Class: g.Class, Read: g.Read, Writes: g.Writes}.Time(c.H) - c.H.Launch
	return max(gt*float64(kk.SMs)/float64(kk.SMs-kk.OverlapSMs), c.H.Launch+memory/mem)
}
