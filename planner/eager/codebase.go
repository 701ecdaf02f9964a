package eager

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
)

// CodeBase is an eager code base's Llama layer: how it writes the ATen
// ops of one layer (Layer) and of the loss under tensor parallelism
// (Loss) with the parts every code base's layer has (Writer), how those
// parts run in it (Traits), and what of its GEMMs torchtitan's per-op
// selective recomputation runs again (Recomputed). A code base is a
// value: the in-tree ones are LayerLlamaPy, LayerHF and LayerTitan; a
// stack's layer costs (planner's LayerCoster) carry the one they
// run, and the cost model and the memory model read the op lists it
// writes (LayerOps, OutputOps at Shape.Layer). A new code base is one
// type implementing it with Writer's exported parts, wherever its layer
// costs are.
type CodeBase interface {
	// Name is whose layer it is, as placer eval's "layers costed as"
	// says it ("transformers' LlamaDecoderLayer").
	Name() string
	// Traits are how the shared parts run in the layer.
	Traits() Traits
	// Layer writes one layer's forward then backward into w (without
	// its MLP where w.NoMLP: an MoE layer's attention half). The
	// backward starts at w.CloseBlock.
	Layer(w Writer)
	// Loss writes the loss at tensor degree T > 1 over vl logits a GPU
	// of a vocabulary of v, forward and backward, between the final
	// norm and the output layer's backward (OutputOps writes those, and
	// at T 1 the loss every code base shares).
	Loss(w Writer, v, vl float64)
	// Recomputed is what of the layer's forward GEMM i (in the order
	// Layer writes them, from 0) torchtitan's per-op selective
	// recomputation runs again (its _save_list saves every second mm:
	// torchtitan's wq, wk, wv, wo, w1, w3, w2 have wk, wo and w3 run
	// again), at heads query and kv key/value heads a GPU.
	Recomputed(i int, heads, kv float64) float64
}

// Traits are how the parts every code base's layer has (Writer) run in
// one code base's layer.
type Traits struct {
	// FP32Norm: RMS norm computed in FP32, the stream upcast and cast
	// back (transformers' LlamaRMSNorm, torchtitan's RMSNorm); else in
	// the residual stream's dtype (layers.py).
	FP32Norm bool
	// BatchTables: the rotary cos and sin tables are [batch, seq,
	// head_dim] (transformers' LlamaRotaryEmbedding); else [seq,
	// head_dim/2].
	BatchTables bool
	// SeqFirst: the activations are [seq, batch, hidden] (layers.py's),
	// so that the loss copies the targets transposed; else [batch, seq,
	// hidden].
	SeqFirst bool
	// AttnGEMMs is the forward GEMMs of the attention half (the per-op
	// policy's count, which an MoE block's router continues).
	AttnGEMMs int
}

// Writer is the op list a code base writes its layer into (CodeBase),
// at one GPU's shard shape: the parts every eager Llama layer has, each
// appending its ATen ops as the exporter records them, with their
// tensor-parallel collectives (TPRole) and how long their outputs are
// held (Keep).
type Writer struct{ o *layerOps }

// Shape is one GPU's shard of a layer for one micro-batch as eager
// PyTorch runs it.
type Shape struct {
	// T is the tensor-parallel degree (heads/T query heads, max(1,
	// kv/T) key/value heads, FFN/T of the MLP), SP sequence parallelism
	// (the residual stream, its norms and adds on Seq/T of the tokens).
	T  int
	SP bool
	// Batch is the micro-batch, Seq the sequence on this GPU (with
	// context parallelism its share).
	Batch, Seq int
	// FP32Weights: autocast BF16 over FP32 weights (else BF16 weights).
	FP32Weights bool
	// Layer is whose layer: a code base (LayerLlamaPy:
	// placer_torch/profile/layers.py, LayerHF: transformers'
	// LlamaDecoderLayer, LayerTitan: torchtitan's TransformerBlock, or
	// one written elsewhere; nil: LayerLlamaPy).
	Layer CodeBase
	// NoMLP leaves the MLP out (its GEMMs, activation and their
	// backward; the norm before it and the residual after it stay): an
	// MoE layer's attention half, its experts MoEOps'.
	NoMLP bool
}

// layerOps writes one eager layer's ATen ops at shard shape s (eagerOps):
// the parts every code base's Llama layer has (RMS norm, nn.Linear, the
// residual adds, SDPA, autograd's gradient sums and AccumulateGrad), each
// code base (CodeBase: llamaPyLayer, hfLayer, titanLayer here, each in
// the file of its op list; others through Writer) putting them in its
// order with its own rotary embedding, projections and MLP.
type layerOps struct {
	opList
	s Shape
	// The shard: hidden, head dim, query and key/value heads and FFN on
	// this GPU, the sequence and batch, the GEMMs' tokens N (gathered
	// with sp) and the residual stream's Ns.
	h, d, nh, nkv, f, S, B, N, Ns float64
	// ac: autocast over FP32 weights; a and at the residual stream's
	// (and weights') element, b and bt BF16's.
	ac     bool
	a, b   float64
	at, bt graph.DType
	// c and ct are the norm's arithmetic: the residual stream's dtype, FP32
	// in transformers' and torchtitan's (upcast, with a cast each way
	// where the stream is BF16: up).
	c  float64
	ct graph.DType
	up bool
	// V is the vocabulary (the output part's).
	V float64
	// cos is one rotary table's bytes ([seq, d/2], FP32 under autocast;
	// transformers' [batch, seq, d]); Eq and Ek the query's and a key's
	// elements, lse SDPA's log-sum-exp bytes, q layers.py's QKV width.
	cos, Eq, Ek, lse, q float64
}

func newLayerOps(m transformer.Spec, s Shape) *layerOps {
	T := max(1, s.T)
	o := &layerOps{s: s, h: float64(m.Hidden), d: float64(m.HeadDim()), nh: float64(m.Heads / T), nkv: float64(max(1, m.KVHeads/T)),
		f: float64(m.FFN / T), S: float64(s.Seq), B: float64(s.Batch), ac: s.FP32Weights, a: 2, b: 2, at: graph.BF16, bt: graph.BF16}
	o.N = o.S * o.B
	o.Ns = o.N
	o.V = float64(m.Vocab)
	if s.SP && T > 1 {
		o.Ns = o.N / float64(T)
	}
	if o.ac {
		o.a, o.at = 4, graph.F32
	}
	o.c, o.ct = o.a, o.at
	o.cos = o.S * o.d / 2 * o.a
	t := s.Layer.Traits()
	if t.FP32Norm {
		o.c, o.ct, o.up = 4, graph.F32, !o.ac
	}
	if t.BatchTables {
		o.cos = o.B * o.S * o.d * o.a
	}
	o.Eq, o.Ek = o.N*o.nh*o.d, o.N*o.nkv*o.d
	o.lse = o.B * o.nh * o.S * 4
	o.q = (o.nh + 2*o.nkv) * o.d
	return o
}
