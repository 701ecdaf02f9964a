package memory

import "math"

// titanWalk is a stage's trace being written: its blocks' unsharded
// parameters and accumulated gradients, and what the step holds to its
// end.
type titanWalk struct {
	t         *memTrace
	c         *counter
	g         *titanStage
	unsharded []int32 // each block's BF16 parameters while gathered (-1: resharded)
	accum     []int32 // under a pipeline, each block's FP32 unsharded gradient accumulated
	grads     []int32 // the FP32 gradient shards, made by each reduce-scatter
	rootGrads []int32 // the root's unsharded BF16 gradients
	outputs   []int32 // the last stage's logits, kept in output_chunks
	// kept to the step's end under a pipeline (titanKept): each
	// chunk's output in output_chunks, each received input's gradient
	// as its receive buffer's .grad
	kept []int32
	// leftOut is the micro-batches of the step the trace does not write
	// (tracedMicro), whose kept tensors the first backward allocates
	leftOut int
	seen    []bool // the model chunks that have run a forward
	// a unit's (micro-batch on a model chunk's) tensors between its
	// forward and its backward: by block, its input and its saved
	// tensors; the chunk's output; the loss's saved tensors.
	units   []titanUnit
	scratch []int32 // a block backward's transient tensors
}

type titanUnit struct {
	in     []int32
	saved  [][2]int32 // a block's saved tensors: the ids from the first to before the second (made in turn)
	out    int32
	loss   []int32
	logits int32
}

// run writes stage s's micro-batches: as many forwards as the stage
// holds in flight at its peak (inflight, times the model chunks),
// then a forward and a backward in turn, then the last backwards, in
// torch's interleaved order where titanUnitOrder gives one (the units
// of allocatorTrace's schedule).
func (w *titanWalk) run(s int) {
	pl, g := &w.c.pl, w.g
	U := pl.NumMicro * g.V
	w.units = make([]titanUnit, U)
	ins, saved := make([]int32, U*g.lu), make([][2]int32, U*g.lu)
	for u := range w.units {
		w.units[u].in, w.units[u].saved = ins[u*g.lu:(u+1)*g.lu], saved[u*g.lu:(u+1)*g.lu]
	}
	w.seen = make([]bool, g.V)
	done := make([]int, g.V) // backwards run, by model chunk
	n := min(max(int(math.Round(inflight(pl, s)*float64(g.V))), 1), U)
	ord := titanUnitOrder(pl)
	chunkOf := func(u int) int { return u % g.V }
	if ord != nil {
		chunkOf = func(u int) int { return u / pl.NumMicro }
	}
	first := true
	replay1F1B(U, n, ord, func(u int) { w.forward(u, chunkOf(u)) }, func(u int) {
		if first {
			w.keepLeftOut()
			first = false
		}
		ch := chunkOf(u)
		done[ch]++
		w.backward(u, ch, done[ch] == 1, done[ch] == pl.NumMicro)
	})
}

// titanKept is what torch's PipelineStage keeps of a finished unit
// (micro-batch on model chunk ch of stage s) to the step's end, read at
// torch 2.6.0 (the release cut from main a week before the benchmarks'
// 1963fc8; torch/distributed/pipelining/stage.py): forward_one_chunk
// appends every stage's output to output_chunks ("Prepare for final
// output merge or reduction"; get_fwd_send_ops sends from it), which
// only the next step's clear_runtime_states empties; and
// stage_backward's torch.autograd.backward accumulates the gradient of a
// received input into its receive buffer's .grad, which
// clear_runtime_states alone sets to None. Each a stage boundary's
// tensor: the output of every chunk but the model's last (whose logits
// lossForward keeps), the gradient of every chunk's input but the
// model's first's (the embedding's output, a tensor of the step's own).
func (w *titanWalk) titanKept(ch int) (out, grad bool) {
	pl, g := &w.c.pl, w.g
	return pl.PP > 1 && !(g.s == pl.PP-1 && ch == g.V-1), pl.PP > 1 && !(g.s == 0 && ch == 0)
}

// keepLeftOut allocates, at the first backward, what the micro-batches
// the trace leaves out (leftOut) keep to the step's end (titanKept):
// in a 1F1B steady state each backward is taken with the same
// micro-batches in flight, and the kept tensors of those finished
// before it grow by one unit's a backward, so the step's highest
// steady-state instant, its last, holds them all; here the trace's own
// last holds the same, and no earlier instant of the trace more.
func (w *titanWalk) keepLeftOut() {
	for range w.leftOut {
		for ch := range w.g.V {
			out, grad := w.titanKept(ch)
			if out {
				w.kept = append(w.kept, w.t.alloc(w.g.boundary, catActs))
			}
			if grad {
				w.kept = append(w.kept, w.t.alloc(w.g.boundary, catActs))
			}
		}
	}
}

// block is the stage's index of model chunk ch's l-th block.
func (w *titanWalk) block(ch, l int) int { return min(ch*w.g.lu+l, w.g.L-1) }

// unshard gathers block b's BF16 parameters where they are not
// (FSDP2's all-gather: its output on the all-gather stream, copied out
// into the unsharded parameters on the default stream and dropped;
// traceBuilder.unshard).
func (w *titanWalk) unshard(b int) {
	if w.unsharded[b] >= 0 {
		return
	}
	buf := w.t.allocOn(allGatherStream, w.g.block*bf16, catComm)
	w.unsharded[b] = w.t.alloc(w.g.block*bf16, catWeights)
	w.t.free(buf)
}

// reshard frees block b's unsharded parameters.
func (w *titanWalk) reshard(b int) {
	w.t.free(w.unsharded[b])
	w.unsharded[b] = -1
}

// forward is unit u's forward on model chunk ch: the embedding's output
// on the model's first chunk (else the stage's receive buffer, made
// with the state), each block's parameters gathered, its saved tensors
// (titanSplit) and its output, the next block's input; without a
// pipeline each block but the last resharded after it
// (apply_fsdp: reshard_after_forward = layer_id < len(model.layers) - 1;
// under a pipeline none is: reshard_after_forward = not pp_enabled); on
// the model's last chunk the loss (titanLossForward).
func (w *titanWalk) forward(u, ch int) {
	t, g, pl := w.t, w.g, &w.c.pl
	w.seen[ch] = true
	un := &w.units[u]
	in := int32(-1)
	if g.s == 0 && ch == 0 {
		in = t.alloc(g.boundary, catActs) // the embedding's output
	}
	for l := range g.lu {
		b := w.block(ch, l)
		w.unshard(b)
		first := int32(len(t.cat))
		for _, bytes := range g.saved {
			t.alloc(bytes, catActs)
		}
		un.in[l], un.saved[l] = in, [2]int32{first, int32(len(t.cat))}
		in = t.alloc(g.boundary, catActs)
		if pl.PP == 1 && b < g.L-1 {
			w.reshard(b)
		}
	}
	un.out = in
	if g.s == pl.PP-1 && ch == g.V-1 {
		w.lossForward(un)
	}
}

// lossForward is the last chunk's loss in unit un's forward: the final
// norm's output gathered, the output layer's input (titanOutputInputs:
// the norm's input is the last block's output), the BF16 logits, their
// FP32 copy (train.py's loss_fn: cross_entropy of pred.float()) and the
// log softmax's output, saved for the backward; the copy freed with
// the loss function's return. Without a pipeline train.py deletes the
// logits before the backward ("del pred"); under one torch's
// PipelineStage keeps them in output_chunks to the step's end
// (titanOutputChunks), computing the loss right after the forward
// (_maybe_compute_loss).
func (w *titanWalk) lossForward(un *titanUnit) {
	t, c := w.t, w.c
	n, h := c.tokens, float64(c.m.Hidden)
	logit := n * float64(c.m.Vocab) / float64(c.pl.TP)
	outIn := t.alloc(2*n*h, catActs)
	un.logits = t.alloc(logit*bf16, catLoss)
	cp := t.alloc(logit*4, catLoss)
	lsm := t.alloc(logit*4, catLoss)
	t.free(cp)
	if c.pl.PP == 1 {
		t.free(un.logits)
		un.logits = -1
	} else {
		w.outputs = append(w.outputs, un.logits)
	}
	un.loss = []int32{outIn, lsm}
}

// lossBackward is the loss's backward in unit un's and the output
// layer's and final norm's, returning the gradient of the last block's
// output: nll_loss_backward's FP32 gradient and log_softmax's (under
// loss parallelism, torch/distributed/tensor/parallel/loss.py, exp(x)
// and the sum beside them: titanLossBytes), their BF16 cast (the
// backward of .float()), the output layer's input gradient and, on the
// first micro-batch, its weight's gradient (unsharded BF16, the root's:
// reduce-scattered at the backward's end), then the final norm's.
func (w *titanWalk) lossBackward(un *titanUnit, first bool) int32 {
	t, c, g := w.t, w.c, w.g
	n, h := c.tokens, float64(c.m.Hidden)
	logit := n * float64(c.m.Vocab) / float64(c.pl.TP)
	nll := t.alloc(logit*4, catLoss)
	gi := t.alloc(logit*4, catLoss)
	var par []int32
	if c.pl.TP > 1 {
		par = []int32{t.alloc(logit*4, catLoss), t.alloc(logit*4, catLoss)}
	}
	t.free(nll, un.loss[1])
	t.free(par...)
	gb := t.alloc(logit*bf16, catLoss)
	t.free(gi)
	gh := t.alloc(2*n*h, catActs)
	if first {
		w.rootGrads = append(w.rootGrads, t.alloc(g.out*w.rootGradBytes(), catGrads))
	}
	t.free(gb, un.loss[0])
	gn := t.alloc(g.boundary, catActs)
	t.free(gh, un.out)
	return gn
}

// rootGradBytes is the bytes a root parameter's unsharded gradient
// takes: BF16, accumulated in the reduce dtype across a pipeline's
// micro-batches (FSDPParam.to_accumulated_grad_if_needed).
func (w *titanWalk) rootGradBytes() float64 {
	if w.c.pl.PP > 1 {
		return w.c.pl.GradBytes()
	}
	return bf16
}

// backward is unit u's backward on model chunk ch (first: the chunk's
// first micro-batch's; last: its last, which reduce-scatters the
// gradients under a pipeline).
func (w *titanWalk) backward(u, ch int, first, last bool) {
	t, g, pl := w.t, w.g, &w.c.pl
	un := &w.units[u]
	gradOut := int32(-1) // else the stage's gradient receive buffer
	if g.s == pl.PP-1 && ch == g.V-1 {
		gradOut = w.lossBackward(un, first)
	} else if out, _ := w.titanKept(ch); out {
		w.kept = append(w.kept, un.out) // kept in output_chunks (titanKept)
	} else {
		t.free(un.out)
	}
	for l := g.lu - 1; l >= 0; l-- {
		b := w.block(ch, l)
		w.unshard(b)
		if pl.PP == 1 && l > 0 {
			w.unshard(w.block(ch, l-1)) // FSDP2's backward prefetch of the next block to run
		}
		rec := w.scratch[:0]
		for _, bytes := range g.recomp {
			rec = append(rec, t.alloc(bytes, catActs))
		}
		tmp := len(rec)
		for _, bytes := range g.attn {
			rec = append(rec, t.alloc(bytes, catActs))
		}
		t.free(rec[tmp:]...)
		wg := t.alloc(g.block*bf16, catGrads)
		t.free(rec[:tmp]...)
		w.scratch = rec
		for id := un.saved[l][0]; id < un.saved[l][1]; id++ {
			t.free(id)
		}
		gradIn := t.alloc(g.boundary, catActs)
		t.free(gradOut, un.in[l])
		gradOut = gradIn
		w.postBackward(b, wg, first, last)
	}
	if _, grad := w.titanKept(ch); grad {
		// Sent to the previous stage and kept as the receive buffer's
		// .grad (titanKept).
		w.kept = append(w.kept, gradOut)
	} else {
		t.free(gradOut) // the embedding's
	}
	if g.s == 0 && ch == 0 && first {
		w.rootGrads = append(w.rootGrads, t.alloc((g.root-g.out)*w.rootGradBytes(), catGrads))
	}
}

// postBackward is FSDP2's post-backward of block b with its unsharded
// BF16 gradient wg (torch/distributed/fsdp/_fully_shard
// _fsdp_param_group.py post_backward, _fsdp_collectives.py
// foreach_reduce): without a pipeline, the block resharded and its
// gradient copied into the reduce-scatter's FP32 input on the
// reduce-scatter stream, whose output makes the FP32 gradient shard
// (the .grad on the step's first reduce-scatter), the input kept to the
// next reduce-scatter (comm_ctx.reduce_scatter_state); under a
// pipeline, every micro-batch but the last without gradient sync
// (torch's stage.py backward_maybe_with_nosync): the gradient
// accumulated unsharded in the reduce dtype, reduce-scattered and the
// block resharded after the last.
func (w *titanWalk) postBackward(b int, wg int32, first, last bool) {
	t, g, pl := w.t, w.g, &w.c.pl
	if pl.PP > 1 {
		if w.accum[b] < 0 {
			w.accum[b] = t.alloc(g.block*pl.GradBytes(), catGrads)
		}
		t.free(wg)
		if !last {
			return
		}
		wg, w.accum[b], first = w.accum[b], -1, true
	}
	w.reshard(b)
	w.reduceScatter(g.block, first, wg)
}

// reduceScatter is FSDP2's foreach_reduce of params parameters'
// unsharded gradients gs (torch/distributed/fsdp/_fully_shard/
// _fsdp_collectives.py, torch 2.5 era): under
// torch.cuda.stream(reduce_scatter_stream) the FP32 reduce-scatter
// input, the gradients copied into it and freed, and its output, of
// which each parameter's FP32 gradient shard is a view (the .grad on
// the step's first reduce-scatter, added to after: "The RS output is
// allocated in the RS stream and used in the default stream (for
// optimizer)"). The shards return to that stream's pool when the next
// step's zero_grad frees them, so the default stream's tensors never
// reuse their memory: reserved holds both pools.
func (w *titanWalk) reduceScatter(params float64, first bool, gs ...int32) {
	t, g := w.t, w.g
	rs := t.allocOn(reduceScatterStream, params*4, catComm)
	t.free(gs...)
	out := t.allocOn(reduceScatterStream, params*4/g.D, catGrads)
	if first {
		w.grads = append(w.grads, out)
	} else {
		t.free(out) // added to the .grad
	}
	t.free(rs)
}
