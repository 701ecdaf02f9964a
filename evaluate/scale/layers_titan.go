package scale

import "github.com/placer/placer/graph"

// titanLayers are torchtitan's layers run eager (torchtitan-0.2 with
// compile=false, its default): its Llama TransformerBlock (9dec370) as
// eager PyTorch issues it (LayerTitan: FSDP2's BF16 weights), and its
// MoE (v0.2.0 torchtitan/models/moe/moe.py: MoETitan, torch._grouped_mm
// over the local experts, one host sync with expert parallelism), with
// grouped-gemm=off its use_grouped_mm=False for-loop over the experts
// (one sync more).
type titanLayers struct{ eagerLayers }

var _ eagerStack = titanLayers{}

func (titanLayers) Name() string { return LayersTitan }

func (l titanLayers) MoE(c coster) (fwd, bwd phase) {
	impl, loop := l.experts(c.pl.Run)
	return l.moe(c, impl, loop)
}

func (titanLayers) experts(run Settings) (MoEImpl, bool) { return MoETitan, run.ExpertLoop }

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
	o.linearB(h, o.nkv*d, true, tpNone, tpNone)
	o.linearB(h, o.nkv*d, true, tpNone, tpNone)
	o.join(N*h, o.a, o.at)
	o.linearB(h, o.nh*d, true, tpBefore, tpBwdBefore)
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
