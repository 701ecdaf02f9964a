package eager

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// titanCode is torchtitan's TransformerBlock as a code base
// (LayerTitan). Its rotary tables are freqs_cis (complexRotary); the
// [batch, seq, head_dim] size BatchTables gives is unused.
type titanCode struct{}

func (titanCode) Name() string { return "torchtitan's TransformerBlock" }

func (titanCode) Traits() Traits { return Traits{FP32Norm: true, BatchTables: true, AttnGEMMs: 4} }

func (titanCode) Layer(w Writer) { w.o.titanLayer() }

func (titanCode) Loss(w Writer, _, vl float64) { w.o.titanLoss(vl) }

// Recomputed is the per-op policy on wq, wk, wv, wo, w1, w3, w2: every
// second from the second.
func (titanCode) Recomputed(i int, _, _ float64) float64 { return float64(i % 2) }

// titanLayer writes torchtitan's TransformerBlock (LayerTitan):
// transformers' norms, projections and MLP (w1, w3, w2), the rotary
// embedding as a complex product in FP32, keys and values repeated to
// every query head (repeat_kv) for SDPA without enable_gqa, no casts
// around SDPA (its rotary outputs are cast back already); then
// autograd's backward of it, repeat_kv's gradients summed back and each
// rotary gradient made contiguous for view_as_complex where transposed.
func (o *layerOps) titanLayer() {
	h, d, N, b, bt, Eq, Ek := o.h, o.d, o.N, o.b, o.bt, o.Eq, o.Ek
	rp := o.nh / o.nkv
	o.norm()
	o.projections()
	o.complexRotary(o.nh)
	o.complexRotary(o.nkv)
	kvs := Ek // the keys' (and values') elements SDPA reads
	if rp > 1 {
		if o.nkv > 1 { // repeat_kv's copies of K and V (one head's expand reshapes as a view)
			for range 2 {
				o.add("clone", dmv, bt, 0, Eq*b, Eq*b)
			}
		}
		kvs = Eq
	}
	sdpa := o.attention(kvs)
	o.splitMLP()
	o.closeBlock()
	o.splitMLPB()
	o.attentionB(sdpa, kvs)
	if rp > 1 {
		for range 2 {
			o.add("sum", red, bt, Eq, Eq*b, Ek*b)
		}
	}
	freqs := o.S * d / 2 * 8 // the complex64 table
	for _, w := range []float64{o.nkv, o.nh} {
		E := N * w * d
		o.add("_to_copy", dmv, graph.F32, 0, E*b, E*4)
		if w > 1 && w == o.nh { // SDPA's transposed gradient (k's: without repeat_kv)
			o.add("clone", dmv, graph.F32, 0, E*4, E*4)
		}
		o.add("view_as_complex", ew, graph.F32, E/2, E*4, E*4).Launches = 0
		o.add("_conj", ew, graph.F32, o.S*d/2, freqs, freqs).Launches = 0
		o.add("clone", dmv, graph.F32, 0, freqs, freqs)
		o.add("mul", ew, graph.F32, E/2, E*4+freqs, E*4)
		o.add("view_as_real", ew, graph.F32, E, E*4, E*4).Launches = 0
		o.add("_to_copy", dmv, bt, 0, E*4, E*b)
	}
	if rp == 1 {
		o.clone(o.nkv, Ek) // v's transposed gradient for its view
	}
	o.linearB(h, o.nkv*d, true, TPNone, TPNone)
	o.linearB(h, o.nkv*d, true, TPNone, TPNone)
	o.join(N*h, o.a, o.at)
	o.linearB(h, o.nh*d, true, TPBefore, TPBwdBefore)
	o.join(N*h, o.a, o.at)
	o.normB(true)
}

// complexRotary is torchtitan's rotary embedding of heads heads:
// view_as_real(view_as_complex(x.float()) * freqs).type_as(x) (the views
// recorded, no launch).
func (o *layerOps) complexRotary(heads float64) {
	E := o.N * heads * o.d
	freqs := o.S * o.d / 2 * 8
	b := o.b
	o.add("_to_copy", dmv, graph.F32, 0, E*b, E*4)
	o.add("view_as_complex", ew, graph.F32, E/2, E*4, E*4).Launches = 0
	o.add("mul", ew, graph.F32, E/2, E*4+freqs, E*4)
	o.add("view_as_real", ew, graph.F32, E, E*4, E*4).Launches = 0
	o.add("_to_copy", dmv, o.bt, 0, E*4, E*b)
}

// titanLoss is torchtitan's loss at T > 1 over Vl logits a GPU:
// loss_parallel (torch distributed/tensor/parallel/loss.py, torch 2.14.1
// as installed: _log_softmax: amax, an all-reduce (MAX), sub, exp, sum,
// an all-reduce (SUM), log, sub; _nll_loss_forward: the ignore index's
// where, _MaskPartial's mask of the targets outside the shard (lt, ge,
// bitwise_or, a clone minus the offset, the masked ones zeroed), gather,
// the partial zeroed and all-reduced (SUM), neg, the mean; backward
// _nll_loss_and_log_softmax_backward: zeros_like, the mask again, the -1
// put at the targets, (grad + exp(x)) * grad_output); funcol.all_reduce's
// copy of its input before each all-reduce. Its op names and order were
// compared with torch.profiler's record of a loss_parallel step on one
// process of a fake 4-rank group (the masked writes run as masked_fill_;
// costed as index_put_'s kernel).
func (o *layerOps) titanLoss(Vl float64) {
	N, h, b, bt, f32, i64, dm := o.N, o.h, o.b, o.bt, graph.F32, graph.I64, dmv
	add := o.add
	// funcol.all_reduce copies its input before reducing it in place.
	coll := func(k roofline.Collective, bytes float64) {
		add("clone", dm, f32, 0, bytes, bytes)
		o.coll(k, bytes)
	}
	o.linear(h, Vl, true, TPBefore)
	add("_to_copy", dm, f32, 0, N*Vl*b, N*Vl*4)
	// _log_softmax (its x.to(float32) a no-op on FP32 logits).
	add("amax", red, f32, N*Vl, N*Vl*4, N*4)
	coll(roofline.AllReduce, N*4)
	add("sub", ew, f32, N*Vl, N*Vl*4+N*4, N*Vl*4)
	add("exp", ew, f32, N*Vl, N*Vl*4, N*Vl*4)
	add("sum", red, f32, N*Vl, N*Vl*4, N*4)
	coll(roofline.AllReduce, N*4)
	add("log", ew, f32, N, N*4, N*4)
	add("sub", ew, f32, N*Vl, N*Vl*4+N*4, N*Vl*4)
	// _nll_loss_forward (mean, no class weights).
	ignore := func() { // where(target != ignore_index, ...)
		add("ne", ew, graph.Bool, N, N*8, N)
		add("where", ew, i64, N, N+N*8, N*8)
	}
	mask := func() { // _MaskPartial._mask_tensor
		add("lt", ew, graph.Bool, N, N*8, N)
		add("ge", ew, graph.Bool, N, N*8, N)
		add("bitwise_or", ew, graph.Bool, N, 2*N, N)
		add("clone", dm, i64, 0, N*8, N*8)
		add("sub", ew, i64, N, N*8, N*8)
		add("index_put_", ew, i64, N, N*8+N, N*8)
	}
	ignore()
	mask()
	add("gather", graph.ClassEmbedding, f32, 0, N*8+N*4, N*4)
	add("index_put_", ew, f32, N, N*4+N, N*4) // the partial's masked rows zeroed
	coll(roofline.AllReduce, N*4)
	add("neg", ew, f32, N, N*4, N*4)
	add("ne", ew, graph.Bool, N, N*8, N)
	add("where", ew, f32, N, N+N*4, N*4)
	add("ne", ew, graph.Bool, N, N*8, N) // total_weight
	add("sum", red, i64, N, N, 8)
	add("_to_copy", dm, f32, 0, 8, 4)
	add("sum", red, f32, N, N*4, 4)
	add("div", ew, f32, 1, 8, 4)
	o.bwd = true
	add("ones_like", dm, f32, 0, 4, 4)
	add("div", ew, f32, 1, 8, 4)
	ignore()
	add("zeros_like", dm, f32, 0, N*Vl*4, N*Vl*4)
	mask()
	add("_to_copy", dm, f32, 0, N, N*4)
	add("sub", ew, f32, N, N*4, N*4)
	add("arange", dm, i64, 0, 0, N*8)
	add("index_put_", ew, f32, N, 2*N*8+N*4, N*4)
	add("ne", ew, graph.Bool, N, N*8, N)
	add("where", ew, f32, N, N+4, N*4)
	add("exp", ew, f32, N*Vl, N*Vl*4, N*Vl*4)
	add("add", ew, f32, N*Vl, 2*N*Vl*4, N*Vl*4)
	add("mul", ew, f32, N*Vl, N*Vl*4+N*4, N*Vl*4)
	add("_to_copy", dm, bt, 0, N*Vl*4, N*Vl*b)
}
