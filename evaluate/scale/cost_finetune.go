package scale

import (
	"github.com/placer/placer/evaluate/scale/cost"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
)

// Fine-tuning's costs (plan/finetune.go): LoRA's frozen base and its
// adapters, as layer costs around a stack's (loraLayers), and the
// parameters it trains (stageCost.trained; its state in memory is
// evaluate/scale/memory's loraMemory); packing is the attention's
// causal keys (Plan.PackedKeys, read by coreAttention).
//
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
// every linear layer is a target by default); LoRA's dropout (Bridge's
// default 0.0 in its recipes' LoRA).

// loraLayers are a stack's layer costs with LoRA: the stack's, less the
// base's weight gradients, plus the adapters.
type loraLayers struct{ stack LayerCoster }

func (l loraLayers) Name() string { return l.stack.Name() }

// Dense is the stack's dense block with the weight gradients of its
// four linear layers gone and the adapters of the targeted ones added
// (their forward again in the backward under full recomputation).
func (l loraLayers) Dense(c coster) (fwd, bwd phase) {
	fwd, bwd = l.stack.Dense(c)
	af, ab := c.loraAdapters()
	fwd = fwd.Plus(af)
	bwd = minus(bwd, c.frozenWeightGrads()).Plus(ab)
	if c.Plan.Recompute == plan.FullRecompute {
		bwd = bwd.Plus(af)
	}
	return fwd, bwd
}

// MoE is the stack's: LoRA is refused with experts (plan.FineTuneFits).
func (l loraLayers) MoE(c coster) (fwd, bwd phase) { return l.stack.MoE(c) }

// Embedding is the stack's (its weight gradient left in: above).
func (l loraLayers) Embedding(c coster) (fwd, bwd phase) { return l.stack.Embedding(c) }

// Output is the stack's output layer less its weight-gradient GEMM.
func (l loraLayers) Output(c coster) (fwd, bwd phase) {
	fwd, bwd = l.stack.Output(c)
	return fwd, minus(bwd, c.Run(c.outputWeightGrad()))
}

// minus is phase a less b (b's kernels taken out of a).
func minus(a, b phase) phase { return a.Plus(cost.Scale(b, -1)) }

// loraWidths are the per-GPU input and output widths of a dense
// block's four linear layers at c's tensor-parallel degree, in
// plan.LoRATargets' order, and whether each is column-parallel.
func (c *coster) loraWidths() (in, out [4]float64, column [4]bool) {
	return plan.LoRAWidths(&c.M, float64(c.Plan.TP))
}

// frozenWeightGrads is the weight-gradient GEMMs of a dense block's
// four linear layers as attnBlock and mlpBlock cost them, for one
// micro-batch on one GPU: the column-parallel layers' with their
// input's gather under sequence parallelism, the row-parallel layers'
// alone.
func (c *coster) frozenWeightGrads() phase {
	n := c.Tokens
	act := n * float64(c.M.Hidden) * bf16
	in, out, column := c.loraWidths()
	before, _, _, _ := c.TPKinds()
	var p phase
	for i := range in {
		g := c.Back(c.LGEMM(2*n*in[i]*out[i], n*in[i]*bf16+in[i]*out[i]*bf16, n*out[i]*bf16))
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
func (c *coster) outputWeightGrad() kernel {
	T := float64(c.Plan.TP)
	n, h, V := c.Tokens, float64(c.M.Hidden), float64(c.M.Vocab)
	return c.GEMM(2*n*h*V/T, n*h*bf16+h*V/T*bf16, n*V/T*bf16)
}

// loraAdapters is the adapters of a dense block's targeted linear
// layers for one micro-batch on one GPU, forward and backward (their
// layout under tensor parallelism above).
func (c *coster) loraAdapters() (fwd, bwd phase) {
	n, r := c.Tokens, float64(c.Plan.LoRARank)
	// A's input and B's output are the layer's own per-GPU widths
	// (loraWidths): a column-parallel layer's whole input and output
	// shard, a row-parallel layer's input shard and whole output.
	in, out, _ := c.loraWidths()
	for i := range in {
		if !c.Plan.Targets().Has(plan.LoRATargets(1) << i) {
			continue
		}
		a := c.GEMM(2*n*in[i]*r, n*in[i]*bf16+in[i]*r*bf16, n*r*bf16)
		b := c.GEMM(2*n*r*out[i], n*r*bf16+r*out[i]*bf16, n*out[i]*bf16)
		add := kernel{Class: graph.ClassElementwise, FLOPs: n * out[i], Read: 2 * n * out[i] * bf16, Writes: n * out[i] * bf16}
		fwd = fwd.Plus(c.Run(a)).Plus(c.Run(b)).Plus(c.Run(add))
		// Each GEMM's data and weight gradient; the add's gradient is
		// the output's, passed on (no kernel).
		bwd = bwd.Plus(c.Run(a)).Plus(c.Run(a)).Plus(c.Run(b)).Plus(c.Run(b))
	}
	return fwd, bwd
}

// trained is the parameters of stage st that get gradients and
// optimizer state on one GPU: its adapters' under LoRA, else all.
func (st *stageCost) trained(pl *plan.Plan) float64 {
	if pl.LoRA() {
		return st.Adapters
	}
	return st.Params
}

// stepFLOPs is the FLOPs a step of plan pl runs on model m in
// Megatron's count (transformer.ModelFLOPs: the matmuls, the scores
// over the whole sequence's square, a backward twice the forward),
// fine-tuning's counted as it runs: with packing the scores over each
// sample's square (the sequence s replaced by sum L^2 / sum L over the
// mix), with LoRA the frozen linear layers' and the output layer's
// backward once their forward (the data gradient only) and the
// adapters' three times theirs. Without either, ModelFLOPs.
func stepFLOPs(m *transformer.Spec, pl *plan.Plan) float64 {
	full := m.ModelFLOPs()
	if !pl.LoRA() && !pl.Packed() {
		return full
	}
	tokens := float64(m.Batch) * float64(m.Seq)
	_, scores := m.AttentionFLOPs(float64(m.Seq))
	L := float64(m.Layers)
	linear := full/(3*tokens) - L*scores // a token's forward matmuls but the scores
	if pl.Packed() {
		var sq, sum float64
		for _, l := range pl.PackLens {
			sq += float64(l) * float64(l)
			sum += float64(l)
		}
		scores *= sq / sum / float64(m.Seq)
	}
	if !pl.LoRA() {
		return 3 * tokens * (linear + L*scores)
	}
	adapters := 2 * L * pl.FineTune.AdapterParams(m, 1)
	return tokens * (2*linear + 3*L*scores + 3*adapters)
}
