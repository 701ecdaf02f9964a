package cost

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/plan"
)

// GEMMComm is a GEMM with a tensor-parallel collective beside it (an
// all-gather or a reduce-scatter with sequence parallelism, an all-reduce
// without). With tpoverlap=on the collective is overlapped with the GEMM
// in T chunks (Megatron-Core's --tp-comm-overlap, which needs sequence
// parallelism): the longer of the two plus a T-th of the shorter.
// Otherwise the two run one after the other.
func (c *Shard) GEMMComm(g Kernel, k roofline.Collective, bytes float64) Phase {
	gt := g.Time(c.H)
	if c.Plan.TP == 1 || c.NoComm {
		return Phase{Busy: gt, Launches: 1}
	}
	ct, _ := c.Pod.Collective(k, c.TPG, bytes)
	if c.Plan.TPOverlap {
		og := c.Overlapped(g, k, bytes, ct)
		busy := max(og, ct) + min(og, ct)/float64(c.Plan.TP)
		return Phase{Busy: busy, TPAll: ct, TPExposed: busy - gt, Launches: 1 + float64(c.Plan.TP)}
	}
	return Phase{Busy: gt + ct, TPAll: ct, TPExposed: ct, Launches: 2}
}

// TPKinds are the tensor-parallel collectives of a block's GEMMs:
// before a column-parallel GEMM (an all-gather with sequence
// parallelism, none without: -1), after a row-parallel one (a
// reduce-scatter, or an all-reduce), and their mirrors in the backward.
func (c *Shard) TPKinds() (before, after, bwdAfter, bwdBefore roofline.Collective) {
	if !c.Plan.SequenceParallel {
		return -1, roofline.AllReduce, -1, roofline.AllReduce
	}
	return roofline.AllGather, roofline.ReduceScatter, roofline.AllGather, roofline.ReduceScatter
}

// Pair is GEMM g with tensor-parallel collective k of bytes (BF16)
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
func (c *Shard) Pair(g Kernel, k roofline.Collective, bytes float64) Phase {
	if k < 0 {
		return Phase{Busy: g.Time(c.H), Launches: 1}
	}
	return c.GEMMComm(g, k, c.TPBytes(k, bytes))
}

// TPBytes is what tensor-parallel collective k of bytes (BF16) carries:
// half of it for an all-gather under per-tensor FP8 (pair).
func (c *Shard) TPBytes(k roofline.Collective, bytes float64) float64 {
	if k == roofline.AllGather && (c.Plan.FP8 == plan.FP8Current || c.Plan.FP8 == plan.FP8Delayed) {
		return bytes / 2
	}
	return bytes
}

// TPCPReduce is an all-reduce of b bytes over the tensor x context
// group (Megatron's tp_cp_group: tensor ranks innermost, then context),
// on the compute stream: nothing with one rank or without collectives.
func (c *Shard) TPCPReduce(b float64) Phase {
	g := c.Plan.TP * max(1, c.Plan.CP)
	if g <= 1 || c.NoComm {
		return Phase{}
	}
	grp := plan.Group{PerNode: g, Nodes: 1}
	if per := c.Pod.PerNode; g > per {
		grp = plan.Group{PerNode: per, Nodes: (g + per - 1) / per}
	}
	ct, _ := c.Pod.Collective(roofline.AllReduce, grp, b)
	return Phase{Busy: ct, TPAll: ct, TPExposed: ct, Launches: 1}
}
