package memory

import "github.com/placer/placer/planner/plan"

// The peak instant of a torchtitan step, tensor by tensor: one GPU's
// allocations and frees in one training step of pytorch/torchtitan at
// 9dec370 (train.py, torchtitan/parallelisms/parallelize_llama.py and
// pipeline_llama.py) over torch's FSDP2, tensor, context and pipeline
// parallelism (torch 2.5 era), written per stage (titanStageTrace). The
// stage's peak is the trace's maximum (memTrace.peak), and the caching
// allocator replays the same trace (Step.Allocator): parts that are
// never live at once are not summed, as Step.Peak's count of parts does.

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
