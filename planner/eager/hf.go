package eager

import "github.com/placer/placer/evaluate/roofline"

// hfCode is transformers' LlamaDecoderLayer as a code base (LayerHF).
type hfCode struct{}

func (hfCode) Name() string { return "transformers' LlamaDecoderLayer" }

func (hfCode) Traits() Traits { return Traits{FP32Norm: true, BatchTables: true, AttnGEMMs: 4} }

func (hfCode) Layer(w Writer) { w.o.hfLayer() }

func (hfCode) Loss(w Writer, v, vl float64) { w.o.hfLoss(v, vl) }

// Recomputed is the per-op policy on separate projections (q, k, v, o,
// gate, up, down): every second from the second.
func (hfCode) Recomputed(i int, _, _ float64) float64 { return float64(i % 2) }

// hfLayer writes transformers' LlamaDecoderLayer (LayerHF): q, k, v,
// gate, up, down and output projections a GEMM each, RMS norm upcast to
// FP32, rotary by rotate_half, SDPA with enable_gqa; then autograd's
// backward of it, the projections' input gradients added.
func (o *layerOps) hfLayer() {
	h, d, N := o.h, o.d, o.N
	o.norm()
	o.projections()
	o.rotateHalf(o.nh)
	q := o.last()
	o.rotateHalf(o.nkv)
	o.sdpaCasts(q, o.last())
	sdpa := o.attention(o.Ek)
	o.splitMLP()
	o.closeBlock()
	o.splitMLPB()
	o.attentionB(sdpa, o.Ek)
	o.sdpaCastsB()
	o.rotateHalfB(o.nkv)
	o.rotateHalfB(o.nh)
	for _, w := range []float64{o.nkv, o.nkv} {
		o.clone(w, w*N*d)
		o.linearB(h, w*d, true, TPNone, TPNone)
	}
	o.join(N*h, o.a, o.at)
	o.clone(o.nh, o.Eq)
	o.linearB(h, o.nh*d, true, TPBefore, TPBwdBefore)
	o.join(N*h, o.a, o.at)
	o.normB(true)
}

// projections are the q, k and v projections of transformers' and
// torchtitan's layers, the tensor-parallel gather once, before q.
func (o *layerOps) projections() {
	o.linear(o.h, o.nh*o.d, true, TPBefore)
	o.linear(o.h, o.nkv*o.d, true, TPNone)
	o.linear(o.h, o.nkv*o.d, true, TPNone)
}

// splitMLP is transformers' LlamaMLP (and torchtitan's FeedForward):
// gate and up a GEMM each, silu(gate) * up, down (none with NoMLP).
func (o *layerOps) splitMLP() {
	if o.s.NoMLP {
		return
	}
	h, f, N, b, bt := o.h, o.f, o.N, o.b, o.bt
	o.linear(h, f, true, TPBefore)
	o.add("silu", ew, bt, N*f, N*f*b, N*f*b)
	o.linear(h, f, true, TPNone)
	o.add("mul", ew, bt, N*f, 2*N*f*b, N*f*b)
	o.linear(f, h, false, TPAfter)
}

// splitMLPB is splitMLP's backward, the gate's and up's input gradients
// added.
func (o *layerOps) splitMLPB() {
	if o.s.NoMLP {
		return
	}
	h, f, N, b, bt := o.h, o.f, o.N, o.b, o.bt
	o.linearB(f, h, false, TPBwdAfter, TPNone)
	for range 2 {
		o.add("mul", ew, bt, N*f, 2*N*f*b, N*f*b)
	}
	o.linearB(h, f, true, TPNone, TPNone)
	o.add("silu_backward", ew, bt, N*f, 2*N*f*b, N*f*b)
	o.linearB(h, f, true, TPBefore, TPBwdBefore)
	o.join(N*h, o.a, o.at)
}

// rotateHalf is transformers' rotary embedding of heads heads:
// q * cos + cat(-q2, q1) * sin over [batch, seq, d] tables.
func (o *layerOps) rotateHalf(heads float64) {
	E, a, b, at, bt, cos := o.N*heads*o.d, o.a, o.b, o.at, o.bt, o.cos
	o.add("mul", ew, at, E, E*b+cos, E*a)
	o.add("neg", ew, bt, E/2, E/2*b, E/2*b)
	o.add("cat", dmv, bt, 0, E*b, E*b)
	o.add("mul", ew, at, E, E*b+cos, E*a)
	o.add("add", ew, at, E, 2*E*a, E*a)
}

// rotateHalfB is rotateHalf's backward.
func (o *layerOps) rotateHalfB(heads float64) {
	E, a, b, at, bt := o.N*heads*o.d, o.a, o.b, o.at, o.bt
	mul := func() {
		o.add("mul", ew, at, E, E*a+o.cos, E*a)
		if o.ac {
			o.add("_to_copy", dmv, bt, 0, E*a, E*b)
		}
	}
	mul()
	o.add("neg", ew, bt, E/2, E/2*b, E/2*b)
	for range 2 {
		o.add("slice_backward", ew, bt, E, E/2*b, E*b)
	}
	o.join(E, b, bt)
	mul()
	o.join(E, b, bt)
}

// hfLoss is transformers' loss at T > 1: the output layer
// "colwise_gather_output" (LlamaForCausalLM._tp_plan; ColwiseParallel
// with Replicate output): its Vl logits a GPU all-gathered over the
// group to all V and laid out by the last dimension (a cat), then the
// T 1 loss on the whole vocabulary (wholeLoss).
func (o *layerOps) hfLoss(V, Vl float64) {
	N, b := o.N, o.b
	o.linear(o.h, Vl, true, TPBefore)
	o.coll(roofline.AllGather, N*V*b)
	o.add("cat", dmv, o.bt, 0, N*V*b, N*V*b)
	lsm := o.wholeLoss(V)
	o.bwd = true
	o.wholeLossB(V, lsm)
}
