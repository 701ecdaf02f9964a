package memory

import (
	"github.com/placer/placer/planner/plan"
)

// stageActivations is stage s's activations in flight and, on the last
// stage, its logits and the loss's (the output layer's and the
// multi-token-prediction modules'), bytes, at c's tensor-parallel
// degree (stageMemory's); lm is c's layerMemory.
func (c *counter) stageActivations(s int, st *Stage, lm *layerMem) (acts, logits float64) {
	return c.stageActivationsAt(s, st, lm, inflight(&c.pl, s))
}

// stageActivationsAt is stageActivations with inflight micro-batches in
// flight (the allocator's trace reads what one micro-batch adds).
func (c *counter) stageActivationsAt(s int, st *Stage, lm *layerMem, inflight float64) (acts, logits float64) {
	m, pl := &c.m, &c.pl
	T := float64(pl.TP)
	n, kv := c.tokens, float64(m.KVHeads)
	unit := n * float64(m.Hidden) // s b h
	perLayer, perDense, wholeBlock, layerInput := lm.perLayer, lm.perDense, lm.wholeBlock, lm.layerInput
	perDevice := float64(pl.Stages[s])
	// A model with experts' dense blocks before them (denseOn's, in st):
	// the stage's dense layers and how many of them recompute.
	dn := st.Dense
	dense, drec := float64(dn), float64(st.DenseRecomputed)
	if pl.Recompute == plan.FullRecompute {
		// The recomputing layers keep their input; the others (block
		// recomputation) all they save; one layer's worth while one
		// recomputes.
		kk := pl.Recomputed(s)
		mrec := min(max(kk-drec, 0), perDevice-dense)
		keep := (perDevice-dense-mrec)*perLayer + (dense-drec)*perDense
		most := perLayer
		if dn == pl.Stages[s] {
			most = perDense
		} else if dn > 0 {
			most = max(perLayer, perDense)
		}
		acts = inflight*(kk*layerInput+keep) + most
	} else if pl.OffloadLayers > 0 && dn == 0 {
		acts = inflight * offloadedActs(pl, perDevice, perLayer, lm.kept) // recipe.go
	} else {
		acts = inflight*chunkShare(pl, s)*((perDevice-dense)*perLayer+dense*perDense) + lm.recomputing
	}
	if s == 0 && !c.dropoutFree() {
		// The embedding's output and its dropout's mask (3 units). Without
		// a hidden dropout (dropoutFree) neither is a tensor of its own:
		// the embedding's output is the first block's input, which its
		// norm keeps (layerMemory's norms' inputs; the embedding's
		// backward reads the token ids alone), and no mask is made.
		acts += inflight * 3 * unit / T
	}
	if s == pl.PP-1 {
		// An encoder's logits are its masked positions' (OutputTokens).
		logits = m.OutputTokens(n) * float64(m.Vocab) / T * c.lossBytes()
		acts += c.outputProjSaved() // outputproj.go: an MXFP8 output layer's saved copies
		last := inflight
		if pl.Titan() {
			logits = n * float64(m.Vocab) / T * (titanLossBytes(pl) + titanOutputChunks(pl)*bf16)
			// The output layer is the last model chunk's, which runs each
			// micro-batch's backward right after its forward:
			// interleaved, the last stage's chunks in flight (inflight)
			// are all but one its earlier chunks'.
			if pl.VP > 1 {
				last = min(inflight, 1)
			}
			acts += last * c.titanOutputInputs()
		}
		if pm := c.prediction; pm != nil {
			// Each prediction module, for the micro-batches in flight
			// on the last stage: what it keeps with its block's (kept,
			// not recomputed: Prediction.ModuleActivations), and its own
			// logits as the output layer's.
			x := pm.ModuleCount(*m)
			acts += x * last * pm.ModuleActivations(pl.FP8, unit, c.sp(), wholeBlock)
			logits += x * n * float64(m.Vocab) / T * c.lossBytes()
		}
	}
	switch {
	case pl.CP > 1 && pl.Titan():
		// torch's context parallelism as torchtitan runs it
		// (experimental.context_parallel_rotate_method "allgather", the
		// default at 9dec370: the key and value shards all-gathered
		// after the first sub-attention): every rank's keys and values
		// at once while one layer's attention runs, at every head
		// (repeat_kv precedes the attention: titanBlockExtra).
		acts += 2 * float64(pl.CP) * n * float64(m.Heads) / T * float64(m.HeadDim()) * bf16
	case pl.CP > 1 && pl.Run.CPRing == plan.CPRingQKVOA2A:
		// Transformer Engine's a2a (mechanisms.Ring's qkvoA2A): while one
		// layer's attention runs, the whole sequence's Q, K and V for
		// heads/cp of the heads, as many elements as the rank's own
		// Q, K and V, which the call's inputs still hold
		// (flash_attn_a2a_communicate's outputs are new tensors,
		// torch.empty_like); backward, dQ, dK and dV likewise.
		acts += n * (float64(m.Heads) + 2*kv) / T * float64(m.HeadDim()) * bf16
	case pl.CP > 1:
		// The context ring's buffers while one layer's attention runs:
		// the K and V chunk received and, in the backward, the chunk
		// sent on and a gradient chunk in flight (three chunks of this
		// GPU's K and V).
		acts += 3 * n * 2 * kv / T * float64(m.HeadDim()) * bf16
	}
	if pl.PP > 1 && pl.Titan() {
		acts += c.titanStageBuffers(s, inflight)
	}
	acts += inflight * c.titanFP8Weights(st)
	acts += c.graphBuffers(s) // recipe.go: held whatever is in flight
	return acts, logits
}

// lossBytes is what the loss holds a logit on the last stage: the BF16
// logits, their FP32 copy and its gradient under Megatron-Core's unfused
// cross-entropy (tensor_parallel/cross_entropy.py: the logits cast to
// FP32, the softmax kept for the backward); the BF16 logits alone under
// Transformer Engine's fused one (loss-fusion=on: TransformerEngine v2.12
// transformer_engine/pytorch/cross_entropy.py CrossEntropyFunction saves
// its input, into which triton/cross_entropy.py's kernel has written the
// gradient in place).
func (c *counter) lossBytes() float64 {
	if c.pl.Run.FusedLoss {
		return bf16
	}
	return bf16 + 4 + 4
}

// titanFP8Weights is the float8 weight casts one micro-batch in flight
// keeps for its backward on one GPU under torchtitan's Float8, bytes:
// torchao's Float8Linear (pytorch/ao at eab345c, the benchmarks'
// torchao; float8/float8_linear.py) casts its weight to float8 in the
// forward and its matmul saves the cast transpose for the backward
// (manual_float8_matmul_with_args_in_float8:
// ctx.save_for_backward(input_fp8, weight_fp8_t)), unless
// force_recompute_fp8_weight_in_bwd, which torchtitan's float8.py at
// 9dec370 leaves False: one byte a block parameter (every block's
// linear; the output layer torchtitan leaves out; the blocks' norms and
// biases, which are not cast, counted too: under 0.2% of a block). Under
// activation checkpointing, full or per-op, the checkpoint drops it
// with the block's other saved tensors and the recomputation casts it
// again (the cast's ops are not in the per-op policy's save list):
// none held. Not with experts (their weights are not nn.Linear's).
func (c *counter) titanFP8Weights(st *Stage) float64 {
	pl := &c.pl
	if !pl.Titan() || !plan.KeepsFP8Weights(pl.FP8) || pl.Recompute != plan.NoRecompute || c.m.MoE() {
		return 0
	}
	return st.Layers
}

// titanOutputInputs is what torchtitan's last stage keeps for the
// output layer's backward, bytes for one micro-batch on one GPU: the
// final norm's input (sequence-parallel: norm is SequenceParallel in
// apply_tp) and the output layer's input, which its
// ColwiseParallel(input_layouts Shard(1)) all-gathers: whole on every
// GPU (parallelize_llama.py at 9dec370; the output layer is left out of
// Float8).
func (c *counter) titanOutputInputs() float64 {
	unit := c.tokens * float64(c.m.Hidden)
	return 2*unit*c.sp() + 2*unit
}

// titanStageBuffers is what torch's PipelineStage allocates for stage s
// beyond the activations of its micro-batches in flight (inflight),
// bytes on one GPU: its buffers for every micro-batch of the step, made
// before the first (torch/distributed/pipelining/stage.py
// _prepare_forward_infra and _prepare_backward_infra, _make_tensor_from_meta
// for each chunk), for each of the rank's V model chunks (each a
// PipelineStage of its own): the activation each chunk but the model's
// first receives (those of the chunks in flight are their first layer's
// inputs, counted already) and the gradient each chunk but the model's
// last receives; and the output of each chunk in flight but the last
// one's, which forward_one_chunk keeps in its forward cache (fwd_cache)
// until the chunk's backward (no block of the stage saves its last
// block's output under full checkpointing). The chunks in flight,
// inflight V, are counted evenly over the rank's chunks. Each is one
// stage boundary's tensor, sequence-parallel where the blocks are
// (torchtitan's blocks end in a row-parallel reduce-scatter to
// Shard(1)).
func (c *counter) titanStageBuffers(s int, inflight float64) float64 {
	pl := &c.pl
	boundary := 2 * c.tokens * float64(c.m.Hidden) * c.sp()
	M, V := float64(pl.NumMicro), float64(max(pl.VP, 1))
	units := inflight * V // model chunks in flight, each 1/V of the stage
	receiving, sending := V, V
	if s == 0 {
		receiving-- // the model's first chunk takes the tokens
	}
	if s == pl.PP-1 {
		sending-- // the model's last chunk ends in the loss
	}
	recv := max(receiving*M-units*receiving/V, 0)
	return (recv + sending*M + units*sending/V) * boundary
}

// titanLossBytes is the bytes a logit (one token, one entry of this
// GPU's share of the vocabulary) takes at the peak of torchtitan's loss
// (pytorch/torchtitan train.py at 9dec370: loss_fn is cross_entropy of
// pred.float(), eager: "compiling loss function causes CUDA errors,
// turning off for now"), the largest of its forward and its backward:
//   - one GPU's whole vocabulary (no tensor parallelism): aten's
//     log_softmax saves its FP32 output; at its backward the gradient
//     nll_loss_backward hands it and the one it computes, FP32 each:
//     4 + 4 + 4 (the forward: the BF16 logits, their FP32 copy and the
//     log softmax's output, 2 + 4 + 4, is less). Without a pipeline
//     the train step deletes the BF16 logits before the backward ("del
//     pred ... need to free to before bwd to avoid peaking memory");
//   - loss parallel (torchtitan's default with TP: parallelize_llama.py
//     apply_tp, output ColwiseParallel to Shard(-1) and
//     training.disable_loss_parallel false): torch's
//     distributed/tensor/parallel/loss.py computes the backward of
//     nll_loss and log_softmax at once, (grad_input + torch.exp(x)) *
//     grad_output over the saved FP32 log softmax x: x, grad_input,
//     exp(x) and their sum, 4 bytes each, 16;
//   - under a pipeline torch's PipelineStage keeps the last stage's
//     output, the BF16 logits, in its forward cache until the
//     micro-batch's backward has run (stage.py backward_one_chunk): 2
//     bytes more.
func titanLossBytes(pl *plan.Plan) float64 {
	b := 4.0 + 4 + 4
	if pl.TP > 1 {
		b = 4 + 4 + 4 + 4
	}
	if pl.PP > 1 {
		b += bf16
	}
	return b
}

// titanOutputChunks is the last stage's outputs, the BF16 logits of one
// micro-batch each, that torch's pipelining holds beside the one whose
// backward runs (titanLossBytes' forward cache), at the step's last
// backward: PipelineStage.forward_one_chunk appends every micro-batch's
// output to output_chunks (torch/distributed/pipelining/stage.py, torch
// 2.5 and 2.6: "Prepare for final output merge or reduction"), which
// the schedule merges when the step ends (schedules.py
// PipelineScheduleSingle.step and PipelineScheduleMulti.step:
// _merge_outputs of output_chunks on the last stage) and
// clear_runtime_states empties at the next step's start; the forward
// cache lets go of its reference after the backward, output_chunks does
// not. M - 1 of them under a pipeline, none without.
func titanOutputChunks(pl *plan.Plan) float64 {
	if pl.PP <= 1 {
		return 0
	}
	return float64(pl.NumMicro - 1)
}
