package codebases

import (
	"github.com/placer/placer/planner/cost"
	"math"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/eager"
)

// The cost model's side of the eager stacks: the coster prices the ATen
// ops each eager code base issues (eager.go's op lists) at the plan's
// shard shape, kernel by kernel, with the tensor-parallel collectives
// beside the GEMMs and the host's launches (eagerBlock, eagerMoE,
// EagerOutput), and says how it did (EagerCosting).

// eagerBlock is a dense block under an eager stack (Eager):
// eager.LayerOps of code base code's layer at the coster's shard shape, each op a kernel at its
// class's and dtype's roofline rate (roofline.KernelTime, the op-level
// model's), one launch each (an allocation none); its GEMMs as the fused
// model's (lgemm, back: FP8 where the plan says so) with the same
// tensor-parallel collectives beside them (pair); SDPA as the fused
// model's flash attention (coreAttention: the kernel torch's SDPA
// dispatches to, at the pod's attention rate, context parallelism's ring
// included). rec is what selective recomputation runs again:
// torchtitan's per-op policy (selective_ac_option "op", the save list
// of planner/memory's titanOpSAC), every forward op but SDPA
// and the GEMMs it saves (of wq, wk, wv, wo, w1, w3, w2 every other
// one: wq's, wv's, w1's and w2's outputs kept), so wk's share of the QKV GEMM, wo and w3's half of the
// gate-up GEMM run again, without their collectives (the policy saves
// the reduce-scatters' outputs).
//
// With noMLP (an MoE layer) the list is the attention half's
// (eager.Shape.NoMLP); the experts are eagerMoE's.
func eagerBlock(b cost.Blocks, code eager.CodeBase, noMLP bool) (fwd, bwd, rec phase) {
	c := b.Base()
	m := c.M
	ops := eager.LayerOps(m, eager.Shape{T: c.Plan.TP, SP: c.Plan.SequenceParallel, Batch: c.Plan.MBS, Seq: m.Seq / max(1, c.Plan.CP),
		FP32Weights: c.Plan.Run.FP32Weights, Layer: code, NoMLP: noMLP})
	fa, fb := b.CoreAttention()
	before, after, bwdAfter, bwdBefore := c.TPKinds()
	kinds := [...]roofline.Collective{eager.TPNone: -1, eager.TPBefore: before, eager.TPAfter: after, eager.TPBwdAfter: bwdAfter, eager.TPBwdBefore: bwdBefore}
	act := c.Tokens * float64(m.Hidden) * bf16
	T := float64(c.Plan.TP)
	heads, kv := float64(m.Heads)/T, math.Max(1, float64(m.KVHeads/c.Plan.TP))
	// share is what of each forward GEMM the per-op policy runs again,
	// in order (CodeBase.Recomputed): layers.py's QKV (wk's share),
	// output projection, gate-up (w3's half), down; a layer of separate
	// projections (wq, wk, wv, wo, w1, w3, w2) every other one from the
	// second.
	share := func(i int) float64 { return code.Recomputed(i, heads, kv) }
	gemms := 0
	for _, o := range ops {
		var p, r phase
		switch {
		case o.Launches == 0:
			continue
		case o.Attn && o.Backward:
			p = fb
		case o.Attn:
			p = fa
		case o.Class == graph.ClassMatMul:
			g := c.LGEMM(o.FLOPs, o.Read, o.Written)
			if o.Backward {
				g = c.Back(g)
			} else {
				sh := share(gemms)
				gemms++
				if sh > 0 {
					rg := g
					rg.FLOPs *= sh
					r = c.Run(rg)
				}
			}
			p = c.Pair(g, kinds[o.TP], act)
		default:
			op := graph.Op{Class: o.Class, DType: o.DType, FLOPs: o.FLOPs, BytesRead: int64(o.Read), BytesWritten: int64(o.Written)}
			p = phase{Busy: roofline.KernelTime(c.H, &op), Launches: 1}
			r = p
		}
		if o.Backward {
			bwd = bwd.Plus(p)
		} else {
			fwd, rec = fwd.Plus(p), rec.Plus(r)
		}
	}
	return fwd, bwd, rec
}

// EagerOutput is the output part of an eager stack running code base
// code's layers (Eager): the ops of eager.OutputOps (the
// final norm, the output layer, the loss as the stack's code base runs
// it: at T 1 the FP32 logits' log_softmax and nll_loss; at T > 1
// layers.py's vocabulary-parallel loss, torchtitan's loss_parallel or
// transformers' gathered logits: layerOps.loss), each at its class's
// roofline rate and one launch (allocations none); the GEMMs as
// FusedOutput's, with the tensor-parallel collectives beside them as the
// layers' (pair); the loss's collectives (the max's and the sums'
// all-reduces, transformers' all-gather of the logits) as placer costs
// collectives over the tensor group (Pod.Collective).
func EagerOutput(b cost.Blocks, code eager.CodeBase) (fwd, bwd phase) {
	c := b.Base()
	ops := eager.OutputOps(c.M, eager.Shape{T: c.Plan.TP, SP: c.Plan.SequenceParallel, Batch: c.Plan.MBS, Seq: c.M.Seq / max(1, c.Plan.CP),
		FP32Weights: c.Plan.Run.FP32Weights, Layer: code})
	before, after, bwdAfter, bwdBefore := c.TPKinds()
	kinds := [...]roofline.Collective{eager.TPNone: -1, eager.TPBefore: before, eager.TPAfter: after, eager.TPBwdAfter: bwdAfter, eager.TPBwdBefore: bwdBefore}
	if c.Plan.TP <= 1 {
		kinds = [...]roofline.Collective{-1, -1, -1, -1, -1}
	}
	act := c.Tokens * float64(c.M.Hidden) * bf16
	for _, o := range ops {
		if o.Launches == 0 {
			continue
		}
		var p phase
		switch {
		case o.Comm:
			if c.NoComm {
				continue
			}
			ct, _ := c.Pod.Collective(o.Coll, c.TPG, o.Read)
			p = phase{Busy: ct, TPAll: ct, TPExposed: ct, Launches: 1}
		case o.Class == graph.ClassMatMul:
			g := c.GEMM(o.FLOPs, o.Read, o.Written)
			if k := kinds[o.TP]; k >= 0 {
				p = c.Pair(g, k, act)
			} else {
				p = c.Run(g)
			}
		default:
			op := graph.Op{Class: o.Class, DType: o.DType, FLOPs: o.FLOPs, BytesRead: int64(o.Read), BytesWritten: int64(o.Written)}
			p = phase{Busy: roofline.KernelTime(c.H, &op), Launches: 1}
		}
		if o.Backward {
			bwd = bwd.Plus(p)
		} else {
			fwd = fwd.Plus(p)
		}
	}
	return fwd, bwd
}

// eagerMoE is MoEBlock's experts part under an eager stack
// (Eager): eager.MoEOps of the stack's block impl (with loop,
// torchtitan's for-loop over the experts: eager.MoEShape.Loop) on
// this GPU's tokens (the sequence shard, as
// moe's), the local experts receiving the most loaded rank's copies; each
// op a kernel at its class's roofline rate, one launch each; the GEMMs as
// the fused model's (lgemm, back), torch._grouped_mm's at the grouped
// GEMM's efficiency (Kernels.groupedEff); the dispatch's collectives as
// moe's (dispatchComm) where there is expert parallelism. Host syncs:
// transformers' loop reads two values per expert hit (the sentinel
// compare's branch and torch.where's nonzero) and one for the experts
// hit (eagerMoESyncs). gemms is the forward GEMMs the
// layer's attention half ran before (the per-op policy's count, which
// the router's mm continues: every second mm recomputed, _grouped_mm
// not in torchtitan's save list and so recomputed).
func eagerMoE(b cost.Blocks, impl eager.MoEImpl, loop bool, gemms int) (fwd, bwd, rec phase) {
	c := b.Base()
	m, pl := c.M, c.Plan
	k := float64(m.TopK)
	nl := c.Tokens / float64(pl.TP)
	recv := nl * k * pl.LoadFactor()
	rows := recv * float64(pl.ETP)
	local := max(1, m.Experts/max(1, pl.EP))
	me := m
	me.ExpertFFN = max(1, m.ExpertFFN/max(1, pl.ETP))
	ops := eager.MoEOps(me, eager.MoEShape{Tokens: max(1, int(math.Round(nl))), Copies: rows, Local: local,
		FP32Weights: pl.Run.FP32Weights, Impl: impl, Loop: loop})
	L := float64(local)
	for _, o := range ops {
		if o.Launches == 0 {
			continue
		}
		var p, r phase
		if o.Class == graph.ClassMatMul {
			g := c.LGEMM(o.FLOPs, o.Read, o.Written)
			if o.Type == "_grouped_mm" {
				g.FLOPs /= c.Pod.Kernels.GroupedEff(L, rows/L, float64(me.Hidden))
			}
			if o.Backward {
				g = c.Back(g)
			}
			p = c.Run(g)
			if !o.Backward {
				if o.Type != "mm" || gemms%2 == 1 {
					r = p
				}
				if o.Type == "mm" {
					gemms++
				}
			}
		} else {
			op := graph.Op{Class: o.Class, DType: o.DType, FLOPs: o.FLOPs, BytesRead: int64(o.Read), BytesWritten: int64(o.Written)}
			p = phase{Busy: roofline.KernelTime(c.H, &op), Launches: 1}
			r = p
		}
		if o.Backward {
			bwd = bwd.Plus(p)
		} else {
			fwd, rec = fwd.Plus(p), rec.Plus(r)
		}
	}
	syncs := eager.MoESyncs(impl, local, pl.EP, loop)
	fwd.Syncs += syncs
	rec.Syncs += syncs
	if pl.EP > 1 && !c.NoComm {
		comm := b.DispatchComm(recv, rows, nl)
		fwd, bwd = fwd.Plus(comm), bwd.Plus(comm)
	}
	return fwd, bwd, rec
}
