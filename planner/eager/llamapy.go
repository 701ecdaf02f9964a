package eager

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// llamaPyCode is layers.py's Block as a code base (LayerLlamaPy).
type llamaPyCode struct{}

func (llamaPyCode) Name() string { return "placer_torch.profile.layers' Block" }

func (llamaPyCode) Traits() Traits { return Traits{SeqFirst: true, AttnGEMMs: 2} }

func (llamaPyCode) Layer(w Writer) { w.o.llamaPyLayer() }

func (llamaPyCode) Loss(w Writer, _, vl float64) { w.o.llamaPyLoss(vl) }

// Recomputed maps torchtitan's per-op policy onto layers.py's fused
// GEMMs: of the QKV GEMM wk's share, the output projection, of the
// gate-up GEMM w3's half, not the down projection.
func (llamaPyCode) Recomputed(i int, heads, kv float64) float64 {
	return [...]float64{kv / (heads + 2*kv), 1, 0.5, 0}[i]
}

// llamaPyLayer writes layers.py's Block (LayerLlamaPy): one QKV and one
// gate-up GEMM, RMS norm in the residual stream's dtype, the rotary
// embedding on interleaved halves, torch's flash SDPA, silu(gate) * up;
// then autograd's backward of it, the QKV gradients' heads laid out and
// concatenated for the QKV GEMM's.
func (o *layerOps) llamaPyLayer() {
	h, f, N, b, bt := o.h, o.f, o.N, o.b, o.bt
	o.norm()
	// The QKV GEMM's output is held while SDPA saves the values, a view
	// of it (as the gate-up GEMM's is while SiLU and the product save
	// the gate and the up halves, views of it).
	o.ops[o.linear(h, o.q, true, TPBefore)].Keep = KeepSaved
	q := o.rotaryHalves(o.nh)
	k := o.rotaryHalves(o.nkv)
	o.sdpaCasts(q, k)
	sdpa := o.attention(o.Ek)
	if !o.s.NoMLP {
		o.ops[o.linear(h, 2*f, true, TPBefore)].Keep = KeepSaved
		o.add("silu", ew, bt, N*f, N*f*b, N*f*b).Keep = KeepSaved
		o.add("mul", ew, bt, N*f, 2*N*f*b, N*f*b).Keep = KeepSaved
		o.linear(f, h, false, TPAfter)
	}
	o.closeBlock()
	if !o.s.NoMLP {
		o.linearB(f, h, false, TPBwdAfter, TPNone)
		for range 2 {
			o.add("mul", ew, bt, N*f, 2*N*f*b, N*f*b)
		}
		o.add("silu_backward", ew, bt, N*f, 2*N*f*b, N*f*b)
		o.add("cat", dmv, bt, 0, 2*N*f*b, 2*N*f*b)
		o.linearB(h, 2*f, true, TPBefore, TPBwdBefore)
	}
	o.attentionB(sdpa, o.Ek)
	o.sdpaCastsB()
	o.rotaryHalvesB(o.nkv)
	o.rotaryHalvesB(o.nh)
	o.clone(o.nkv, o.Ek)
	o.clone(o.nkv, o.Ek)
	o.clone(o.nh, o.Eq)
	o.add("cat", dmv, bt, 0, (o.Eq+2*o.Ek)*b, (o.Eq+2*o.Ek)*b)
	o.linearB(h, o.q, true, TPBefore, TPBwdBefore)
	o.normB(true)
}

// rotaryHalves is layers.py's rotary embedding of heads heads on
// interleaved halves: two slices' muls, a sub, two muls, an add, a
// stack (FP32 tables under autocast). It returns the stack's index
// (held to what consumes it: sdpaCasts). The products are held to the
// sub and the add that read them, their results to the stack (the
// muls save the tables, not the query: nothing of it is saved here).
func (o *layerOps) rotaryHalves(heads float64) int32 {
	half, a, b, at, cos := o.N*heads*o.d/2, o.a, o.b, o.at, o.cos
	i := o.last() + 1
	for range 2 {
		o.add("mul", ew, at, half, half*b+cos, half*a)
	}
	o.add("sub", ew, at, half, 2*half*a, half*a)
	for range 2 {
		o.add("mul", ew, at, half, half*b+cos, half*a)
	}
	o.add("add", ew, at, half, 2*half*a, half*a)
	o.add("stack", dmv, at, 0, 2*half*a, 2*half*a)
	o.ops[i].Until, o.ops[i+2].Until, o.ops[i+3].Until = i+2, i+6, i+5
	return o.last()
}

// rotaryHalvesB is rotaryHalves' backward.
func (o *layerOps) rotaryHalvesB(heads float64) {
	half, E, a, b, at, bt := o.N*heads*o.d/2, o.N*heads*o.d, o.a, o.b, o.at, o.bt
	mul := func() {
		o.add("mul", ew, at, half, half*a+o.cos, half*a)
		if o.ac {
			o.add("_to_copy", dmv, bt, 0, half*a, half*b)
		}
	}
	mul()
	mul()
	o.add("neg", ew, at, half, half*a, half*a)
	for range 2 {
		mul()
		o.add("add", ew, bt, half, 2*half*b, half*b)
	}
	for range 2 {
		o.add("slice_backward", ew, bt, E, half*b, E*b)
	}
	o.add("add", ew, bt, E, 2*E*b, E*b)
}

// llamaPyLoss is layers.py's Loss at T > 1 over Vl logits a GPU
// (placer_torch/profile/layers.py): vocabulary parallel by hand: the detached
// max all-reduced (MAX), the sum of the shifted exponentials and the
// target's logit (gather of the clamped local index, times whether it is
// in the shard) all-reduced (SUM), log, add, sub, mean; autograd's
// backward of those.
func (o *layerOps) llamaPyLoss(Vl float64) {
	N, h, b, bt, f32, i64, dm := o.N, o.h, o.b, o.bt, graph.F32, graph.I64, dmv
	add, coll := o.add, o.coll
	o.linear(h, Vl, true, TPBefore)
	add("_to_copy", dm, f32, 0, N*Vl*b, N*Vl*4)
	add("amax", red, f32, N*Vl, N*Vl*4, N*4)
	coll(roofline.AllReduce, N*4)
	add("sub", ew, f32, N*Vl, N*Vl*4+N*4, N*Vl*4)
	add("exp", ew, f32, N*Vl, N*Vl*4, N*Vl*4)
	add("sum", red, f32, N*Vl, N*Vl*4, N*4)
	add("ge", ew, graph.Bool, N, N*8, N)
	add("lt", ew, graph.Bool, N, N*8, N)
	add("bitwise_and", ew, graph.Bool, N, 2*N, N)
	add("sub", ew, i64, N, N*8, N*8)
	add("clamp", ew, i64, N, N*8, N*8)
	add("gather", graph.ClassEmbedding, f32, 0, N*8+N*4, N*4)
	add("mul", ew, f32, N, N*4+N, N*4)
	coll(roofline.AllReduce, N*4)
	coll(roofline.AllReduce, N*4)
	add("log", ew, f32, N, N*4, N*4)
	add("add", ew, f32, N, 2*N*4, N*4)
	add("sub", ew, f32, N, 2*N*4, N*4)
	add("mean", red, f32, N, N*4, 4)
	o.bwd = true
	add("ones_like", dm, f32, 0, 4, 4)
	add("div", ew, f32, N, N*4, N*4)
	add("neg", ew, f32, N, N*4, N*4)
	add("div", ew, f32, N, 2*N*4, N*4)
	add("mul", ew, f32, N, N*4+N, N*4)
	add("new_zeros", dm, f32, 0, N*4, N*Vl*4)
	add("scatter_add", graph.ClassEmbedding, f32, 0, N*Vl*4+N*8+N*4, N*Vl*4)
	add("mul", ew, f32, N*Vl, 2*N*Vl*4, N*Vl*4)
	add("add", ew, f32, N*Vl, 2*N*Vl*4, N*Vl*4)
	add("_to_copy", dm, bt, 0, N*Vl*4, N*Vl*b)
}
