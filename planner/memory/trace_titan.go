package memory

import (
	"iter"
	"math"
	"slices"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"

	"github.com/placer/placer/evaluate/alloc"
)

// The peak instant of a torchtitan step, tensor by tensor: one GPU's
// allocations and frees in one training step of pytorch/torchtitan at
// 9dec370 (train.py, torchtitan/parallelisms/parallelize_llama.py and
// pipeline_llama.py) over torch's FSDP2, tensor, context and pipeline
// parallelism (torch 2.5 era), written per stage (titanStageTrace). The
// stage's peak is the trace's maximum (memTrace.peak), and the caching
// allocator replays the same trace (Step.Allocator): parts that are
// never live at once are not summed, as Step.Peak's count of parts does.

// Streams of the trace's tensors: the caching allocator keeps a pool a
// stream.
const (
	// reduceScatterStream is FSDP2's FSDPCommContext.reduce_scatter_stream,
	// where foreach_reduce allocates its reduce-scatter input.
	reduceScatterStream = 2
)

// allocOn is alloc on stream.
func (t *memTrace) allocOn(stream int32, bytes float64, c memCat) int32 {
	id := t.alloc(bytes, c)
	if id >= 0 && !t.peakOnly {
		t.ev[len(t.ev)-1].Stream = stream
	}
	return id
}

// titanTraceable is whether titanStageTrace writes plan c.pl's step:
// torchtitan over FSDP2 (every published torchtitan row) of the model
// torchtitan 9dec370 writes, a dense Llama (two RMSNorms a block, SwiGLU,
// standard or grouped-query attention: models/llama/model.py); other
// torchtitan plans keep Step.Peak's count of parts.
func titanTraceable(c *counter) bool {
	pl, m := &c.pl, &c.m
	return pl.Titan() && pl.FSDP && pl.EP <= 1 && !m.MoE() && c.prediction == nil && c.attention == nil &&
		m.SwiGLU() && m.NormsPerBlock() == 2
}

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

// titanStageTrace is stage s's allocations and frees in one step of
// torchtitan on one of its GPUs (st its parameters), in the order the
// step makes them:
//   - the state at the step's start: each block's and the root's FP32
//     shards and AdamW's two moments (16 bytes a parameter over the
//     C x D ranks: FSDP2's sharded DTensors, torch.optim.AdamW's state);
//     no gradient: train.py calls optimizers.zero_grad() (set_to_none)
//     first; under a pipeline torch's PipelineStage's receive buffers
//     for every micro-batch (titanStageBuffers with none in flight);
//   - the root's BF16 parameters, unsharded at its first forward and
//     resharded after its backward (FSDP2 does not reshard the root
//     after the forward);
//   - each micro-batch's forward (titanForward), in the pipeline
//     schedule's order (inflight, titanUnitOrder), the loss with it
//     on the last stage, and its backward (titanBackward); under a
//     pipeline what PipelineStage keeps of each to the step's end, its
//     output and its input's gradient (titanKept), and on the last
//     stage the outputs merged when the schedule's step returns;
//   - at the end, the optimizer: torch.optim.AdamW with foreach (not
//     fused: torchtitan's optimizer.py), whose _multi_tensor_adamw
//     makes exp_avg_sq's square root for every parameter at once
//     (torch._foreach_sqrt), 4 bytes a parameter over C x D; and the
//     gradients freed (the next step's zero_grad).
func (c *counter) titanStageTrace(s int, st *Stage) memTrace {
	return c.titanStageTraceOf(s, st, tracedMicro(&c.pl), false)
}

// titanStageTraceOf is titanStageTrace writing micro of the plan's
// micro-batches, its events kept or its peak alone counted (peakOnly).
func (c *counter) titanStageTraceOf(s int, st *Stage, micro int, peakOnly bool) memTrace {
	t := memTrace{peakOnly: peakOnly}
	c.titanStageInto(&t, s, st, micro)
	return t
}

// titanStageInto writes titanStageTraceOf into t, its buffers reused.
func (c *counter) titanStageInto(t *memTrace, s int, st *Stage, micro int) {
	pl := &c.pl
	g := c.titanStageOf(s, st, t.peakOnly)
	t.ev, t.cat, t.size = t.ev[:0], t.cat[:0], t.size[:0]
	t.tot, t.best, t.live, t.by = 0, 0, [nMemCats]int64{}, [nMemCats]int64{}
	var w titanWalk
	w.t, w.c, w.g = t, c, &g
	for range g.L {
		t.alloc(g.block*4/g.D, catWeights)
		t.alloc(g.block*4/g.D, catOpt)
		t.alloc(g.block*4/g.D, catOpt)
	}
	t.alloc(g.root*4/g.D, catWeights)
	t.alloc(g.root*4/g.D, catOpt)
	t.alloc(g.root*4/g.D, catOpt)
	if pl.PP > 1 {
		for _, b := range splitBytes(c.titanStageBuffers(s, 0), g.boundary) {
			t.alloc(b, catActs)
		}
	}
	rootParams := t.alloc(g.root*bf16, catWeights)
	// The micro-batches written (tracedMicro), the last stage's logits
	// of those left out kept in output_chunks from the start.
	wc := *c
	wc.pl.NumMicro = micro
	w.c = &wc
	if s == pl.PP-1 && pl.PP > 1 {
		for range pl.NumMicro - wc.pl.NumMicro {
			w.outputs = append(w.outputs, t.alloc(c.tokens*float64(c.m.Vocab)/float64(pl.TP)*bf16, catLoss))
		}
	}
	w.leftOut = pl.NumMicro - wc.pl.NumMicro
	w.unsharded = make([]int32, g.L)
	w.accum = make([]int32, g.L)
	for i := range w.unsharded {
		w.unsharded[i], w.accum[i] = -1, -1
	}
	w.run(s)
	t.free(rootParams)
	// The root's post-backward: its gradients reduce-scattered into its
	// FP32 shards.
	w.reduceScatter(g.root, true, w.rootGrads...)
	if s == pl.PP-1 && pl.PP > 1 {
		// The schedule's step returns the last stage's outputs merged
		// (torch 2.6.0 schedules.py step: _merge_outputs, merge_chunks'
		// torch.cat of output_chunks), which train.py drops.
		t.free(t.alloc(float64(pl.NumMicro)*c.tokens*float64(c.m.Vocab)/float64(pl.TP)*bf16, catLoss))
	}
	params := float64(g.L)*g.block + g.root
	t.free(t.alloc(params*4/g.D, catOpt)) // foreach AdamW's sqrt of exp_avg_sq
	t.free(w.grads...)
	t.free(w.outputs...)
	t.free(w.kept...)
}

// tracedMicro is the micro-batches titanStageTrace writes of plan pl's
// M: after the first micro-batch every later one repeats the second's
// tensors (the gradient shards, the accumulated gradients, the root's
// gradients made; the same forwards and backwards in flight), so its
// peak is reached by then: without a pipeline 2 of them (as
// eagerStepTrace); under one 3 P, which holds the warm-up's forwards
// (at most (P-1) 2 + (V-1) P + 1 model chunks, under 2 P V) and a
// whole steady round between the warm-up and the drain (with 2 P the
// interleaved first stage peaks lower: TestTitanTracedMicro), a
// multiple of P as torch's interleaved order needs (titanUnitOrder; M
// itself where M is not one). The last stage's
// logits that the micro-batches left out keep in output_chunks are
// allocated at the step's start (titanStageTrace): held at its last
// backward, its peak, all the same.
func tracedMicro(pl *plan.Plan) int {
	if pl.PP == 1 {
		return min(pl.NumMicro, 2)
	}
	if pl.NumMicro <= 3*pl.PP || max(pl.VP, 1) > 1 && pl.NumMicro%pl.PP != 0 {
		return pl.NumMicro
	}
	return 3 * pl.PP
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

// splitBytes is total as pieces of piece bytes and a remainder
// (pieces').
func splitBytes(total, piece float64) []float64 { return slices.Collect(pieces(total, piece)) }

// pieces yields total bytes as pieces of piece bytes (the whole where
// piece is below a byte), the last holding the remainder, never one
// below a byte: a remainder under a byte joins the piece before it.
func pieces(total, piece float64) iter.Seq[float64] {
	return func(yield func(float64) bool) {
		if piece < 1 {
			piece = total
		}
		for total >= 1 {
			n := min(total, piece)
			if total-n < 1 {
				n = total
			}
			if !yield(n) {
				return
			}
			total -= n
		}
	}
}

// titanTraced is the trace of plan cs[0].pl's stage whose peak is
// highest (its step written by titanStageTrace; cs a counter of each
// stage's degree), where the plan is titanTraceable.
func titanTraced(stages []Stage, cs []counter) (memTrace, int, bool) {
	if !titanTraceable(&cs[0]) {
		return memTrace{}, 0, false
	}
	tps := cs[0].pl.TPs
	var best memTrace
	at := -1
	t := memTrace{peakOnly: true}
	for s := range stages {
		// A copy of the stage's counter: titanStageInto's walk keeps its
		// counter on the heap, and a pointer into cs would move the
		// callers' counters (Step.Count's, on their stacks for every
		// plan, titan's or not) to the heap with it.
		c := cs[counterOf(cs, tps[s])]
		c.titanStageInto(&t, s, &stages[s], tracedMicro(&c.pl))
		if at < 0 || t.best > best.best {
			best.best, best.by, at = t.best, t.by, s
		}
	}
	best.peakOnly = true
	return best, at, true
}

// titanReplay is the allocator's peak over every stage's titanStageTrace
// (Step.Allocator's, for a titanTraceable plan).
func titanReplay(cfg alloc.Config, stages []Stage, cs []counter) *AllocatorPeak {
	tps := cs[0].pl.TPs
	var best *AllocatorPeak
	for s := range stages {
		c := &cs[counterOf(cs, tps[s])]
		tr := c.titanStageTrace(s, &stages[s])
		st, err := alloc.Replay(cfg, tr.ev)
		ap := &AllocatorPeak{Reserved: st.PeakReserved, Allocated: st.PeakAllocated, Requested: st.PeakRequested,
			Stage: s, Events: len(tr.ev), Expandable: cfg.Expandable, Releases: st.Retries, OutOfMemory: err != nil, Needed: st.Needed}
		if best == nil || ap.needs() > best.needs() {
			best = ap
		}
	}
	return best
}
