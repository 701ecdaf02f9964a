package cost

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/plan"
)

// Run is Kernel k as a Phase: its time, one launch.
func (c *Shard) Run(k Kernel) Phase { return Phase{Busy: k.Time(c.H), Launches: 1} }

func (c *Shard) GEMM(flops, read, write float64) Kernel {
	return Kernel{Class: graph.ClassMatMul, FLOPs: flops, Read: read, Writes: write}
}

// LGEMM is a forward GEMM of a transformer block: in FP8 with fp8= (the
// BF16 GEMM's time at its shape over the recipe's forward speedup: its
// FLOPs scaled by fp8 at the BF16 rate; its inputs and weights read as
// FP8, one byte; its output BF16), else gemm's.
func (c *Shard) LGEMM(flops, read, write float64) Kernel {
	if c.FP8Fwd > 0 {
		in := read / 2
		if c.Plan.FP8 == plan.FP4NV {
			in = read / 4 // half a byte an element
		}
		return Kernel{Class: graph.ClassMatMul, FLOPs: flops * c.FP8Fwd, Read: in, Writes: write}
	}
	return c.GEMM(flops, read, write)
}

// Back is one of the backward GEMMs (the data or the weight gradient) of
// forward GEMM g (lgemm's): as many FLOPs and bytes, in FP8 at the
// recipe's backward speedup.
func (c *Shard) Back(g Kernel) Kernel {
	if c.FP8Fwd > 0 {
		g.FLOPs *= c.FP8Bwd / c.FP8Fwd
	}
	return g
}

// SP is the share of a sequence-split activation on this GPU: 1/T with
// sequence parallelism, else 1.
func (c *Shard) SP() float64 {
	if c.Plan.SequenceParallel {
		return 1 / float64(c.Plan.TP)
	}
	return 1
}

// Small is n small kernels moving bytes between them (memory-bound), as a
// Phase: each pays its launch.
func (c *Shard) Small(n int, bytes float64) Phase {
	var p Phase
	k := Kernel{Class: graph.ClassElementwise, Read: bytes / float64(2*n), Writes: bytes / float64(2*n)}
	for range n {
		p = p.Plus(c.Run(k))
	}
	return p
}

// RunAll is the kernels ks run one after another, a launch each.
func (c *Shard) RunAll(ks ...Kernel) Phase {
	var p Phase
	for _, k := range ks {
		p = p.Plus(c.Run(k))
	}
	return p
}

// MegatronLayers says the plan's layers are Megatron-Core's (the stack's
// framework): the code read here.
func (c *Shard) MegatronLayers() bool {
	return c.Plan.Software.Framework() == plan.FrameworkMegatron
}

// UnfusedAttention is the core attention of one layer, forward and
// backward, for one micro-batch on one GPU, as Kernels.UnfusedAttention
// describes it: the kernels' time (no communication). e is the scores
// this GPU computes: its tokens' queries against the whole sequence's
// keys, for its heads; every score is computed, the masked ones too.
func (c *Shard) UnfusedAttention() (fwd, bwd float64) {
	m, T := c.M, float64(c.Plan.TP)
	n, s := c.Tokens, float64(m.Seq)
	heads, kv, d := float64(m.Heads)/T, float64(m.KVHeads)/T, float64(m.HeadDim())
	e := n * heads * s
	q := n * heads * d * BF16 // Q, the output, and their gradients
	k := s * kv * d * BF16    // K (and V) for the keys this GPU's queries see
	gemm := 2 * n * s * heads * d
	t := func(class graph.Class, flops, read, write float64) float64 {
		return Kernel{Class: class, FLOPs: flops, Read: read, Writes: write}.Time(c.H)
	}
	scoresIn := t(graph.ClassMatMul, gemm, q+k, e*BF16)       // Q K^T
	softmax := t(graph.ClassReduction, 5*e, e*BF16, e*BF16)   // scale, mask, softmax
	dropout := t(graph.ClassElementwise, e, e*BF16, e*BF16+e) // dropped probabilities and the mask
	probsV := t(graph.ClassMatMul, gemm, e*BF16+k, q)         // P V
	fwd = scoresIn + softmax + dropout + probsV
	dP := t(graph.ClassMatMul, gemm, q+k, e*BF16)              // dO V^T
	dV := t(graph.ClassMatMul, gemm, e*BF16+q, k)              // P^T dO
	dDrop := t(graph.ClassElementwise, e, e*BF16+e, e*BF16)    // through the mask
	dSoftmax := t(graph.ClassReduction, 3*e, 2*e*BF16, e*BF16) // with the softmax output
	dQ := t(graph.ClassMatMul, gemm, e*BF16+k, q)              // dS K
	dK := t(graph.ClassMatMul, gemm, e*BF16+q, k)              // dS^T Q
	bwd = dP + dV + dDrop + dSoftmax + dQ + dK
	return fwd, bwd
}

// Overlapped is GEMM g's time beside tensor-parallel collective k of
// bytes over the tensor group, taking ct seconds (tpoverlap=on): its
// time at the SMs the collective leaves it (Transformer Engine's
// userbuffers take OverlapSMs of them and launch the GEMM on the rest
// for its whole run: g's time x SMs / (SMs - OverlapSMs)), or, where
// longer, its bytes at the HBM bandwidth the collective's traffic leaves
// (plan.Pod.Rates), that traffic spread over the longer of the two.
func (c *Shard) Overlapped(g Kernel, k roofline.Collective, bytes, ct float64) float64 {
	kk := c.Pod.Kernels
	gt := g.Time(c.H)
	if kk.SMs <= 0 || kk.OverlapSMs <= 0 || kk.OverlapSMs >= kk.SMs {
		return gt
	}
	traffic := c.Pod.BesideComm(k, c.TPG, bytes, max(ct, gt))
	_, hbm := traffic.Share()
	_, mem := c.Pod.Rates(0, hbm)
	memory := Kernel{Class: g.Class, Read: g.Read, Writes: g.Writes}.Time(c.H) - c.H.Launch
	return max(gt*float64(kk.SMs)/float64(kk.SMs-kk.OverlapSMs), c.H.Launch+memory/mem)
}
