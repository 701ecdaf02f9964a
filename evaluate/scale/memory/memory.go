package memory

import (
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph/transformer"
)

// stageMem is one GPU's memory of one pipeline stage by part, bytes
// (stageMemory's).
type stageMem struct{ weights, fp8, grads, opt, acts, logits float64 }

func (sm stageMem) total() float64 {
	return sm.weights + sm.fp8 + sm.grads + sm.opt + sm.acts + sm.logits
}

// layerMemory is what stageMemory's stages of one tensor-parallel degree
// share, bytes for one micro-batch: one layer's activations (a block's
// of the model's kind, and in a model with experts a dense block's
// before them), the multi-token-prediction module's block's, and the
// input a recomputing layer keeps; under torchtitan's per-op
// checkpointing, what one block's recomputed forward holds.
type layerMemory struct{ perLayer, perDense, mtpBlock, layerInput, recomputing float64 }

// layerMemory is c's layerMemory (stageMemory's), computed once for all
// the stages of its degree.
func (c *counter) layerMemory() layerMemory {
	if c.m.Hybrid() {
		return c.hybridMemory() // mixers.go
	}
	if c.m.Mixed() {
		return c.mixerMemory() // mixers.go
	}
	m, pl := &c.m, &c.pl
	T := float64(pl.T)
	n, h := c.tokens, float64(m.Hidden)
	heads := float64(m.Heads)
	unit := n * h // s b h
	attn, mlp, replicated := blockUnits(m, pl.FP8 != "")
	if pl.FP8 != "" && !pl.Titan() && !pl.Run.Eager {
		attn += projFP8Input(m)
	}
	norms := 2 * float64(m.NormsPerBlock()) // the norms' inputs: two, or Gemma's four
	perLayer := (norms + attn + mlp) * unit
	perDense := perLayer // a dense block's in a model with experts
	switch {
	case m.MoE():
		// Attention as a dense block's (sequence-parallel where T > 1:
		// Resolve requires it); the experts' on this GPU's tokens
		// (moeActivations). Its dense blocks before the experts, all of
		// their activations sequence-parallel likewise.
		perLayer = (norms+attn)*unit/T + c.moeActivations()
		perDense /= T
	case pl.SequenceParallel:
		perLayer /= T
	case pl.T > 1:
		perLayer = replicated*unit + (norms+attn+mlp-replicated)*unit/T
	}
	if pl.Titan() && !m.MoE() {
		perLayer += c.titanBlockExtra()
		perDense = perLayer
	}
	mtpBlock := perLayer // the multi-token-prediction module's block: not recomputed
	mods := pl.Recomputes()
	if mods.Has(plan.RecomputeCoreAttn) {
		// The attention output, recomputed.
		out := 2 * unit / T
		if m.MLA() {
			out = 2 * heads * float64(m.HeadDim()) / h * unit / T
		}
		perLayer -= out
		perDense -= out
	} else if c.pod.Kernels.UnfusedAttention && pl.C <= 1 && !pl.Titan() {
		// Unfused attention's softmax output, dropout mask and dropout
		// output, 5 bytes a score (Korthikanti's 5 a s / h). Not under
		// torchtitan, whose attention is scaled_dot_product_attention
		// (models/llama/model.py), flash attention on A100 and H100
		// alike: a pod's unfused kernels stand for its time only.
		perLayer += 5 * n * heads / T * float64(m.Seq)
		perDense += 5 * n * heads / T * float64(m.Seq)
	}
	if mods&^plan.RecomputeCoreAttn != 0 {
		// The other modules selective recomputation names.
		perLayer -= c.recomputeSaved(m.MoE())
		perDense -= c.recomputeSaved(false)
	}
	var recomputing float64
	if pl.Titan() && pl.Recompute == plan.SelectiveRecompute && !m.MoE() {
		// One block's forward recomputed before its backward holds
		// what the block keeps without recomputation.
		recomputing = perLayer
		perLayer = c.titanOpSAC()
		perDense = perLayer
	}
	layerInput := 2 * unit
	if pl.SequenceParallel {
		layerInput /= T
	}
	return layerMemory{perLayer: perLayer, perDense: perDense, mtpBlock: mtpBlock, layerInput: layerInput, recomputing: recomputing}
}

// titanBlockExtra is what a torchtitan block keeps for its backward
// beyond layerMemory's Megatron-Core count, bytes for one micro-batch
// on one GPU
// (pytorch/torchtitan at 9dec370):
//   - with sequence parallelism, its attention's and its MLP's inputs
//     whole: apply_tp (parallelize_llama.py) gives attention and
//     feed_forward PrepareModuleInput(input_layouts Shard(1),
//     desired_input_layouts Replicate()), so the norms' outputs are
//     all-gathered before wq, wk, wv and w1, w3, which save the
//     gathered tensor (Megatron-Core saves the sequence-parallel shard
//     and gathers it again in the backward). 2 units each, 1 with
//     Float8 (Float8ColwiseParallel casts to float8 before the
//     all-gather, and the float8 matmul saves its float8 input);
//   - with fewer key/value heads than heads, the keys and values
//     scaled_dot_product_attention saves at every head: Attention.forward
//     (models/llama/model.py) calls repeat_kv on them before it, a
//     copy of heads/kv_heads times the projections' outputs.
func (c *counter) titanBlockExtra() float64 {
	m, pl := &c.m, &c.pl
	T := float64(pl.T)
	unit := c.tokens * float64(m.Hidden)
	var extra float64
	if pl.T > 1 && pl.SequenceParallel {
		in := 2.0 + 2 // the attention's and the MLP's gathered inputs
		if pl.FP8 != "" {
			in = 1 + 1
		}
		extra += in * unit * (1 - 1/T)
	}
	if kv, heads := float64(m.KVHeads), float64(m.Heads); kv > 0 && kv < heads {
		d, h := float64(m.HeadDim()), float64(m.Hidden)
		extra += 2 * 2 * (heads - kv) * d / h * unit / T
	}
	return extra
}

// titanOpSAC is one block's activations under torchtitan's selective
// per-op checkpointing (selective_ac_option "op"; pytorch/torchtitan
// torchtitan/parallelisms/parallelize_llama.py at 9dec370: _save_list
// and _get_custom_policy), bytes for one micro-batch on one GPU: the
// checkpoint keeps the block's input, and the policy the outputs of the
// flash attention (its output, BF16, and its log-sum-exp, FP32 a head
// and token), of the reduce-scatters (sequence parallelism's, one after
// the attention and one after the MLP) and of every other matmul of
// the block, counted in its order: wq, wk, wv, wo, w1, w3, w2 (the 1st,
// 3rd, 5th and 7th kept: wq's, wv's, w1's and w2's outputs, each on
// this GPU's shard; w2's row-parallel output whole before its
// reduction). Float8Linear's matmul is aten.mm too (the policy sees it
// before torchao's subclass dispatches it), so Float8 counts alike.
// The rest is recomputed.
func (c *counter) titanOpSAC() float64 {
	m, pl := &c.m, &c.pl
	T := float64(pl.T)
	h, f := float64(m.Hidden), float64(m.FFN)
	heads, kv, d := float64(m.Heads), float64(m.KVHeads), float64(m.HeadDim())
	units := 2*c.sp() + // the block's input
		2*heads*d/h/T + 2*kv*d/h/T + // wq's and wv's outputs
		2*heads*d/h/T + 4*heads/h/T + // the attention's output and log-sum-exp
		2*f/h/T + 2 // w1's output, w2's
	if pl.T > 1 && pl.SequenceParallel {
		units += 2 * 2 / T // the two reduce-scatters' outputs
	}
	return units * c.tokens * h
}

// recomputeSaved is the bytes of one block's activations (an MoE
// block's with moe, else a dense block's) that selective
// recomputation's modules other than the core attention free, for one
// micro-batch on one GPU (layerMemory's): layernorm the output of the
// norms that are modules of their own (an MoE block's norm before its
// experts: the experts' input; latent attention's input norm: the down
// projections' input, FP8 where they run in FP8); mla_up_proj every
// head's query, key and value (flash attention's saved inputs); mlp a
// dense MLP's saved tensors but the dropout mask (FC1's input, the
// activation's input, FC2's input; its checkpoint keeps the block's
// residual, counted as the norm's input); moe everything moeActivations
// counts but the experts' input; moe_act FC2's input (the activation's
// output); shared_experts the shared experts'. Held while one layer
// recomputes: not counted (a few of its tensors, not the stage's).
func (c *counter) recomputeSaved(moe bool) float64 {
	m, pl := &c.m, &c.pl
	mods := pl.Recomputes()
	T := float64(pl.T)
	unit := c.tokens * float64(m.Hidden) // s b h
	fp8 := pl.FP8 != ""
	// rep units replicated over the tensor group without sequence
	// parallelism, shard units split over it.
	split := func(rep, shard float64) float64 {
		if pl.SequenceParallel {
			return (rep + shard) * unit / T
		}
		return rep*unit + shard*unit/T
	}
	var saved float64
	if mods.Has(plan.RecomputeLayerNorm) && m.MLA() {
		in := 2.0
		if fp8 {
			in = 1
		}
		saved += split(in, 0)
	}
	if mods.Has(plan.RecomputeMLAUpProj) && m.MLA() {
		d, r, h := float64(m.HeadDim()), float64(m.RopeDim), float64(m.Hidden)
		saved += split(0, 2*float64(m.Heads)*(2*(d+r)+d)/h)
	}
	if moe {
		a, input, mid, shared := c.moeActivationParts()
		if mods.Has(plan.RecomputeLayerNorm) {
			saved += input
		}
		switch {
		case mods.Has(plan.RecomputeMoE):
			saved += a - input // its checkpoint keeps the input
		default:
			if mods.Has(plan.RecomputeMoEAct) {
				saved += mid
			}
			if mods.Has(plan.RecomputeSharedExperts) {
				saved += shared
			}
		}
		return saved
	}
	if mods.Has(plan.RecomputeMLP) {
		_, mlp, _ := blockUnits(m, fp8)
		fc1In, mask := 2.0, 1.0 // FC1's input (FP8: one byte), the dropout mask (SwiGLU's block has none)
		if fp8 {
			fc1In = 1
		}
		if m.SwiGLU() || m.Act == "relu2" {
			mask = 0
		}
		saved += split(fc1In, mlp-mask-fc1In)
	}
	return saved
}

// blockUnits is what one block keeps for its backward in units of s b h
// bytes (layerMemory's), before any split over the tensor group: its
// attention's, its MLP's, and of both what stays replicated over the
// tensor group without sequence parallelism; fp8 where the blocks'
// GEMMs run in FP8.
func blockUnits(m *transformer.Spec, fp8 bool) (attn, mlp, replicated float64) {
	h, f := float64(m.Hidden), float64(m.FFN)
	heads, kv := float64(m.Heads), float64(m.KVHeads)
	// Per layer, in units of s b h bytes (Korthikanti's 34 for GPT):
	// layer norm inputs 4, attention: its input 2, Q K V, its output 2,
	// dropout mask 1; MLP: its input 2, the activation's input and the
	// second GEMM's input (2 f/h each; SwiGLU 4 f/h and 2 f/h), mask 1.
	attn = 2 + 2*(heads+2*kv)/heads + 2 + 1
	if m.Head > 0 {
		d := float64(m.HeadDim())
		attn = 2 + 2*(heads+2*kv)*d/h + 2*heads*d/h + 1
	}
	lat := 0.0 // latent attention's latents (replicated over the tensor group without sp)
	if m.MLA() {
		// Latent attention, as Megatron-Core's MLASelfAttention keeps it
		// (evaluate/scale's mlaBlock): the down projections' input 2;
		// the query's latent before and after its norm (the norm's
		// input, the up projection's), 4 QLoRA/h; the keys' and values' latent with the
		// rotary key (the down projection's output, the norm's input) and
		// the normed latent (the up projection's input), 2 (KVLoRA +
		// RopeDim)/h + 2 KVLoRA/h; every head's Q and K of Head + RopeDim
		// and V of Head as flash attention saves them (the up
		// projections' outputs are not kept: the rotary embedding and
		// the concatenation need no input for their backward), the
		// output 2 heads Head/h, mask 1.
		d, r := float64(m.HeadDim()), float64(m.RopeDim)
		ql, kl := float64(m.QLoRA), float64(m.KVLoRA)
		lat = (4*ql + 2*(kl+r) + 2*kl) / h
		attn = 2 + lat + 2*heads*(2*(d+r)+d)/h + 2*heads*d/h + 1
	}
	mlp = 2 + 4*f/h + 1
	switch {
	case m.SwiGLU():
		mlp = 2 + 6*f/h
	case m.Act == "relu2":
		mlp = 2 + 4*f/h // Nemotron's squared ReLU: GeLU's, without a dropout mask
	}
	// The norms' inputs (2 units each: Gemma's post-norms too), the two
	// column-parallel inputs, masks, latents.
	replicated = 2*float64(m.NormsPerBlock()) + 2 + 2 + 2 + lat
	if fp8 {
		// Transformer Engine keeps the FP8 copies of the GEMMs' inputs
		// for their weight gradients, one byte an element: QKV's and
		// FC1's inputs (1 unit each, not 2) and FC2's (f/h, not 2 f/h);
		// the attention's output stays BF16 (flash attention's backward
		// reads it).
		attn--
		mlp -= 1 + f/h
		replicated -= 2
		if m.MLA() {
			// The up projections' normed latents in FP8 too.
			fp8Lat := (float64(m.QLoRA) + float64(m.KVLoRA)) / h
			attn -= fp8Lat
			replicated -= fp8Lat
		}
	}
	return attn, mlp, replicated
}

// projFP8Input is the FP8 copy of the attention's output that
// Transformer Engine's Linear saves for the output projection's weight
// gradient, in units of s b h bytes (split over the tensor group like
// the output): one byte an element, beside the BF16 output flash
// attention saves for its own backward (blockUnits'). TransformerEngine
// v2.8 transformer_engine/pytorch/module/linear.py _Linear.forward:
// under FP8 the input is quantized (input_quantizer, column-wise usage
// where backward_needs_input), its row-wise data discarded
// (update_usage(rowwise_usage=False, columnwise_usage=True)) and the
// quantized tensor saved (saved_inputmat = inputmat; prepare_for_saving).
// Megatron-Core's attention hands linear_proj the attention's BF16
// output (TE's DotProductAttention without fp8_dpa), so the cast is a
// tensor of its own. QKV's and FC1's inputs (LayerNormLinear: ln_out,
// saved quantized, layernorm_linear.py) and FC2's (blockUnits) are the
// only copies of theirs.
func projFP8Input(m *transformer.Spec) float64 {
	if m.Head > 0 || m.MLA() {
		return float64(m.Heads) * float64(m.HeadDim()) / float64(m.Hidden)
	}
	return 1
}

// stageMemory is stage s's memory by part on one of its GPUs, bytes, at
// c's tensor-parallel degree; lm is c's layerMemory.
func (c *counter) stageMemory(s int, st *Stage, lm *layerMemory) stageMem {
	var sm stageMem
	sm.acts, sm.logits = c.stageActivations(s, st, lm)
	sm.weights, sm.fp8, sm.grads, sm.opt = c.stageState(s, st)
	return c.loraMemory(s, st, sm)
}

// stageActivations is stage s's activations in flight and, on the last
// stage, its logits and the loss's (the output layer's and the
// multi-token-prediction modules'), bytes, at c's tensor-parallel
// degree (stageMemory's); lm is c's layerMemory.
func (c *counter) stageActivations(s int, st *Stage, lm *layerMemory) (acts, logits float64) {
	return c.stageActivationsAt(s, st, lm, inflight(&c.pl, s))
}

// stageActivationsAt is stageActivations with inflight micro-batches in
// flight (the allocator's trace reads what one micro-batch adds).
func (c *counter) stageActivationsAt(s int, st *Stage, lm *layerMemory, inflight float64) (acts, logits float64) {
	m, pl := &c.m, &c.pl
	T := float64(pl.T)
	n, kv := c.tokens, float64(m.KVHeads)
	unit := n * float64(m.Hidden) // s b h
	perLayer, perDense, mtpBlock, layerInput := lm.perLayer, lm.perDense, lm.mtpBlock, lm.layerInput
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
	} else {
		acts = inflight*chunkShare(pl, s)*((perDevice-dense)*perLayer+dense*perDense) + lm.recomputing
	}
	if s == 0 {
		acts += inflight * 3 * unit / T
	}
	if s == pl.P-1 {
		logits = n * float64(m.Vocab) / T * c.lossBytes()
		last := inflight
		if pl.Titan() {
			logits = n * float64(m.Vocab) / T * (titanLossBytes(pl) + titanOutputChunks(pl)*bf16)
			// The output layer is the last model chunk's, which runs each
			// micro-batch's backward right after its forward:
			// interleaved, the last stage's chunks in flight (inflight)
			// are all but one its earlier chunks'.
			if pl.V > 1 {
				last = min(inflight, 1)
			}
			acts += last * c.titanOutputInputs()
		}
		if m.MTP > 0 {
			// Each multi-token-prediction module, for the
			// micro-batches in flight on the last stage: the two norms'
			// inputs and the projection's input (2 + 2 + 4 units, the
			// latter 2 in FP8; sequence-parallel), its block's (kept, not
			// recomputed), and its own logits as the output layer's.
			proj := 4.0
			if pl.FP8 != "" {
				proj = 2
			}
			acts += float64(m.MTP) * last * ((2+2+proj)*unit*c.sp() + mtpBlock)
			logits += float64(m.MTP) * n * float64(m.Vocab) / T * c.lossBytes()
		}
	}
	switch {
	case pl.C > 1 && pl.Titan():
		// torch's context parallelism as torchtitan runs it
		// (experimental.context_parallel_rotate_method "allgather", the
		// default at 9dec370: the key and value shards all-gathered
		// after the first sub-attention): every rank's keys and values
		// at once while one layer's attention runs, at every head
		// (repeat_kv precedes the attention: titanBlockExtra).
		acts += 2 * float64(pl.C) * n * float64(m.Heads) / T * float64(m.HeadDim()) * bf16
	case pl.C > 1:
		// The context ring's buffers while one layer's attention runs:
		// the K and V chunk received and, in the backward, the chunk
		// sent on and a gradient chunk in flight (three chunks of this
		// GPU's K and V).
		acts += 3 * n * 2 * kv / T * float64(m.HeadDim()) * bf16
	}
	if pl.P > 1 && pl.Titan() {
		acts += c.titanStageBuffers(s, inflight)
	}
	acts += inflight * c.titanFP8Weights(st)
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
	if !pl.Titan() || pl.FP8 == "" || pl.Recompute != plan.NoRecompute || c.m.MoE() {
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
	M, V := float64(pl.M), float64(max(pl.V, 1))
	units := inflight * V // model chunks in flight, each 1/V of the stage
	receiving, sending := V, V
	if s == 0 {
		receiving-- // the model's first chunk takes the tokens
	}
	if s == pl.P-1 {
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
	if pl.T > 1 {
		b = 4 + 4 + 4 + 4
	}
	if pl.P > 1 {
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
	if pl.P <= 1 {
		return 0
	}
	return float64(pl.M - 1)
}

// inflight is the micro-batches whose activations stage s holds at
// its peak (stageMemory's): with 1F1B P - s of them at most M;
// interleaved the warm-up's model chunks and the one it runs, each 1/V
// of the stage, (P-s-1)2 + (V-1)P + 1 chunks capped at the step's M V
// (Megatron-Core's schedules.py forward_backward_pipelining_with_interleaving:
// num_warmup_microbatches = (P - rank - 1) 2 + (V - 1)
// microbatch_group_size_per_vp_stage, P by default, at most
// total_num_microbatches; torch's ScheduleInterleaved1F1B the same,
// warmup_ops = (n_local_stages - 1) microbatches_per_round +
// 2 (pp_group_size - 1 - rank)): on the first stage 1 + (P-1)/(P V)
// times P, and with M = P, as torchtitan runs by default, every chunk
// of the step, M micro-batches of the whole stage; on the last
// (V-1)P + 1 chunks, not one micro-batch. Past the first stage this is
// torchtitan's count only: Megatron-Core's stages past the first keep
// 1F1B's P - s, as before, because with its warm-up the published
// Qwen3-235B-A22B plan of the model zoo (TP2 EP8 PP32 VPP3, which ran
// on H100s) is told over memory on its second stage: its MoE
// activations are over-counted elsewhere, and this count waits for
// them. With GPipe all M; with the experts' all-to-alls overlapped one
// model chunk more.
func inflight(pl *plan.Plan, s int) float64 {
	inflight := float64(min(pl.M, pl.P-s))
	if V := pl.V; V > 1 && (s == 0 || pl.Titan()) {
		chunks := min((pl.P-s-1)*2+(V-1)*pl.P+1, pl.M*V)
		inflight = float64(chunks) / float64(V)
	}
	if pl.P > 1 && pl.Sched() == decision.GPipe {
		inflight = float64(pl.M)
	}
	if pl.EPOverlap && pl.M > 1 {
		// A merged pair runs the next forward before the backward before
		// it has freed its activations: one model chunk more.
		inflight += 1 / float64(pl.V)
	}
	return inflight
}

// chunkShare is the share of stage s's layer activations in flight
// that Megatron-Core's interleaved schedule holds where stage 0's model
// chunks are uneven, against inflight's even count: the embedding counted
// as a layer of its first chunk (embedding-layer=on), or a first stage
// whose blocks do not split evenly over V (first=), leaves its first
// chunk one block fewer (Plan.ChunkLayers: the smaller chunks first), and
// that chunk runs more micro-batches ahead than the others.
// Megatron-Core's schedule (core_v0.16.0 pipeline_parallel/schedules.py
// forward_backward_pipelining_with_interleaving) runs stage 0's
// forwards in groups of microbatch_group_size_per_vp_stage (P by
// default) micro-batches a chunk, chunk 0 to V-1, and holds (P - 1) x 2
// + (V - 1) x P + 1 chunk forwards at the first backward (inflight's
// count): 2P - 1 of chunk 0 and P of each other. Llama 3.1 405B on PP 16
// x VP 4 (stage 0: the embedding and 7 blocks, chunks of 1, 2, 2, 2):
// 31 x 1 + 3 x 16 x 2 = 127 blocks' activations, not 79 / 4 x 7 =
// 138.25. 1 with even chunks, on the stages past the first (inflight
// counts them whole), without interleaving, under torchtitan's schedules
// and with fewer micro-batches than a group. Applied to the layers'
// activations where they are kept whole (no full recomputation, whose
// layers keep their input alone).
func chunkShare(pl *plan.Plan, s int) float64 {
	if s != 0 || pl.V <= 1 || pl.Titan() || pl.Sched() == decision.GPipe || pl.M < pl.P || pl.Stages[0] <= 0 {
		return 1
	}
	uneven := false
	for v := 1; v < pl.V; v++ {
		uneven = uneven || pl.ChunkLayers(0, v) != pl.ChunkLayers(0, 0)
	}
	if !uneven {
		return 1
	}
	chunks := min((pl.P-1)*2+(pl.V-1)*pl.P+1, pl.M*pl.V)
	var held float64
	for k := range chunks {
		held += float64(pl.ChunkLayers(0, k%(pl.P*pl.V)/pl.P))
	}
	return held / (float64(chunks) / float64(pl.V) * float64(pl.Stages[0]))
}

// stageState is stage s's weights, FP8 weight copies, gradients and
// optimizer state, bytes, on one of its GPUs (stageMemory's).
func (c *counter) stageState(s int, st *Stage) (w, fp8, g, o float64) {
	m, pl := &c.m, &c.pl
	if pl.FSDP && pl.Titan() {
		w, g, o = c.fsdp2State(s, st)
		return w, 0, g, o
	}
	if pl.Run.Eager && !pl.Titan() && !pl.FSDP && !pl.DistOpt && pl.FP8 == "" {
		return c.eagerState(st)
	}
	gb := pl.GradBytes()
	w = st.Params * bf16
	g = st.Params * gb
	o = st.Params * 12
	if pl.DistOpt {
		o /= float64(pl.D * pl.C) // sharded over the data-parallel and context ranks
		if m.MoE() {
			o = (st.Params-st.Experts)*12/float64(pl.D*pl.C) + st.Experts*12/float64(pl.EDP)
		}
	}
	if pl.FP8 != "" {
		fp8 = lowPrecisionCopyBytes(pl.FP8) * st.Layers // the blocks' FP8 weights, row- and column-wise
		switch {
		case bridgeFP8Params(pl) && !pl.FSDP:
			// FP8 primary weights: the blocks' weights are FP8 (one
			// byte) with their transpose (one byte), no BF16 copy.
			w -= st.Layers * (bf16 - 1)
			fp8 = st.Layers
		case bridgeBlockParams(pl) && !pl.FSDP:
			// Block-scaled primary weights: the blocks' weights are
			// their rowwise and columnwise copies alone.
			w -= st.Layers * bf16
		}
	}
	if pl.FSDP {
		// Sharded over the C x D ranks (a model with experts: its
		// experts' over the expert-data-parallel ones), but for two
		// layers' weights gathered (the one running and the next,
		// prefetched: Megatron-FSDP's unit is a layer) and one layer's
		// gradient before its reduce-scatter.
		D := float64(pl.D * pl.C)
		var layer float64
		if l := pl.Stages[s]; l > 0 {
			layer = st.Layers / float64(l)
		}
		if m.MoE() {
			E := float64(pl.EDP)
			dense := st.Params - st.Experts
			w = dense*bf16/D + st.Experts*bf16/E
			if pl.FP8 != "" {
				fp8 = lowPrecisionCopyBytes(pl.FP8) * ((st.Layers-st.Experts)/D + st.Experts/E)
			}
			g = dense*gb/D + st.Experts*gb/E
			o = dense*12/D + st.Experts*12/E
			return w + 2*layer*bf16, fp8, g + layer*gb, o
		}
		w, g, o = w/D+2*layer*bf16, g/D+layer*gb, st.Params*12/D
		fp8 /= D
	}
	return w, fp8, g, o
}

// eagerState is a plain PyTorch stage's weights, gradients and
// optimizer state (the torch-eager and hf-eager stacks: a hand-written
// or Hugging Face loop, DDP, torch.optim.AdamW): the weights and their
// gradients in the weights' dtype, and AdamW's two moments as its
// parameters are (torch/optim/adamw.py: zeros_like the parameter). Under
// autocast over FP32 weights that is 4 + 4 + 8 bytes a parameter, and
// autocast's BF16 copy of each block weight its GEMMs read, saved for
// their backward (2 bytes a block parameter, counted with the weights:
// one micro-batch's, as a step without a pipeline holds one); with BF16
// weights 2 + 2 + 4. Megatron's count (2 + 4 + 12) is 18 against 18
// under autocast and 8 with BF16 weights.
func (c *counter) eagerState(st *Stage) (w, fp8, g, o float64) {
	if c.pl.Run.FP32Weights {
		return st.Params*4 + st.Layers*bf16, 0, st.Params * 4, st.Params * 8
	}
	return st.Params * bf16, 0, st.Params * bf16, st.Params * 2 * bf16
}

// fsdp2State is stage s's weights, gradients and optimizer state under
// torchtitan's FSDP2 (fully_shard of every block and of the model,
// MixedPrecisionPolicy BF16 parameters, reduce in FP32 or BF16;
// pytorch/torchtitan torchtitan/parallelisms/parallelize_llama.py
// apply_fsdp at 9dec370): the parameters are sharded FP32 over the
// C x D ranks with their FP32 gradients and AdamW's two FP32 moments (16
// bytes a parameter over C x D); a block's BF16 weights are gathered for
// its forward and its backward, the running block's and the next one,
// prefetched. With a pipeline torchtitan does not reshard after the
// forward (reshard_after_forward=not pp_enabled), so every block of the
// stage stays gathered, and torch's pipelining runs every micro-batch
// but the last without gradient sync (stage.py
// backward_maybe_with_nosync): FSDP2 accumulates the unsharded
// gradients in the reduce dtype. Without a pipeline one block's BF16
// gradient and its reduce-dtype copy wait for the reduce-scatter.
// Float8's weight casts are activations, not state (titanFP8Weights).
func (c *counter) fsdp2State(s int, st *Stage) (w, g, o float64) {
	pl := &c.pl
	D := float64(pl.D * pl.C)
	rd := pl.GradBytes() // the reduce dtype
	var layer float64
	if l := pl.Stages[s]; l > 0 {
		layer = st.Layers / float64(l)
	}
	w, g, o = st.Params*4/D, st.Params*4/D, st.Params*8/D
	if pl.P > 1 {
		return w + st.Params*bf16, g + st.Params*rd, o
	}
	// The root (the embedding, the final norm, the output layer) is not
	// resharded after the forward (FSDP2 sets the root's
	// reshard_after_forward to False) and its BF16 gradients wait for
	// the root's reduce-scatter at the end of the backward.
	root := st.Params - st.Layers
	return w + 2*layer*bf16 + root*bf16, g + layer*(bf16+rd) + root*bf16, o
}

// bridgeBlockParams is whether plan pl keeps block-scaled primary
// weights, as Megatron-Bridge's runs do under its MXFP8 recipe in every
// release and under its NVFP4 recipe from 26.04.01 (fp4ParamStacks): its
// blocks' weights are Transformer Engine quantized tensors, their
// rowwise and columnwise copies with their scales (plan.BlockCopyBytes), no
// BF16 copy; the distributed optimizer keeps the FP32 master (its 12
// bytes).
//   - MXFP8: bf16_with_mxfp8_mixed sets fp8_param_gather, which sets
//     fp8_param (src/megatron/bridge/training/mixed_precision.py,
//     v0.3.0 to v0.5.0; the post-init asserts
//     reuse_grad_buf_for_mxfp8_param_ag with it), so Megatron-Core builds
//     the blocks' linear weights under fp8_model_init with the MXFP8
//     recipe (NVIDIA/Megatron-LM core_v0.16.0 megatron/core/fp8_utils.py
//     get_fp8_context, is_init: config.fp8_param): MXFP8Tensor
//     parameters. With reuse_grad_buf_for_mxfp8_param_ag the distributed
//     optimizer's parameter buffer is the gradient buffer
//     (distributed/param_and_grad_buffer.py: "Create a shared buffer for
//     param AG and grad RS", param_data = shared_buffer, and param.data
//     not remapped onto it): the BF16 all-gather lands in the gradient
//     buffer and is copied into the MXFP8 parameters
//     (param.data.copy_(param_slice)), so no BF16 weight stays.
//   - NVFP4: bf16_with_nvfp4_mixed sets fp4_param_gather (and with it
//     fp4_param) from v0.4.2 (26.04.01) on, fp8_param_gather False and
//     no FP4 parameters before (v0.3.0 to v0.4.0): Megatron-Core
//     core_v0.17.0 fp4_utils.py get_fp4_context builds the weights under
//     fp8_model_init with the NVFP4 recipe where config.fp4_param.
func bridgeBlockParams(pl *plan.Plan) bool {
	if !strings.HasPrefix(pl.Software.Stack, "megatron-bridge-") {
		return false
	}
	return pl.FP8 == plan.FP8MX || pl.FP8 == plan.FP4NV && fp4ParamStacks[pl.Software.Stack]
}

// fp4ParamStacks are the Megatron-Bridge stacks whose NVFP4 recipe keeps
// NVFP4 primary weights: v0.4.2 (26.04.01) and v0.5.0 (26.06)
// mixed_precision.py bf16_with_nvfp4_mixed, fp4_param_gather = True.
var fp4ParamStacks = map[string]bool{"megatron-bridge-26.04.01": true, "megatron-bridge-26.06": true}

// bridgeFP8Params is whether plan pl keeps FP8 primary weights, as
// Megatron-Bridge's FP8 current-scaling runs do: their performance
// scripts take bf16_with_fp8_current_scaling_mixed
// (scripts/performance/utils/helpers.py get_precision_config "fp8_cs"),
// which sets fp8_param_gather = True and with it fp8_param
// (src/megatron/bridge/training/mixed_precision.py), in every tag from
// v0.1.0rc3 to v0.5.1 (NVIDIA-NeMo/Megatron-Bridge): Megatron-Core then
// builds the blocks' weights under Transformer Engine's fp8_model_init,
// FP8 tensors of one byte, the distributed optimizer keeping the FP32
// master copy (its 12 bytes); on Hopper the dgrad GEMM reads their
// transpose, one byte more.
func bridgeFP8Params(pl *plan.Plan) bool {
	return pl.FP8 == "current" && strings.HasPrefix(pl.Software.Stack, "megatron-bridge-")
}

// lowPrecisionCopyBytes is the bytes a block weight's low-precision
// copies take per element under recipe: the FP8 recipes' row- and
// column-wise bytes (one each), the block-scaled ones' with their
// scales (plan.BlockCopyBytes).
func lowPrecisionCopyBytes(recipe string) float64 {
	if plan.BlockScaled(recipe) {
		return plan.BlockCopyBytes(recipe)
	}
	return 2
}
