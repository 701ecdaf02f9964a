package memory

import (
	"math"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// What torchtitan's trace (titanStageTrace) reads of a stage: the
// tensors one block makes (titanBlockTensors), kept or recomputed as the
// plan checkpoints (titanSplit), what the context-parallel attention's
// backward adds (titanAttentionBackward), and the stage's sizes
// (titanStage).

// titanTensor is one tensor a torchtitan block's forward makes, bytes
// on one GPU for one micro-batch: whether autograd saves it for the
// backward without checkpointing (autograd), whether selective per-op
// checkpointing keeps it (sac: torchtitan 9dec370 parallelize_llama.py
// _save_list and _get_custom_policy, which saves the outputs of
// flash attention, of the reduce-scatters and of every other mm: wq,
// wv, w1 and w2 of the seven), and of those whether neither the
// backward nor the recomputation reads it (unread: the eager policy
// caches it all the same, MUST_SAVE; torch.compile's partitioner saves
// only what its backward graph reads), and whether a compiled block's
// backward graph saves it (compiled: torch.compile's
// min_cut_rematerialization_partition, torch/_functorch/partitioners.py,
// never recomputes a matmul's or the attention's output
// (is_compute_intensive) nor a tensor that must be materialized in the
// backward, one that an unfusible op reads (is_materialized_backwards,
// ban_recompute_materialized_backward on by default): the GEMMs' saved
// inputs and the attention's are saved as eager saves them; of
// autograd's tensors only silu's output, which the product's backward
// alone reads, a pointwise op fused with it, is made again from w1's
// output).
type titanTensor struct {
	name                            string
	bytes                           float64
	autograd, sac, unread, compiled bool
}

// titanBlockTensors is what one torchtitan TransformerBlock
// (torchtitan/models/llama/model.py at 9dec370) makes in its forward
// that its backward or its recomputation reads, beyond its input, in
// its forward's order, on one GPU for one micro-batch of c.tokens
// tokens, at tensor-parallel degree T (apply_tp: wq, wk, wv, w1, w3
// ColwiseParallel, wo and w2 RowwiseParallel to Shard(1) under
// sequence parallelism, the norms SequenceParallel, the attention's and
// the MLP's inputs all-gathered by
// PrepareModuleInput(desired_input_layouts Replicate())):
//   - the attention norm's output, which wq, wk and wv save: whole on
//     every GPU (gathered), a byte an element under Float8
//     (Float8Linear's matmul saves its float8 input;
//     Float8ColwiseParallel casts before the all-gather);
//   - wq's, wk's and wv's outputs: autograd saves none of them (the
//     rotary embedding's backward multiplies by the frequencies, which
//     need no gradient); the policy keeps wq's and wv's;
//   - scaled_dot_product_attention's saved inputs: the rotated query,
//     and the key and value after repeat_kv, at every head;
//   - its output and its log-sum-exp (FP32, a head a token);
//   - wo's input, the output transposed and made contiguous
//     (Attention.forward: output.transpose(1, 2).contiguous()), a byte
//     under Float8;
//   - under sequence parallelism wo's reduce-scatter output (kept by
//     the policy; the recomputation adds it to the input for the MLP
//     norm's);
//   - the residual, the MLP norm's input (sequence-parallel);
//   - the MLP norm's output, gathered (w1 and w3 save it), a byte under
//     Float8;
//   - w1's output (silu saves it) and w3's, silu's output (the product
//     saves both factors), and their product, w2's input (a byte under
//     Float8);
//   - w2's output before its reduction, whole, and under sequence
//     parallelism its reduce-scatter's output: kept by the policy,
//     read by neither the backward nor the recomputation (the residual
//     add needs no input for its backward).
func (c *counter) titanBlockTensors() []titanTensor {
	m, pl := &c.m, &c.pl
	T := float64(pl.TP)
	n, h, f := c.tokens, float64(m.Hidden), float64(m.FFN)
	q, kv := float64(m.Heads)*float64(m.HeadDim()), float64(m.KVHeads)*float64(m.HeadDim())
	in := 2.0 // a GEMM's saved input, a byte under Float8 (BF16 under rowwise: plan.KeepsFP8Inputs)
	if plan.KeepsFP8Inputs(pl.FP8) {
		in = 1
	}
	sp := pl.TP > 1 && pl.SequenceParallel
	ts := []titanTensor{
		{"attention norm output", in * n * h, true, false, false, true},
		{"wq output", 2 * n * q / T, false, true, false, false},
		{"wk output", 2 * n * kv / T, false, false, false, false},
		{"wv output", 2 * n * kv / T, false, true, false, false},
		{"rotated query", 2 * n * q / T, true, false, false, true},
		{"repeated key", 2 * n * q / T, true, false, false, true},
		{"repeated value", 2 * n * q / T, true, false, false, true},
		{"attention output", 2 * n * q / T, true, true, false, true},
		{"attention log-sum-exp", 4 * n * float64(m.Heads) / T, true, true, false, true},
		{"wo input", in * n * q / T, true, false, false, true},
	}
	if sp {
		ts = append(ts, titanTensor{"attention reduce-scatter output", 2 * n * h / T, false, true, false, false})
	}
	ts = append(ts,
		titanTensor{"residual", 2 * n * h * c.sp(), true, false, false, true},
		titanTensor{"MLP norm output", in * n * h, true, false, false, true},
		titanTensor{"w1 output", 2 * n * f / T, true, true, false, true},
		titanTensor{"w3 output", 2 * n * f / T, true, false, false, true},
		titanTensor{"silu output", 2 * n * f / T, true, false, false, false},
		titanTensor{"w2 input", in * n * f / T, true, false, false, true},
		titanTensor{"w2 output", 2 * n * h, false, true, true, false},
	)
	if sp {
		ts = append(ts, titanTensor{"MLP reduce-scatter output", 2 * n * h / T, false, true, true, false})
	}
	return ts
}

// titanSplit splits a block's tensors (ts) by the plan's
// checkpointing: kept from the forward to the backward, and made again
// by the recomputation in the backward (torch.utils.checkpoint,
// non-reentrant, as ptd_checkpoint_wrapper runs it): without
// recomputation those autograd saves; under full checkpointing none
// (the checkpoint keeps the block's input alone: counted apart), the
// recomputation making again what autograd saves; under the per-op
// policy (selective_ac_option "op") those it keeps (compiled, those of
// them read), the recomputation making the rest of autograd's. Compiled
// (compile=on: torchtitan's apply_compile wraps each block, its
// checkpoint inside), the backward graph's saved tensors stand for
// autograd's.
func titanSplit(pl *plan.Plan, ts []titanTensor) (saved, recomputed []float64) {
	for _, t := range ts {
		needed := t.autograd
		if !pl.Run.Eager {
			needed = t.compiled
		}
		switch pl.Recompute {
		case plan.NoRecompute:
			if needed {
				saved = append(saved, t.bytes)
			}
		case plan.SelectiveRecompute:
			if t.sac && (pl.Run.Eager || !t.unread) {
				saved = append(saved, t.bytes)
			} else if needed {
				recomputed = append(recomputed, t.bytes)
			}
		default:
			if needed {
				recomputed = append(recomputed, t.bytes)
			}
		}
	}
	return saved, recomputed
}

// titanAttentionBackward is what torch's context-parallel attention
// allocates in one block's attention backward beyond the block's saved
// and recomputed tensors, bytes on one GPU, with C > 1
// (torch/distributed/tensor/experimental/_attention.py,
// _templated_ring_attention_backward, read at pytorch/pytorch 0123248;
// the rotater all-gathers the keys and values once, as torchtitan's
// default rotate method "allgather"): the FP32 accumulators of the
// query's, the key's and the value's gradients (zeros_like(...,
// dtype=float32), convert_to_f32), every rank's keys and values
// gathered (BF16, at every head: repeat_kv precedes the attention), the
// local keys and values concatenated for the exchange, one step's
// flash-attention gradients (BF16), and the FP32 key and value
// gradients concatenated and sent on (all-to-all) while the received
// ones are added to: three of them at once.
func (c *counter) titanAttentionBackward() []float64 {
	pl, m := &c.pl, &c.m
	if pl.CP <= 1 {
		return nil
	}
	E := c.tokens * float64(m.Heads) * float64(m.HeadDim()) / float64(pl.TP) // this GPU's query (and key) elements
	return []float64{
		4 * E, 4 * E, 4 * E, // dq, dk, dv accumulators
		2 * 2 * E * float64(pl.CP), // every rank's keys and values
		2 * 2 * E,                  // the local keys and values, concatenated
		2 * E, 2 * E, 2 * E,        // one step's dq, dk, dv
		4 * 2 * E, 4 * 2 * E, 4 * 2 * E, // dk and dv concatenated: sent, received, the next sent
	}
}

// titanStage is what titanStageTrace reads of stage s on one GPU.
type titanStage struct {
	s, L, V, lu   int
	block, root   float64 // parameters on this GPU before FSDP's sharding: one block's, the root's
	out           float64 // of root, the output layer's and the final norm's (the last stage)
	D             float64 // FSDP2's shards: the data-parallel and context ranks
	boundary      float64 // a stage boundary's tensor (a block's output)
	saved, recomp []float64
	attn          []float64 // titanAttentionBackward's
}

// titanStageOf is titanStage of stage s (summed: the tensors a block
// makes one after another as one, for a peak alone).
func (c *counter) titanStageOf(s int, st *Stage, summed bool) titanStage {
	pl, m := &c.pl, &c.m
	L, V := pl.Stages[s], max(pl.VP, 1)
	g := titanStage{s: s, L: L, V: V, lu: max(int(math.Round(float64(L)/float64(V))), 1),
		D: float64(pl.DP * pl.CP), boundary: 2 * c.tokens * float64(m.Hidden) * c.sp()}
	if L > 0 {
		g.block = st.Layers / float64(L)
	}
	g.root = st.Params - st.Layers
	if s == pl.PP-1 {
		g.out = min(float64(transformer.OutputParams(*m))/float64(pl.TP), g.root)
	}
	ts := c.titanBlockTensors()
	g.saved, g.recomp = titanSplit(pl, ts)
	g.attn = c.titanAttentionBackward()
	if plan.KeepsFP8Weights(pl.FP8) {
		// The float8 weight transposes: kept from the forward without
		// recomputation (titanFP8Weights), else made again by it.
		if pl.Recompute == plan.NoRecompute {
			g.saved = append(g.saved, g.block)
		} else {
			g.attn = append(g.attn, g.block)
		}
	}
	if summed {
		// Tensors made one after another and freed together reach the
		// same peak as their sum.
		g.saved, g.recomp, g.attn = sumOf(g.saved), sumOf(g.recomp), sumOf(g.attn)
	}
	return g
}

// sumOf is xs as one sum (none where xs are none).
func sumOf(xs []float64) []float64 {
	if len(xs) == 0 {
		return nil
	}
	return []float64{sum(xs)}
}

// sum is xs' sum.
func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}
