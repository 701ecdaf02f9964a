package mechanisms

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// LoRA, per block of a dense model, on one GPU of its tensor group:
//   - the base's weight-gradient GEMMs are not run (a frozen weight
//     has no gradient; the data gradient still flows through it): one
//     of each linear layer's two backward GEMMs, a third of its three,
//     and with sequence parallelism the column-parallel layers' input
//     gathered again for them (attnBlock's and mlpBlock's second pair);
//     the output layer's weight gradient likewise;
//   - each targeted linear layer of per-GPU width in x out gets its
//     adapter: A (in x r) then B (r x out), two GEMMs and the add of B's
//     output to the layer's, forward; the backward runs both GEMMs'
//     data and weight gradients (twice each GEMM) and the add's
//     gradient. Under tensor parallelism a column-parallel layer's
//     (qkv, fc1) A is whole on every GPU and its B split like the
//     layer's output; a row-parallel layer's (proj, fc2) A is split like
//     its input and its B whole (Megatron-Bridge's ParallelLinearAdapter,
//     src/megatron/bridge/peft/utils.py, v0.2 to v0.5). The adapters run
//     in BF16 under every fp8= recipe.
//
// The adapters' own tensor-parallel collectives, each on the compute
// stream between the GEMMs it feeds: adapterComm.
//
// Left out, assumptions: a row-parallel adapter's output returned to
// the layer's layout (adapterComm); the
// embedding's weight gradient (a scatter-add, memory-bound, left in);
// the inputs a frozen, untargeted linear layer need not save (kept:
// every linear layer is a target by default). Each adapter's input
// dropout (lora-dropout; Bridge's default is 0.0, none) and the costs of
// TE returning a norm's output to an adapter are adapterInput's.

// LoRA is fine-tuning's low-rank adapters on a frozen base
// (plan/finetune.go), on a plan that trains them: what the code base's
// layer costs lose (the frozen weights' gradients) and gain (the
// adapters); planner wraps the stack's layer costs with it.
type LoRA struct{}

var _ cost.FineTune = LoRA{}

// Name is the mechanism's registered name.
func (LoRA) Name() string { return "lora" }

// When is LoRA's declaration: a plan that trains its adapters.
func (LoRA) When() cost.When { return loraWhen }

var loraWhen = cost.When{cost.Key("peft", "peft=lora", (*plan.Plan).LoRA)}

// Adapters is the adapters of a dense block's targeted linear layers
// for one micro-batch on one GPU of s, forward and backward.
func (LoRA) Adapters(s *cost.Shard) (fwd, bwd cost.Phase) { return lora{s}.loraAdapters() }

// FrozenWeightGrads is the weight-gradient GEMMs of a dense block's
// four linear layers that a frozen base does not run.
func (LoRA) FrozenWeightGrads(s *cost.Shard) cost.Phase { return lora{s}.frozenWeightGrads() }

// OutputWeightGrad is the output layer's weight-gradient GEMM, not run
// on a frozen base.
func (LoRA) OutputWeightGrad(s *cost.Shard) cost.Kernel { return lora{s}.outputWeightGrad() }

// lora is the shard LoRA's kernels are priced on.
type lora struct{ *cost.Shard }

// loraWidths are the per-GPU input and output widths of a dense
// block's four linear layers at c's tensor-parallel degree, in
// plan.LoRATargets' order, and whether each is column-parallel.
func (c lora) loraWidths() (in, out [4]float64, column [4]bool) {
	return transformer.BlockLinearWidths(&c.M, float64(c.Plan.TP))
}

// frozenWeightGrads is the weight-gradient GEMMs of a dense block's
// four linear layers as attnBlock and mlpBlock cost them, for one
// micro-batch on one GPU: the column-parallel layers' with their
// input's gather under sequence parallelism, the row-parallel layers'
// alone.
func (c lora) frozenWeightGrads() cost.Phase { return c.frozenWeightGradsOf(plan.LoRAAll) }

// frozenWeightGradsOf is frozenWeightGrads of the linear layers in set
// (of the four, in plan.LoRATargets' order).
func (c lora) frozenWeightGradsOf(set plan.LoRATargets) cost.Phase {
	n := c.Tokens
	act := n * float64(c.M.Hidden) * cost.BF16
	in, out, column := c.loraWidths()
	before, _, _, _ := c.TPKinds()
	var p cost.Phase
	for i := range in {
		if !set.Has(plan.LoRATargets(1) << i) {
			continue
		}
		g := c.Back(c.LGEMM(2*n*in[i]*out[i], n*in[i]*cost.BF16+in[i]*out[i]*cost.BF16, n*out[i]*cost.BF16))
		if column[i] {
			p = p.Plus(c.Pair(g, before, act)).Plus(c.frozenDgradRS(g, act))
		} else {
			p = p.Plus(c.Run(g))
		}
	}
	return p
}

// frozenDgradRS is what a frozen column-parallel layer's backward
// changes of its data gradient under sequence parallelism with TP
// overlap, as frozenWeightGrads takes it away (the stack's data-gradient
// GEMM with its reduce-scatter overlapped, less the two one after the
// other): Transformer Engine's bulk overlaps of that backward ride on the
// weight gradient, and a frozen weight has none. TE v1.6
// layernorm_linear.py (layernorm_mlp.py alike for fc1): "if
// tp_world_size == 1 or not weight.requires_grad: ctx.ub_bulk_dgrad =
// False" and the same for ub_bulk_wgrad, so the data gradient is
// reduce-scattered by NCCL (reduce_scatter_along_first_dim, async) and,
// with no weight-gradient GEMM to run beside it, waited at once ("if
// (not ctx.ub_bulk_wgrad) and ctx.parallel_mode == 'column' ...
// handle.wait()") before the norm's backward: exposed, its GEMM on every
// SM. Not where the data gradient's reduce-scatter has an overlap of its
// own (ub_overlap_rs_dgrad: tp_comm_overlap_rs_dgrad, off by default and
// in NVIDIA's MLPerf v4.0 LoRA configs, MC_TP_OVERLAP_RS_DGRAD=False;
// placer has no key for it), nor off Megatron-Core's TE layers.
func (c lora) frozenDgradRS(g cost.Kernel, act float64) cost.Phase {
	pl := &c.Plan
	if !pl.SequenceParallel || !pl.TPOverlap || pl.TP <= 1 || c.NoComm || pl.Software.Framework() != plan.FrameworkMegatron {
		return cost.Phase{}
	}
	_, _, _, rs := c.TPKinds()
	ct, _ := c.Pod.Collective(rs, c.TPG, c.TPBytes(rs, act))
	apart := cost.Phase{Busy: g.Time(c.H) + ct, TPAll: ct, TPExposed: ct, Launches: 2}
	return c.Pair(g, rs, act).Plus(cost.Scale(apart, -1))
}

// outputWeightGrad is the output layer's weight-gradient GEMM
// (fusedOutput's logits GEMM, as many FLOPs and bytes).
func (c lora) outputWeightGrad() cost.Kernel {
	T := float64(c.Plan.TP)
	n, h, V := c.Tokens, float64(c.M.Hidden), float64(c.M.Vocab)
	return c.GEMM(2*n*h*V/T, n*h*cost.BF16+h*V/T*cost.BF16, n*V/T*cost.BF16)
}

// loraAdapters is the adapters of a dense block's targeted linear
// layers for one micro-batch on one GPU, forward and backward (their
// layout under tensor parallelism above).
func (c lora) loraAdapters() (fwd, bwd cost.Phase) { return c.loraAdaptersOf(plan.LoRAAll) }

// loraAdaptersOf is loraAdapters of the targeted layers in set.
func (c lora) loraAdaptersOf(set plan.LoRATargets) (fwd, bwd cost.Phase) {
	n, r := c.Tokens, float64(c.Plan.LoRARank)
	// A's input and B's output are the layer's own per-GPU widths
	// (loraWidths): a column-parallel layer's whole input and output
	// shard, a row-parallel layer's input shard and whole output.
	in, out, _ := c.loraWidths()
	for i := range in {
		if !(c.Plan.Targets() & set).Has(plan.LoRATargets(1) << i) {
			continue
		}
		a := c.GEMM(2*n*in[i]*r, n*in[i]*cost.BF16+in[i]*r*cost.BF16, n*r*cost.BF16)
		// B's output: with lora-a2a a row-parallel target's shard of
		// the output's columns (adapterA2A).
		bo := out[i]
		if c.a2a(i) {
			bo /= float64(c.Plan.TP)
		}
		b := c.GEMM(2*n*r*bo, n*r*cost.BF16+r*bo*cost.BF16, n*bo*cost.BF16)
		// The add into the layer's output as the GPU holds it (the
		// scaled output's elements: adapterScale), a row-parallel
		// layer's sequence shard under sequence parallelism (NeMo's
		// mcore_mixins: "output = output + lora_output" after
		// linear_proj's reduce-scatter).
		e := c.adapterScale(i).FLOPs
		add := cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 2 * e * cost.BF16, Writes: e * cost.BF16}
		fwd = fwd.Plus(c.Run(a)).Plus(c.Run(b)).Plus(c.Run(add))
		// Each GEMM's data and weight gradient; the add's gradient is
		// the output's, passed on (no kernel).
		bwd = bwd.Plus(c.Run(a)).Plus(c.Run(a)).Plus(c.Run(b)).Plus(c.Run(b))
		ifwd, ibwd := c.adapterInput(i)
		cfwd, cbwd := c.adapterComm(i)
		afwd, abwd := c.adapterA2A(i)
		scale := c.Run(c.adapterScale(i))
		fwd, bwd = fwd.Plus(ifwd).Plus(cfwd).Plus(afwd).Plus(scale), bwd.Plus(ibwd).Plus(cbwd).Plus(abwd).Plus(scale)
	}
	return fwd, bwd
}

// adapterComm is the tensor-parallel collectives of target i's adapter
// for one micro-batch on one GPU, forward and backward, as
// ParallelLinearAdapter issues them on Megatron-Core's TE layers (NeMo
// r2.0.0.rc0.beta, the NeMo of NVIDIA's MLPerf v4.0 Llama 2 70B LoRA
// submissions as Supermicro's carries it:
// nemo/collections/nlp/modules/common/megatron/adapters/parallel_adapters.py;
// Megatron-Bridge's src/megatron/bridge/peft/utils.py keeps the same
// layers). Each is a collective the next kernel waits on, so exposed
// whole; none with one tensor rank, off Megatron-Core (torchtitan's or
// eager PyTorch's LoRA is not this adapter) or where collectives are
// not costed. The adapter's linear layers run with sequence parallelism
// off ("SP is irrelevant for the lora linear layer"):
//   - a column-parallel target's (qkv, fc1): linear_in is a
//     ColumnParallelLinear of r outputs with gather_output=True (its n x
//     r output all-gathered forward) and linear_out a ColumnParallelLinear
//     whose input gradient is all-reduced backward
//     (copy_to_tensor_model_parallel_region: n x r). Its input, the
//     norm's output: without sequence parallelism whole, and linear_in's
//     input gradient all-reduced backward (n x hidden; linear_in reduces
//     it unless disable_grad_reduce, set to sequence_parallel); with
//     sequence parallelism and TP overlap the GPU's sequence shard,
//     all-gathered forward by the adapter itself
//     (gather_from_sequence_parallel_region, n x hidden) and its gradient
//     reduce-scattered backward; with sequence parallelism and no TP
//     overlap TE returns it gathered (return_layernorm_output_gathered)
//     and reduces its gradient with the layer's: nothing more;
//   - a row-parallel target's (proj, fc2): linear_in is a
//     RowParallelLinear whose n x r output is all-reduced forward, and
//     linear_out's input gradient is all-reduced backward (n x r). Its
//     output's return to the layer's layout is left out: with
//     a2a_experimental (every v4.0 MLPerf LoRA config_common.sh:
//     LORA_A2A=1) an all-to-all of n x hidden/T each way, without it
//     linear_out's output all-gathered (n x hidden) and, with sequence
//     parallelism, its gradient all-gathered again: placer has no key
//     that says which.
//
// All in BF16 (the adapters run in BF16 under every fp8= recipe).
func (c lora) adapterComm(i int) (fwd, bwd cost.Phase) {
	if c.Plan.TP <= 1 || c.NoComm || c.Plan.Software.Framework() != plan.FrameworkMegatron {
		return fwd, bwd
	}
	n, r := c.Tokens, float64(c.Plan.LoRARank)
	in, _, column := c.loraWidths()
	rw := n * r * cost.BF16 // an adapter's n x r activation
	if !column[i] {
		return c.exposed(roofline.AllReduce, rw), c.exposed(roofline.AllReduce, rw)
	}
	fwd, bwd = c.exposed(roofline.AllGather, rw), c.exposed(roofline.AllReduce, rw)
	x := n * in[i] * cost.BF16 // the norm's output, whole
	switch {
	case !c.Plan.SequenceParallel:
		bwd = bwd.Plus(c.exposed(roofline.AllReduce, x))
	case c.Plan.TPOverlap:
		fwd = fwd.Plus(c.exposed(roofline.AllGather, x))
		bwd = bwd.Plus(c.exposed(roofline.ReduceScatter, x))
	}
	return fwd, bwd
}

// a2a is whether target i's adapter returns its output to the sequence
// shard by NeMo's all-to-all (lora-a2a=on): a row-parallel target under
// sequence parallelism with more than one tensor rank, on Megatron-Core
// with collectives costed.
func (c lora) a2a(i int) bool {
	_, _, column := c.loraWidths()
	return c.Plan.LoRAA2A && !column[i] && c.Plan.SequenceParallel && c.Plan.TP > 1 && !c.NoComm &&
		c.Plan.Software.Framework() == plan.FrameworkMegatron
}

// adapterA2A is the return of a row-parallel target i's adapter output
// to the sequence shard with lora-a2a=on, forward and backward, for one
// micro-batch on one GPU, read from NeMo r2.0.0.rc0.beta's
// parallel_adapters.py (the NeMo of NVIDIA's MLPerf v4.0 Llama 2 70B
// LoRA submissions; every config_common.sh sets LORA_A2A=1, which is
// a2a_experimental): with it and sequence parallelism linear_out is a
// ColumnParallelLinear with gather_output=False, so it writes n x
// hidden/T on each GPU (loraAdapters prices B at that width), and
// all2all_hp2sp (_All2AllHp2Sp) sends its T row chunks (input_.chunk(T,
// dim=0), contiguous already) to the tensor ranks with one
// torch.distributed.all_to_all and concatenates what it receives along
// the hidden dimension (torch.cat(dim=-1): one copy, 2 bytes read and 2
// written an element of the n x hidden/T). Backward the gradient (n/T x
// hidden) is cut along the hidden dimension and each piece made
// contiguous (T copies, n x hidden/T elements in all), all-to-all'd the
// same way and concatenated along the sequence (torch.cat(dim=0): a
// copy). The all-to-all is the pod's over the tensor group, n x
// hidden/T BF16 bytes sent by each GPU (its own share kept), and the
// next kernel waits on it: exposed. Without lora-a2a the output's return
// (linear_out's gather and, backward, scatter_to_sequence_parallel_region's
// all-gather) is not priced.
func (c lora) adapterA2A(i int) (fwd, bwd cost.Phase) {
	if !c.a2a(i) {
		return fwd, bwd
	}
	_, out, _ := c.loraWidths()
	e := c.Tokens * out[i] / float64(c.Plan.TP) // the n x hidden/T shard
	t := c.Pod.AllToAll(c.TPG, e*cost.BF16)
	x := cost.Phase{Busy: t, TPAll: t, TPExposed: t, Launches: 1}
	copyOf := func(m float64) cost.Phase {
		return c.Run(cost.Kernel{Class: graph.ClassElementwise, FLOPs: m, Read: m * cost.BF16, Writes: m * cost.BF16})
	}
	T := float64(c.Plan.TP)
	fwd = x.Plus(copyOf(e))
	bwd = x.Plus(cost.Scale(copyOf(e/T), T)).Plus(copyOf(e))
	return fwd, bwd
}

// adapterScale is the scaling of target i's adapter output by alpha /
// r, one kernel forward and its gradient's one backward (NeMo's
// ParallelLinearAdapter.forward: "x = x * (self.alpha / self.dim)", last,
// after any return to the sequence shard; Megatron-Bridge's keeps it):
// a BF16 element read and one written each way, over the output as the
// GPU holds it: a column-parallel target's n x out shard; a row-parallel
// target's whole output, n x hidden, or its sequence shard, n/T x
// hidden, under sequence parallelism with more than one tensor rank.
func (c lora) adapterScale(i int) cost.Kernel {
	_, out, column := c.loraWidths()
	e := c.Tokens * out[i]
	if !column[i] && c.Plan.SequenceParallel && c.Plan.TP > 1 {
		e /= float64(c.Plan.TP)
	}
	return cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: e * cost.BF16, Writes: e * cost.BF16}
}

// exposed is tensor-parallel collective k of bytes in all (an
// all-gather's or reduce-scatter's whole tensor) over the shard's
// tensor group, run where the compute waits on it.
func (c lora) exposed(k roofline.Collective, bytes float64) cost.Phase {
	t, _ := c.Pod.Collective(k, c.TPG, bytes)
	return cost.Phase{Busy: t, TPAll: t, TPExposed: t, Launches: 1}
}

// adapterInput is the memory-bound work around the input of target i's
// adapter, forward and backward, for one micro-batch on one GPU: the
// adapter's input dropout where lora-dropout is above 0, and, for a
// target whose input is a Transformer Engine layer-norm output (qkv,
// fc1), the costs of returning that output to the adapter.
//
// The dropout: NeMo's ParallelLinearAdapter applies it first in its
// forward ("if self.dropout is not None and self.dropout_position ==
// 'pre': x = self.dropout(x)"; NVIDIA's MLPerf v4.0 Llama 2 70B LoRA
// megatron_gpt_peft_tuning_config.yaml: adapter_dropout 0.1,
// dropout_position "pre"). PyTorch's fused dropout kernel reads the
// input (2 bytes an element) and writes its output (2) and its mask (1,
// bool); its backward reads the gradient (2) and the mask (1) and
// writes the input's gradient (2). Under lora-dropout-recompute
// (NeMo's dropout_recompute, thunder.jit(nn.Dropout)) the mask is drawn
// again from the generator's seed and offset inside each kernel: 2
// bytes read and 2 written an element, each way.
//
// The input (adapterInputElems): a row-parallel target's (proj, fc2) is
// its input shard, n x in. A column-parallel target's (qkv, fc1) is the
// norm's output, which Transformer Engine's LayerNormColumnParallelLinear
// returns to it (NeMo's mcore_mixins: "return_layernorm_output = True #
// need layernorm output for lora"): without sequence parallelism whole,
// n x hidden; with it and TP overlap off gathered, n x hidden (TE 1.5's
// return_layernorm_output_gathered, set "unless TP communication overlap
// is used"); with TP overlap the GPU's sequence shard, n/T x hidden, which
// the adapter gathers itself after its dropout (ParallelLinearAdapter:
// gather_from_sequence_parallel_region; that gather is not priced here).
// Read from the NeMo that Supermicro's MLPerf v4.0 Llama 2 70B LoRA
// submission carries (implementations/nemo/NeMo: mcore_mixins.py,
// parallel_adapters.py).
//
// Returning the norm's output costs, under an FP8 recipe, the cast to
// FP8 the norm no longer fuses (TE v1.6 layernorm_linear.py:
// _apply_normalization with fp8 "and not return_layernorm_output", then
// tex.cast_to_fp8 of the output, "this comes at the cost of an extra fp8
// cast": 2 bytes read, 1 written an element of the adapter's input), and
// backward the adapter's gradient of it added into the layer's data
// gradient ("dgrad = dgrad + grad_outputs[1].view_as(dgrad)": 2 + 2
// read, 2 written).
func (c lora) adapterInput(i int) (fwd, bwd cost.Phase) {
	elems, norm := c.adapterInputElems(i)
	k := func(read, write float64) cost.Kernel {
		return cost.Kernel{Class: graph.ClassElementwise, FLOPs: elems, Read: elems * read, Writes: elems * write}
	}
	switch {
	case c.Plan.LoRADropout > 0 && c.Plan.LoRADropoutRecompute:
		// thunder's dropout: the mask drawn in the kernel, forward and
		// backward, never written or read.
		fwd, bwd = fwd.Plus(c.Run(k(cost.BF16, cost.BF16))), bwd.Plus(c.Run(k(cost.BF16, cost.BF16)))
	case c.Plan.LoRADropout > 0:
		fwd, bwd = fwd.Plus(c.Run(k(cost.BF16, cost.BF16+1))), bwd.Plus(c.Run(k(cost.BF16+1, cost.BF16)))
	}
	if norm {
		if c.FP8Fwd > 0 {
			fwd = fwd.Plus(c.Run(k(cost.BF16, 1)))
		}
		bwd = bwd.Plus(c.Run(k(2*cost.BF16, cost.BF16)))
	}
	return fwd, bwd
}

// adapterInputElems is the elements of target i's adapter input on one
// GPU (adapterInput) and whether it is a layer-norm output TE returns.
func (c lora) adapterInputElems(i int) (elems float64, norm bool) {
	in, _, column := c.loraWidths()
	elems = c.Tokens * in[i]
	if !column[i] || c.Plan.Software.Framework() != plan.FrameworkMegatron {
		// A row-parallel target's input shard; off Megatron-Core's TE
		// layers (torchtitan, eager PyTorch, transformers) the norm is
		// its own module, its output the linear layer's whole input.
		return elems, false
	}
	if c.Plan.SequenceParallel && c.Plan.TPOverlap {
		elems /= float64(c.Plan.TP)
	}
	return elems, true
}
