package mechanisms

import (
	"github.com/placer/placer/evaluate/scale/cost"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph"
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
// Left out, assumptions: the r-wide all-reduce of a row-parallel
// adapter's A output and the gathers of a column-parallel one (n x r
// elements, under 1/100 of the layer's own collectives at r <= 64); the
// embedding's weight gradient (a scatter-add, memory-bound, left in);
// the inputs a frozen, untargeted linear layer need not save (kept:
// every linear layer is a target by default). With lora-dropout each
// adapter's input dropout is priced too (loraDropout; Bridge's default
// is 0.0, none).

// LoRA is fine-tuning's low-rank adapters on a frozen base
// (plan/finetune.go), on a plan that trains them: what the code base's
// layer costs lose (the frozen weights' gradients) and gain (the
// adapters); evaluate/scale wraps the stack's layer costs with it.
type LoRA struct{}

var _ cost.FineTune = LoRA{}

// Name is the mechanism's registered name.
func (LoRA) Name() string { return "lora" }

// Prices is whether s's plan trains LoRA's adapters.
func (LoRA) Prices(s *cost.Shard) bool { return s.Plan.LoRA() }

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
	return plan.LoRAWidths(&c.M, float64(c.Plan.TP))
}

// frozenWeightGrads is the weight-gradient GEMMs of a dense block's
// four linear layers as attnBlock and mlpBlock cost them, for one
// micro-batch on one GPU: the column-parallel layers' with their
// input's gather under sequence parallelism, the row-parallel layers'
// alone.
func (c lora) frozenWeightGrads() cost.Phase {
	n := c.Tokens
	act := n * float64(c.M.Hidden) * cost.BF16
	in, out, column := c.loraWidths()
	before, _, _, _ := c.TPKinds()
	var p cost.Phase
	for i := range in {
		g := c.Back(c.LGEMM(2*n*in[i]*out[i], n*in[i]*cost.BF16+in[i]*out[i]*cost.BF16, n*out[i]*cost.BF16))
		if column[i] {
			p = p.Plus(c.Pair(g, before, act))
		} else {
			p = p.Plus(c.Run(g))
		}
	}
	return p
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
func (c lora) loraAdapters() (fwd, bwd cost.Phase) {
	n, r := c.Tokens, float64(c.Plan.LoRARank)
	// A's input and B's output are the layer's own per-GPU widths
	// (loraWidths): a column-parallel layer's whole input and output
	// shard, a row-parallel layer's input shard and whole output.
	in, out, _ := c.loraWidths()
	for i := range in {
		if !c.Plan.Targets().Has(plan.LoRATargets(1) << i) {
			continue
		}
		a := c.GEMM(2*n*in[i]*r, n*in[i]*cost.BF16+in[i]*r*cost.BF16, n*r*cost.BF16)
		b := c.GEMM(2*n*r*out[i], n*r*cost.BF16+r*out[i]*cost.BF16, n*out[i]*cost.BF16)
		add := cost.Kernel{Class: graph.ClassElementwise, FLOPs: n * out[i], Read: 2 * n * out[i] * cost.BF16, Writes: n * out[i] * cost.BF16}
		fwd = fwd.Plus(c.Run(a)).Plus(c.Run(b)).Plus(c.Run(add))
		// Each GEMM's data and weight gradient; the add's gradient is
		// the output's, passed on (no kernel).
		bwd = bwd.Plus(c.Run(a)).Plus(c.Run(a)).Plus(c.Run(b)).Plus(c.Run(b))
		if c.Plan.LoRADropout > 0 {
			df, db := c.loraDropout(i)
			fwd, bwd = fwd.Plus(c.Run(df)), bwd.Plus(c.Run(db))
		}
	}
	return fwd, bwd
}

// loraDropout is the dropout on the input of target i's adapter
// (lora-dropout above 0), forward and backward, for one micro-batch on
// one GPU: NeMo's ParallelLinearAdapter applies it first in its forward
// ("if self.dropout is not None and self.dropout_position == 'pre': x =
// self.dropout(x)"; NVIDIA's MLPerf v4.0 Llama 2 70B LoRA
// megatron_gpt_peft_tuning_config.yaml: adapter_dropout 0.1,
// dropout_position "pre"), on the input as this GPU holds it, before the
// adapter's gather (memory/recipe.go reads it so for the mask it keeps):
// a column-parallel target's (qkv, fc1) norm output, its sequence shard
// of the n tokens under sequence parallelism (whole without), a
// row-parallel target's (proj, fc2) input shard, n x in. PyTorch's fused
// dropout kernel reads the input (2 bytes an element) and writes its
// output (2) and its mask (1, bool); its backward reads the gradient
// (2) and the mask (1) and writes the input's gradient (2).
func (c lora) loraDropout(i int) (fwd, bwd cost.Kernel) {
	in, _, column := c.loraWidths()
	elems := c.Tokens * in[i]
	if column[i] && c.Plan.SequenceParallel {
		elems /= float64(c.Plan.TP)
	}
	fwd = cost.Kernel{Class: graph.ClassElementwise, FLOPs: elems, Read: elems * cost.BF16, Writes: elems * (cost.BF16 + 1)}
	bwd = cost.Kernel{Class: graph.ClassElementwise, FLOPs: elems, Read: elems * (cost.BF16 + 1), Writes: elems * cost.BF16}
	return fwd, bwd
}
