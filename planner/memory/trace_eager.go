package memory

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/eager"
	"github.com/placer/placer/planner/plan"
)

// The peak instant of an eager stack, tensor by tensor: a training step
// of plain PyTorch written as the allocations and frees its ops make
// (eagerStepTrace), from the same op lists the eager stacks cost
// (eager.LayerOps, eager.OutputOps), each op's output held as long as
// PyTorch holds it (eager.Op.Keep and until: saved for the backward,
// cached by autocast, a temporary its consumer frees). The peak is the
// trace's maximum (memTrace.peak), and the caching allocator replays
// the same trace (Step.Allocator).

// partRun is one part's (a block's, the output's) tensors between its
// forward and its backward in one micro-batch.
type partRun struct {
	at   [][]int32 // by op index: the tensors freed once it has run
	held []int32   // freed at the end of the part's backward
	in   int32     // its input, the previous part's output
	out  int32     // its output (keepCarry)
}

// until is the index of the op after which op i's output is freed.
func until(ops []eager.Op, i int) int {
	if u := int(ops[i].Until); u > 0 {
		return u
	}
	return i + 1
}

// forward writes ops' forward allocations into t (in: the part's
// input; cat: the part of its activations; rec: checkpointed, its saved
// tensors dropped and its weight copies left to autocast's cache, cache;
// recomputing: the backward's recomputation, its output dropped).
func (t *memTrace) forward(ops []eager.Op, in int32, cat memCat, rec, recomputing bool, cache *[]int32) *partRun {
	r := &partRun{at: make([][]int32, len(ops)+1), in: in, out: -1}
	later := func(u int, id int32) { r.at[min(u, len(ops))] = append(r.at[min(u, len(ops))], id) }
	for i := range ops {
		op := &ops[i]
		if op.Backward {
			break
		}
		if op.Keep != eager.KeepNone && op.Keep != eager.KeepGrad {
			c := cat
			if op.Keep == eager.KeepCache {
				c = catCopies
			}
			id := t.alloc(op.Written, c)
			switch {
			case op.Keep == eager.KeepCarry && !recomputing:
				r.out = id
			case op.Keep == eager.KeepCache && rec:
				*cache = append(*cache, id)
			case op.Keep == eager.KeepCache, op.Keep == eager.KeepSaved && !rec && op.Until == 0:
				r.held = append(r.held, id)
			case op.Keep == eager.KeepSaved && !rec:
				later(int(op.Until), id)
			default:
				later(until(ops, i), id)
			}
		}
		t.free(r.at[i]...)
		r.at[i] = nil
	}
	if rec {
		// The checkpoint's forward returns its output alone: what it
		// made for later is dropped with it.
		for i := range r.at {
			t.free(r.at[i]...)
			r.at[i] = nil
		}
	}
	return r
}

// backward writes ops' backward allocations into t and frees what r
// held (first: the step's first micro-batch, which makes the .grads,
// appended to grads; grad the gradient of the part's output, held
// through it: bytes).
func (t *memTrace) backward(ops []eager.Op, r *partRun, cat memCat, first bool, grads *[]int32, grad float64) {
	g := t.alloc(grad, cat)
	for i := range ops {
		op := &ops[i]
		if op.Backward {
			switch op.Keep {
			case eager.KeepNone:
			case eager.KeepGrad:
				if first {
					*grads = append(*grads, t.alloc(op.Written, catGrads))
				}
			default:
				u := min(until(ops, i), len(ops))
				r.at[u] = append(r.at[u], t.alloc(op.Written, cat))
			}
		}
		t.free(r.at[i]...)
		r.at[i] = nil
	}
	t.free(r.at[len(ops)]...)
	t.free(r.held...)
	t.free(r.in, g)
}

// stepTraced is plan c.pl's step trace on one GPU, its first micro of
// its micro-batches (at least 1) in each of two steps, where the plan's
// stack writes one (Step.Eager: a plain PyTorch loop's layers, never a
// profile's, which times kernels and holds no tensors) and the plan is
// one GPU's (eagerTraceable), with the measured error of its peak.
func (c *counter) stepTraced(micro int) (memTrace, plan.RegimeError, bool) {
	if c.eager == nil || !eagerTraceable(c) {
		return memTrace{}, plan.RegimeError{}, false
	}
	return eagerStepTrace(c, c.eager.Layer, max(1, min(micro, c.pl.NumMicro))), c.eager.Error, true
}

// eagerTraceable is whether eagerStepTrace writes plan pl's step: one
// GPU's whole model (no pipeline, tensor, context or data parallelism:
// no collective's buffers and no DDP gradient buckets), dense, no FP8,
// no prediction modules; no recomputation, or full recomputation of
// every block or of the first recompute-layers of them
// (torch.utils.checkpoint around each; selective recomputation's
// per-op policy is not traced).
func eagerTraceable(c *counter) bool {
	pl, m := &c.pl, &c.m
	return pl.PP == 1 && pl.TP == 1 && pl.CP == 1 && pl.DP == 1 && pl.EP <= 1 && !pl.FSDP && !pl.DistOpt &&
		pl.FP8 == "" && !m.MoE() && c.prediction == nil && max(pl.VP, 1) == 1 &&
		(pl.Recompute == plan.NoRecompute || pl.Recompute == plan.FullRecompute)
}

// eagerStepTrace is the allocations of a plain PyTorch training loop on
// one GPU, code base code's layers (placer_torch/profile/sweep.py's
// loop: per micro-batch forward under autocast and backward, then
// AdamW's step and zero_grad(set_to_none=True)), for two steps of micro
// micro-batches each (the first makes AdamW's state; a step's first
// micro-batch makes the .grads, the second finds them made: every
// later micro-batch is the second's again):
//   - the parameters, one tensor each (the weights' dtype);
//   - a micro-batch's forward: the embedding's lookup and its masked
//     copy (layers.py's vocabulary-parallel embedding: the input of the
//     first block), each block's ops (eager.LayerOps) and the output
//     part's (eager.OutputOps), each output held as its op's keep says;
//     autocast's cached weight copies that no GEMM saved (the
//     checkpointed blocks') freed at the end of the region;
//   - its backward from the loss: the output part's ops, each block's
//     from the last (recomputing its forward first where checkpointed),
//     the gradient of each part's output held through it, the
//     embedding's gradient (a .grad on the first micro-batch, else a
//     temporary added to it);
//   - AdamW's two moments of each parameter, made at the first step's
//     end (torch.optim.AdamW's _init_group: zeros_like each), and
//     zero_grad freeing the .grads.
func eagerStepTrace(c *counter, code eager.CodeBase, micro int) memTrace {
	m, pl := &c.m, &c.pl
	sh := eager.Shape{T: 1, Batch: pl.MBS, Seq: m.Seq, FP32Weights: pl.Run.FP32Weights, Layer: code}
	layer, out := eager.LayerOps(*m, sh), eager.OutputOps(*m, sh)
	a := 2.0
	if pl.Run.FP32Weights {
		a = 4
	}
	h, V, N := float64(m.Hidden), float64(m.Vocab), c.tokens
	params := eagerParams(m)
	var t memTrace
	for _, p := range params {
		t.alloc(p*a, catWeights)
	}
	L := pl.Stages[0]
	rec := int(pl.Recomputed(0))
	runs := make([]*partRun, L)
	var opt []int32
	for step := range 2 {
		var grads []int32
		for mb := range micro {
			first := mb == 0
			// The forward, under autocast.
			t.free(t.alloc(N*h*a, catActs)) // F.embedding's output, masked into x
			x := t.alloc(N*h*a, catActs)
			var cache []int32
			for l := range L {
				runs[l] = t.forward(layer, x, catActs, l < rec, false, &cache)
				x = runs[l].out
			}
			o := t.forward(out, x, catLoss, false, false, nil)
			t.free(cache...)
			// The backward.
			t.backward(out, o, catLoss, first, &grads, 0)
			for l := L - 1; l >= 0; l-- {
				r := runs[l]
				if l < rec {
					r = t.forward(layer, r.in, catActs, false, true, nil)
				}
				t.backward(layer, r, catActs, first, &grads, N*h*a)
				runs[l] = nil
			}
			g := t.alloc(N*h*a, catActs) // the embedding's output gradient
			e := t.alloc(V*h*a, catGrads)
			t.free(g)
			if first {
				grads = append(grads, e)
			} else {
				t.free(e)
			}
		}
		if step == 0 {
			for _, p := range params {
				opt = append(opt, t.alloc(p*a, catOpt), t.alloc(p*a, catOpt))
			}
		}
		t.free(grads...)
	}
	return t
}

// eagerParams is the parameters of model m as layers.py's Model holds
// them, elements each: the embedding, each block's (its norms, QKV,
// output projection, gate-up and down weights, and what else the
// block's count has, one tensor), the final norm and the output layer.
func eagerParams(m *transformer.Spec) []float64 {
	h, f, d := float64(m.Hidden), float64(m.FFN), float64(m.HeadDim())
	q := float64(m.Heads+2*m.KVHeads) * d
	block := []float64{h, h, h * q, float64(m.Heads) * d * h, h * 2 * f, f * h}
	var sum float64
	for _, p := range block {
		sum += p
	}
	if rest := float64(transformer.LayerParams(*m)) - sum; rest >= 1 {
		block = append(block, rest)
	}
	ps := []float64{float64(transformer.EmbeddingParams(*m))}
	for range m.Layers {
		ps = append(ps, block...)
	}
	return append(ps, float64(transformer.OutputParams(*m)-int64(m.Hidden)), float64(m.Hidden))
}
