package memory

import (
	"math"

	"github.com/placer/placer/evaluate/alloc"
)

// A stage's allocation trace written from the parts its count sums
// (allocatorTrace), for the stacks whose step is not written tensor by
// tensor: what the caching allocator replays for them (Step.Allocator).

// traceBuilder writes an allocation trace.
type traceBuilder struct {
	ev   []alloc.Event
	next int32
}

// tensorSpan is the tensors one tensors call allocated: n of them,
// numbered from first in turn (n 0: none).
type tensorSpan struct{ first, n int32 }

// tensors allocates total bytes as tensors of piece bytes and one of
// the remainder (none where total is under a byte), on the default
// stream.
func (b *traceBuilder) tensors(total, piece float64) tensorSpan { return b.tensorsOn(0, total, piece) }

// tensorsOn is tensors on stream (the caching allocator keeps a pool of
// blocks for each stream: a block freed returns to its stream's pool,
// which the others' requests do not reuse).
func (b *traceBuilder) tensorsOn(stream int32, total, piece float64) tensorSpan {
	sp := tensorSpan{first: b.next}
	for n := range pieces(total, piece) {
		b.ev = append(b.ev, alloc.Event{Tensor: b.next, Stream: stream, Size: bytesOf(n)})
		b.next++
	}
	sp.n = b.next - sp.first
	return sp
}

// unshard allocates one block's gathered BF16 weights, gather bytes, on
// the default stream; under FSDP2 (fsdp2) after the all-gather's
// buffer of as many bytes on its copy-in stream, freed once the
// weights are copied out of it: torch/distributed/fsdp/_fully_shard
// (_fsdp_collectives.py foreach_all_gather: all_gather_copy_in makes
// all_gather_output on all_gather_copy_in_stream, this rank's input a
// view of it; foreach_all_gather_copy_out copies it into the unsharded
// parameters, made on the default stream, and wait_for_unshard drops
// it), so that the copy-in stream's pool keeps a block's worth
// reserved beside the default stream's.
func (b *traceBuilder) unshard(gather float64, fsdp2 bool) tensorSpan {
	if !fsdp2 {
		return b.tensors(gather, 0)
	}
	out := b.tensorsOn(allGatherStream, gather, 0)
	ids := b.tensors(gather, 0)
	b.free(out)
	return ids
}

func (b *traceBuilder) free(sp tensorSpan) {
	for id := sp.first; id < sp.first+sp.n; id++ {
		b.ev = append(b.ev, alloc.Event{Tensor: id, Free: true})
	}
}

// allocatorTrace is stage s's allocations and frees in one training
// step on one of its GPUs, in the order the step makes them, built from
// the parts stageMemory counts (so that the trace's peak of tensor
// bytes is that stage's Peak count, total):
//   - first the state: weights, FP8 copies, gradients and optimizer
//     state, under Megatron-Core as contiguous buffers (its
//     DistributedDataParallel's parameter and gradient buffers, the
//     distributed optimizer's FP32 main weights and two moments), under
//     FSDP and plain PyTorch a tensor a layer for each (FSDP2 shards
//     each parameter: its sharded weights, gradients and AdamW's two
//     moments are tensors of their own); and torch's PipelineStage's
//     buffers of every micro-batch (titanStageBuffers with none in
//     flight);
//   - then the pipeline schedule's forwards and backwards of its units
//     (a micro-batch on one model chunk): as many forwards as the stage
//     holds in flight at its peak (inflight, times the chunks),
//     then one forward and one backward in turn, then the last
//     backwards; no pipeline: a forward and its backward per
//     micro-batch; GPipe: every forward, then every backward;
//   - a forward allocates each of its layers' saved activations (a
//     micro-batch's activations in flight over the unit's layers), as
//     tensors of one hidden state (tokens x hidden x 2 bytes, this GPU's
//     share under sequence parallelism) and a remainder: placer counts
//     a layer's activations by size, not tensor by tensor; under FSDP
//     each layer's gathered weights are allocated before it with the
//     next layer's (the prefetch) and freed after it;
//   - a backward, layer by layer from the last, gathers the layer's
//     weights (FSDP) and allocates what only a running backward holds
//     (the recomputed layer's activations, torchtitan's per-op
//     recomputation's, the context ring's or all-gathered keys and
//     values: what stageActivations counts beside the micro-batches)
//     and the layer's unsharded gradient (FSDP), then frees the layer's
//     saved activations and those; on the last stage the loss's logits,
//     their FP32 copy and gradient are held from the backward's start
//     through its first layer (counted at the peak with the rest, as
//     stageMemory counts them).
func (c *counter) allocatorTrace(s int, st *Stage, lm *layerMem, ev []alloc.Event) ([]alloc.Event, float64) {
	pl := &c.pl
	sm := c.stageMemory(s, st, lm)
	b := traceBuilder{ev: ev}
	L := pl.Stages[s]
	V := max(pl.VP, 1)
	hidden := 2 * c.tokens * float64(c.m.Hidden) * c.sp()
	r := unitReplay{b: &b, V: V, hidden: hidden, last: s == pl.PP-1, logits: sm.logits,
		logitPiece: c.m.OutputTokens(c.tokens) * float64(c.m.Vocab) / float64(pl.TP) * 4}

	r.gather, r.grad, r.gatherPP, r.fsdp2 = c.stateTensors(&b, st, sm, L)

	acts0, _ := c.stageActivationsAt(s, st, lm, 0)
	acts1, _ := c.stageActivationsAt(s, st, lm, 1)
	var buffers float64
	if pl.PP > 1 && pl.Titan() {
		buffers = c.titanStageBuffers(s, 0)
	}
	buffers += c.graphBuffers(s) // the graphs' static buffers, made at capture
	b.tensors(buffers, hidden)
	r.transient = acts0 - buffers
	perUnit := (acts1 - acts0) / float64(V)
	if r.last && pl.Titan() && V > 1 {
		// Interleaved, the output layer's inputs are one micro-batch's
		// (stageActivationsAt), held while a backward runs.
		out := c.titanOutputInputs()
		r.transient += out
		perUnit -= out / float64(V)
	}
	r.lu = max(int(math.Round(float64(L)/float64(V))), 1)
	r.perUnitLayer = perUnit / float64(r.lu)

	U := pl.NumMicro * V
	n := min(max(int(math.Round(inflight(pl, s)*float64(V))), 1), U)
	ord := titanUnitOrder(pl)
	r.chunkOf = func(u int) int { return u % V } // the first V units: one of each chunk
	if ord != nil {
		r.chunkOf = func(u int) int { return u / pl.NumMicro }
	}
	// The last stage's outputs torch's pipelining keeps to the step's
	// end (titanOutputChunks): one a micro-batch of the last model chunk,
	// made by its forward; its loss's logits made with its backward and
	// freed after its first layer.
	if r.last && pl.Titan() && pl.PP > 1 {
		r.chunk = c.tokens * float64(c.m.Vocab) / float64(pl.TP) * bf16
	}
	r.logits -= float64(pl.NumMicro) * r.chunk
	r.saved = make([][]tensorSpan, U)
	r.seen = make([]bool, V)
	replay1F1B(U, n, ord, r.forward, r.backward)
	for _, o := range r.outputs {
		b.free(o)
	}
	return b.ev, sm.total()
}

// unitReplay is allocatorTrace's stage as its units (a micro-batch on
// one model chunk) run: V model chunks of lu layers each, a layer's
// saved activations perUnitLayer bytes a unit (tensors of hidden
// bytes), what only a running backward holds (transient); FSDP's
// gathered weights (gather), unsharded gradient (grad) and, under
// torchtitan's pipeline, first-forward all-gather buffer (gatherPP) a
// layer, on FSDP2's stream (fsdp2); on the last stage (last) the loss's
// logits (logits bytes in pieces of logitPiece) and the BF16 output a
// micro-batch torch's pipelining keeps (chunk).
type unitReplay struct {
	b                               *traceBuilder
	V, lu                           int
	hidden, perUnitLayer, transient float64
	gather, grad, gatherPP          float64
	fsdp2, last                     bool
	logits, logitPiece, chunk       float64
	chunkOf                         func(u int) int
	saved                           [][]tensorSpan // by unit and layer: its saved activations
	seen                            []bool         // the model chunks that have run a forward
	outputs                         []tensorSpan   // the last stage's outputs, kept to the step's end
}

// forward is unit u's forward: each layer's saved activations, its
// weights gathered before it (FSDP: with the next layer's, prefetched)
// and freed after it.
func (r *unitReplay) forward(u int) {
	b := r.b
	r.saved[u] = make([]tensorSpan, r.lu)
	first := !r.seen[r.chunkOf(u)]
	r.seen[r.chunkOf(u)] = true
	var gathered, prefetched tensorSpan
	for l := range r.lu {
		if r.gatherPP > 0 && first {
			// The block's all-gather buffer alone: its gathered
			// weights are the stage's state.
			b.free(b.tensorsOn(allGatherStream, r.gatherPP, 0))
		}
		if r.gather > 0 {
			if prefetched.n == 0 {
				prefetched = b.unshard(r.gather, r.fsdp2)
			}
			gathered, prefetched = prefetched, tensorSpan{}
			if l+1 < r.lu {
				prefetched = b.unshard(r.gather, r.fsdp2)
			}
		}
		r.saved[u][l] = b.tensors(r.perUnitLayer, r.hidden)
		b.free(gathered)
	}
	if r.chunk > 0 && r.chunkOf(u) == r.V-1 {
		r.outputs = append(r.outputs, b.tensors(r.chunk, 0))
	}
}

// backward is unit u's backward, layer by layer from the last: the
// layer's weights gathered (FSDP), what the running backward holds and
// the layer's unsharded gradient, then the layer's saved activations
// freed with them; on the last stage the loss's logits held through its
// first layer.
func (r *unitReplay) backward(u int) {
	b := r.b
	var logits tensorSpan
	if r.last && (r.chunk == 0 || r.chunkOf(u) == r.V-1) {
		logits = b.tensors(r.logits, r.logitPiece)
	}
	var gathered, prefetched tensorSpan
	for l := r.lu - 1; l >= 0; l-- {
		if r.gather > 0 {
			if prefetched.n == 0 {
				prefetched = b.unshard(r.gather, r.fsdp2)
			}
			gathered, prefetched = prefetched, tensorSpan{}
			if l > 0 {
				prefetched = b.unshard(r.gather, r.fsdp2)
			}
		}
		t := b.tensors(r.transient, r.hidden)
		gr := b.tensors(r.grad, 0)
		b.free(r.saved[u][l])
		b.free(t)
		b.free(gr)
		b.free(gathered)
		if l == r.lu-1 {
			b.free(logits)
		}
	}
	r.saved[u] = nil
}

// stateTensors puts the stage's state on trace b (weights, FP8 copies,
// gradients and the optimizer's, a layer's worth a tensor where they are
// kept per layer) and returns what the per-layer replay allocates of
// it: FSDP's gathered weights and unsharded gradient a layer; under
// torchtitan's pipeline, which keeps every block gathered (state), each
// block's all-gather buffer in the step's first forward (gatherPP);
// fsdp2, whether the all-gathers run on FSDP2's own stream.
func (c *counter) stateTensors(b *traceBuilder, st *Stage, sm stageMem, L int) (gather, grad, gatherPP float64, fsdp2 bool) {
	pl := &c.pl
	fsdp2 = pl.FSDP && pl.Titan()
	if fsdp2 && pl.PP > 1 && L > 0 {
		gatherPP = st.Layers / float64(L) * bf16
	}
	if pl.FSDP && L > 0 && !(pl.Titan() && pl.PP > 1) {
		layer := st.Layers / float64(L)
		gather = layer * bf16
		grad = layer * pl.GradBytes()
		if pl.Titan() {
			grad = layer * (bf16 + pl.GradBytes())
		}
	}
	w, g := sm.weights-2*gather, sm.grads-grad
	perLayer := pl.FSDP || pl.Run.Eager
	pieces := float64(max(L, 1))
	if !perLayer {
		pieces = 1
	}
	b.tensors(w, w/pieces)
	b.tensors(sm.fp8, sm.fp8/pieces)
	b.tensors(g, g/pieces)
	b.tensors(sm.opt, sm.opt/(3*pieces)) // main weights (or none) and two moments
	return gather, grad, gatherPP, fsdp2
}
