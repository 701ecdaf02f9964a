package memory

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// recipeBlock is a dense block's saved activations (blockUnits' attn,
// mlp and replicated, in units of s b h bytes, in: a GEMM's saved input
// bytes) as the plan's recipe keeps them on a Megatron-Core stack with
// Transformer Engine's layers (plan.MemoryRecipe, the LoRA keys), and
// beside them what recipeUnits holds: the units every GPU of the
// tensor group holds whole, and those CPU offload leaves on the GPU
// (offloadedActs). Where the plan sets none of these, or the block is
// not a dense one of standard attention on such a stack, it returns its
// inputs (and kept the block's attention and MLP: offload is modelled
// for those blocks alone).
//
//   - fp8-dpa: TE's FP8 attention saves Q, K, V and its output in FP8
//     (FusedAttnFunc, TransformerEngine v1.6 attention.py: q_fp8, k_fp8,
//     v_fp8, out_fp8 saved, the BF16 ones not): one byte an element
//     where blockUnits counts two. Its softmax statistics, like the
//     BF16 path's log-sum-exp, are not counted (under 0.1 of a unit).
//   - fp8-activation: the MLP activation's input, FC1's output, stored
//     in FP8 (Megatron-Core's activation_func_fp8_input_store): one byte
//     an element (SwiGLU's 2 f/h elements, GeLU's f/h).
//   - LoRA's frozen base: a Transformer Engine linear whose weight does
//     not require a gradient saves no input for the weight gradient
//     (TransformerEngine v1.6 linear.py _Linear.forward: "if
//     weight.requires_grad: ... saved_inputmat = inputmat", else None;
//     layernorm_linear.py: "ln_out if weight.requires_grad else None";
//     TE 2.x the same, backward_needs_input): QKV's and FC1's inputs,
//     FC2's input and the output projection's FP8 copy of its input
//     are not kept. Each adapter keeps its own input instead (NeMo's
//     and Megatron-Bridge's ParallelLinearAdapter: the lora linear
//     runs without sequence parallelism, "model_parallel_config.
//     sequence_parallel = False # SP is irrelevant for the lora linear
//     layer"): a column-parallel target's (QKV, FC1) input is the norm's
//     output gathered along the sequence (gather_from_sequence_parallel_
//     region before linear_in, or Transformer Engine's gathered norm
//     output under TP overlap), BF16, whole on every GPU; a row-parallel
//     target's (the output projection, FC2) this GPU's shard of the
//     attention's or the activation's output, BF16: the attention's is
//     the tensor the BF16 attention saves already (not under fp8-dpa,
//     which saves its FP8 copy), the activation's is kept by the adapter
//     alone. With lora-dropout the adapter's input dropout
//     (dropout_position "pre", applied before the gather: "if
//     self.dropout is not None and self.dropout_position == 'pre': x =
//     self.dropout(x)" comes first in ParallelLinearAdapter.forward)
//     keeps its mask (one byte an element of the input as this GPU
//     holds it), and a row-parallel target's linear_in the dropout's
//     output (two) where the attention's or activation's output was;
//     under lora-dropout-recompute (thunder's dropout) no mask.
//     The adapters' A outputs are loraActivations'.
func (c *counter) recipeBlock(attn, mlp, replicated, in float64) (a, p, rep float64, rb recipeUnits) {
	m, pl := &c.m, &c.pl
	a, p, rep = attn, mlp, replicated
	if m.MoE() || c.attention != nil || m.Hybrid() || m.Mixed() || pl.Titan() || pl.Run.Eager {
		rb.kept = a + p
		return a, p, rep, rb
	}
	h, f := float64(m.Hidden), float64(m.FFN)
	heads, kv := float64(m.Heads), float64(m.KVHeads)
	qkv, out := 2*(heads+2*kv)/heads, 2.0 // the attention's saved Q, K, V and output (blockUnits')
	qd := h                               // the attention's output width
	if m.Head > 0 {
		d := float64(m.HeadDim())
		qkv, out, qd = 2*(heads+2*kv)*d/h, 2*heads*d/h, heads*d
	}
	if pl.FP8DPA {
		a -= (qkv + out) / 2
	}
	act := 2 * f / h // the activation's input, BF16 (SwiGLU's two halves: 4 f/h)
	if m.SwiGLU() {
		act = 4 * f / h
	}
	if pl.FP8Activation {
		p -= act / 2
		act /= 2
	}
	mask := 0.0 // blockUnits' dropout masks (the attention's, a GeLU MLP's)
	if !c.dropoutFree() {
		mask = 1
		if !m.SwiGLU() && m.Act != "relu2" {
			mask = 2
		}
	}
	rb.kept, rb.masks = act, mask
	if !pl.LoRA() {
		return a, p, rep, rb
	}
	// The frozen linears' saved inputs.
	a -= in
	if pl.FP8 != "" {
		a -= in * projFP8Input(m, c.attention != nil)
	}
	p -= in + in*f/h
	rep -= 2 * in
	// The adapters' inputs.
	drop := pl.LoRADropout > 0
	// The dropout's mask, one byte an element where it is kept: none
	// under lora-dropout-recompute (thunder's dropout draws it again in
	// the backward).
	dmask := 0.0
	if drop && !pl.LoRADropoutRecompute {
		dmask = 1
	}
	t := pl.Targets()
	var shard float64
	for i, col := range []plan.LoRATargets{plan.LoRAQKV, plan.LoRAFC1} {
		if !t.Has(col) {
			continue
		}
		rb.whole += 2
		if dmask > 0 {
			// The mask, of the norm's output as this GPU holds it
			// (its sequence shard, or whole without sequence
			// parallelism: counted like a norm's input).
			if i == 0 {
				a++
			} else {
				p++
			}
			rep++
			rb.masks++
		}
	}
	if t.Has(plan.LoRAProj) {
		switch {
		case drop:
			shard += (2 + dmask) * qd / h
		case pl.FP8DPA:
			shard += 2 * qd / h
		}
	}
	if t.Has(plan.LoRAFC2) {
		shard += (2 + dmask) * f / h
	}
	a += shard
	rb.kept += shard
	return a, p, rep, rb
}

// recipeUnits is what recipeBlock says of a block beside its units, in
// units of s b h bytes: whole, the units every GPU of the tensor group
// holds whole; kept, the units split over the group that CPU offload
// leaves on the GPU, and masks, the dropout masks it leaves (split
// like the norms: over the group with sequence parallelism, else whole).
type recipeUnits struct{ whole, kept, masks float64 }

// offloadedActs is stage s's activations in flight under CPU offload
// (offload-layers=N: Megatron-Core's cpu_offloading with
// cpu_offloading_num_layers N, which it allows only without a pipeline
// and without recomputation, so one micro-batch is in flight), bytes:
// Transformer Engine's AsyncDoubleBufferGroupOffloadHandler
// (TransformerEngine v1.6 cpu_offload.py, get_cpu_offload_context,
// num_offload_group N, a group a layer) copies to the host the tensors
// TE's modules mark (activation_offloading: the norms' inputs, the
// linears' saved inputs, the attention's Q, K, V and output) of the
// first N layers, and reloads each into one of two buffers it allocates
// once and keeps (tensor_id_to_tensor_buf_double_bufs, "ping-pong":
// one a layer where N is 1); what other code saves (Megatron-Core's
// activation function's input, the dropout masks, LoRA's adapters:
// layerMemory's kept) stays on the GPU. perLayer is a layer's
// activations, kept its part that stays, layers the stage's.
func offloadedActs(pl *plan.Plan, layers, perLayer, kept float64) float64 {
	n := min(float64(pl.OffloadLayers), layers)
	marked := max(perLayer-kept, 0)
	return (layers-n)*perLayer + n*kept + min(n, 2)*marked
}

// graphBuffers is what Transformer Engine's per-layer CUDA graphs
// (graph-pool=layers, plan/recipe.go) keep on stage s's GPUs for their
// lifetime, bytes: a graph for each of the stage's layers (every model
// chunk's) and each of the step's micro-batches, each keeping its sample
// input, its static output, its static output gradient and its static
// input gradient (TransformerEngine v1.6 graph.py
// _make_graphed_callables: per_callable_static_outputs,
// static_grad_outputs = torch.empty_like(o), per_callable_static_grad_inputs;
// the sample inputs NeMo's capture makes), four hidden states of a
// micro-batch, this GPU's sequence shard under sequence parallelism.
func (c *counter) graphBuffers(s int) float64 {
	pl := &c.pl
	if pl.GraphPool != plan.GraphPoolLayers {
		return 0
	}
	hidden := 2 * c.tokens * float64(c.m.Hidden) * c.sp()
	return float64(pl.Stages[s]) * float64(pl.NumMicro) * 4 * hidden
}

// transposeInFlight is what FP8 primary weights' transposes hold on one
// GPU under fp8-transpose-cache=off, bytes: each is made for its GEMM in
// the backward and freed after it (TE v1.6 _Linear.backward,
// weight.transpose_2d(cache=False)), so one at a time, the block's
// largest linear's (one byte an element, this GPU's shard: transformer.BlockLinearWidths'
// per-GPU widths).
func (c *counter) transposeInFlight() float64 {
	in, out, _ := transformer.BlockLinearWidths(&c.m, float64(c.pl.TP))
	var most float64
	for i := range in {
		most = max(most, in[i]*out[i])
	}
	return most
}
