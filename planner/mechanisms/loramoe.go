package mechanisms

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/plan/adapters"
)

// LoRA on an MoE block (plan/loramoe.go: Megatron-Bridge 067f987's
// PEFT), per micro-batch on one GPU: the attention's adapters and
// frozen weight gradients as a dense block's (AttentionAdapters,
// AttentionFrozenWeightGrads), and the routed experts' shared adapters
// (ExpertAdapters); the experts' own frozen weight gradients are the
// stack's (planner takes them out of its MoE block).

// AttentionAdapters is Adapters of the attention's targets alone
// (linear_qkv, linear_proj), for an MoE block.
func (LoRA) AttentionAdapters(s *cost.Shard) (fwd, bwd cost.Phase) {
	return lora{s}.loraAdaptersOf(plan.LoRAQKV | plan.LoRAProj)
}

// AttentionFrozenWeightGrads is FrozenWeightGrads of the attention's
// two linear layers alone, for an MoE block.
func (LoRA) AttentionFrozenWeightGrads(s *cost.Shard) cost.Phase {
	return lora{s}.frozenWeightGradsOf(plan.LoRAQKV | plan.LoRAProj)
}

// ExpertAdapters is one MoE block's expert adapters for one micro-batch
// on one GPU, forward and backward, where linear_fc1 and linear_fc2 are
// targets: the routed experts' shared adapters over the rows their
// grouped GEMMs run on (rows: the tokens the rank receives, gathered
// over the expert-tensor group) at their expert-tensor widths, and the
// shared experts' over the micro-batch's tokens at their tensor-parallel
// widths (transformer.SharedExpertLinearWidths). Each adapter is two BF16 GEMMs (A:
// in x r, B: r x out), its output scaled by alpha / r and added to the
// layer's, its input dropout where lora-dropout is above 0; backward
// each GEMM's data and weight gradients and the scaling's gradient, as
// a dense block's (loraAdapters).
//
// Collectives (ParallelLinearAdapter with is_expert: its linear layers
// on the expert-tensor group, sequence parallelism's gathers skipped
// for experts): with more than one expert-tensor rank a column-parallel
// target's linear_in gathers its rows x r output forward (gather_output)
// and linear_out's input gradient is all-reduced backward; a
// row-parallel target's linear_in all-reduces its rows x r output
// forward and linear_out's input gradient backward, each exposed as
// adapterComm's. A row-parallel expert adapter's output gathered whole
// (linear_out's gather_output) is left out, as are the shared experts'
// adapters' tensor-parallel collectives. The shared adapters'
// gradients all-reduced over the expert-parallel group each micro-batch
// (Bridge's _allreduce_shared_expert_grad, a hook on each weight: the
// backward waits on it) are expertGradSync.
func (LoRA) ExpertAdapters(s *cost.Shard, rows float64) (fwd, bwd cost.Phase) {
	c := lora{s}
	pl := &c.Plan
	T, ETP := float64(pl.TP), float64(pl.ETP)
	in, out, column := transformer.ExpertLinearWidths(&c.M, ETP)
	sin, sout := transformer.SharedExpertLinearWidths(&c.M, T)
	for i, t := range [2]plan.LoRATargets{plan.LoRAFC1, plan.LoRAFC2} {
		if !pl.Targets().Has(t) {
			continue
		}
		f, b := c.adapterGEMMs(rows, in[i], out[i])
		cf, cb := c.expertAdapterComm(rows, column[i])
		fwd, bwd = fwd.Plus(f).Plus(cf), bwd.Plus(b).Plus(cb)
		if c.M.SharedExperts > 0 {
			f, b = c.adapterGEMMs(c.Tokens, sin[i], sout[i])
			fwd, bwd = fwd.Plus(f), bwd.Plus(b)
		}
	}
	return fwd, bwd.Plus(c.expertGradSync())
}

// adapterGEMMs is one adapter over rows rows of in inputs to out
// outputs, forward and backward: its input dropout (lora-dropout), A
// and B, the scaling by alpha / r and the add into the layer's output;
// backward both GEMMs twice, the scaling's gradient and the dropout's.
func (c lora) adapterGEMMs(rows, in, out float64) (fwd, bwd cost.Phase) {
	r := float64(c.Plan.LoRARank)
	a := c.GEMM(2*rows*in*r, rows*in*cost.BF16+in*r*cost.BF16, rows*r*cost.BF16)
	b := c.GEMM(2*rows*r*out, rows*r*cost.BF16+r*out*cost.BF16, rows*out*cost.BF16)
	e := rows * out
	scale := c.Run(cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: e * cost.BF16, Writes: e * cost.BF16})
	add := cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 2 * e * cost.BF16, Writes: e * cost.BF16}
	fwd = c.Run(a).Plus(c.Run(b)).Plus(scale).Plus(c.Run(add))
	bwd = c.Run(a).Plus(c.Run(a)).Plus(c.Run(b)).Plus(c.Run(b)).Plus(scale)
	if c.Plan.LoRADropout > 0 {
		x := rows * in
		k := func(read, write float64) cost.Kernel {
			return cost.Kernel{Class: graph.ClassElementwise, FLOPs: x, Read: x * read, Writes: x * write}
		}
		fwd, bwd = fwd.Plus(c.Run(k(cost.BF16, cost.BF16+1))), bwd.Plus(c.Run(k(cost.BF16+1, cost.BF16)))
	}
	return fwd, bwd
}

// expertAdapterComm is an expert adapter's collectives over the
// expert-tensor group for rows rows (ExpertAdapters): none with one
// expert-tensor rank, off Megatron-Core or where collectives are not
// costed.
func (c lora) expertAdapterComm(rows float64, column bool) (fwd, bwd cost.Phase) {
	pl := &c.Plan
	if pl.ETP <= 1 || c.NoComm || pl.Software.Framework() != plan.FrameworkMegatron {
		return fwd, bwd
	}
	etpG, _, _ := pl.ExpertGroups(*c.Pod)
	rw := rows * float64(pl.LoRARank) * cost.BF16
	on := func(k roofline.Collective) cost.Phase {
		t, _ := c.Pod.Collective(k, etpG, rw)
		return cost.Phase{Busy: t, TPAll: t, TPExposed: t, Launches: 1}
	}
	if column {
		return on(roofline.AllGather), on(roofline.AllReduce)
	}
	return on(roofline.AllReduce), on(roofline.AllReduce)
}

// expertGradSync is the all-reduce of the routed experts' shared
// adapters' BF16 gradients over the expert-parallel group, one a weight
// each micro-batch's backward (Bridge's _allreduce_shared_expert_grad,
// torch.distributed.all_reduce in a gradient hook: the backward waits),
// priced as one all-reduce of the block's adapter gradients on one GPU
// (plan.FineTune.ExpertAdapterParams' routed part) with a launch for
// each weight, exposed; with one
// expert-parallel rank, no linear_fc1 or linear_fc2 target, or where
// collectives are not costed, none.
func (c lora) expertGradSync() cost.Phase {
	pl := &c.Plan
	routed, _ := adapters.Experts(pl.FineTune, &c.M, pl.TP, pl.ETP)
	if pl.EP <= 1 || routed == 0 || c.NoComm || pl.Software.Framework() != plan.FrameworkMegatron {
		return cost.Phase{}
	}
	_, epG, _ := pl.ExpertGroups(*c.Pod)
	t, _ := c.Pod.Collective(roofline.AllReduce, epG, routed*cost.BF16)
	var weights float64 // A and B of each targeted layer, one all-reduce each
	for _, x := range [2]plan.LoRATargets{plan.LoRAFC1, plan.LoRAFC2} {
		if pl.Targets().Has(x) {
			weights += 2
		}
	}
	return cost.Phase{Busy: t, EPExposed: t, Launches: weights}
}
