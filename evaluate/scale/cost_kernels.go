package scale

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/scale/kernels"
	"github.com/placer/placer/graph"
)

// unfusedAttention is the core attention of one layer, forward and
// backward, for one micro-batch on one GPU, as Kernels.UnfusedAttention
// describes it: the kernels' time (no communication). e is the scores
// this GPU computes: its tokens' queries against the whole sequence's
// keys, for its heads; every score is computed, the masked ones too.
func (c *coster) unfusedAttention() (fwd, bwd float64) {
	m, T := c.m, float64(c.pl.TP)
	n, s := c.tokens, float64(m.Seq)
	heads, kv, d := float64(m.Heads)/T, float64(m.KVHeads)/T, float64(m.HeadDim())
	e := n * heads * s
	q := n * heads * d * bf16 // Q, the output, and their gradients
	k := s * kv * d * bf16    // K (and V) for the keys this GPU's queries see
	gemm := 2 * n * s * heads * d
	t := func(class graph.Class, flops, read, write float64) float64 {
		return kernel{class: class, flops: flops, read: read, writes: write}.time(c.h)
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

// fusedAttn is one fused attention call on one GPU: its kernel (FLOPs
// and bytes, what a pod without a measured attention kernel costs at the
// matmul class's efficiency), its query elements (batch x heads x tokens
// x (qk + v head dimensions)), a causal call's last row (tokens x (qk +
// v head dimensions); 0 for a full block) and its query and key head
// dimension: the shape AttentionRate takes.
type fusedAttn struct {
	k           kernel
	elems, tail float64
	headDim     int
}

// attention is the time of fused attention a, forward or backward: the
// pod's measured kernel by shape where it has one and its attention is
// fused, else the matmul class's roofline (a context-parallel ring on a
// pod whose attention is unfused: no kernel was selected for it). The
// measured kernel's rate term (its FLOPs over R(d)) runs at the clock
// the pod's GPUs hold (power.go): its FLOPs taken
// Hardware.ComputeSlowdown's times; its per-element and fixed terms as
// timed.
func (c *coster) attention(a fusedAttn, backward bool) float64 {
	if len(c.pod.Kernels.Attention) == 0 || c.pod.Kernels.UnfusedAttention {
		return a.k.time(c.h)
	}
	k := c.pod.Kernels.Attention[0]
	r := &k.Fwd
	if backward {
		r = &k.Bwd
	}
	flops := a.k.flops
	if s := c.h.ComputeSlowdown; s > 0 {
		flops *= s
	}
	return r.Time(kernels.AttentionCall{Flops: flops, Elems: a.elems, Tail: a.tail, HeadDim: a.headDim})
}

// overlapped is GEMM g's time beside tensor-parallel collective k of
// bytes over the tensor group, taking ct seconds (tpoverlap=on): its
// time at the SMs the collective leaves it (Transformer Engine's
// userbuffers take OverlapSMs of them and launch the GEMM on the rest
// for its whole run: g's time x SMs / (SMs - OverlapSMs)), or, where
// longer, its bytes at the HBM bandwidth the collective's traffic leaves
// (plan.Pod.Rates), that traffic spread over the longer of the two.
func (c *coster) overlapped(g kernel, k roofline.Collective, bytes, ct float64) float64 {
	kk := c.pod.Kernels
	gt := g.time(c.h)
	if kk.SMs <= 0 || kk.OverlapSMs <= 0 || kk.OverlapSMs >= kk.SMs {
		return gt
	}
	traffic := c.pod.BesideComm(k, c.tpG, bytes, max(ct, gt))
	_, hbm := traffic.Share()
	_, mem := c.pod.Rates(0, hbm)
	memory := kernel{class: g.class, read: g.read, writes: g.writes}.time(c.h) - c.h.Launch
	return max(gt*float64(kk.SMs)/float64(kk.SMs-kk.OverlapSMs), c.h.Launch+memory/mem)
}
