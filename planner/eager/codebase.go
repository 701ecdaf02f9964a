package eager

import "github.com/placer/placer/graph"

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

// Dims is a writer's shard, in elements (Writer.Dims).
type Dims struct {
	// Hidden, HeadDim, Heads, KVHeads and FFN are this GPU's: the query
	// and key/value heads and the FFN over the tensor degree.
	Hidden, HeadDim, Heads, KVHeads, FFN float64
	// Tokens is the GEMMs' tokens (gathered with sp), Elem the residual
	// stream's element size (FP32's 4 under autocast), BF16 BF16's.
	Tokens, Elem, BF16 float64
	// DType is the residual stream's dtype.
	DType graph.DType
}

// Dims is w's shard.
func (w Writer) Dims() Dims {
	o := w.o
	return Dims{Hidden: o.h, HeadDim: o.d, Heads: o.nh, KVHeads: o.nkv, FFN: o.f, Tokens: o.N, Elem: o.a, BF16: o.b, DType: o.at}
}

// NoMLP is whether the layer is written without its MLP (Shape.NoMLP).
func (w Writer) NoMLP() bool { return w.o.s.NoMLP }

// Add appends an op the parts do not write (its class, dtype, FLOPs
// and bytes as Op says), one launch, held to the next op.
func (w Writer) Add(typ string, cl graph.Class, dt graph.DType, flops, read, written float64) *Op {
	return w.o.add(typ, cl, dt, flops, read, written)
}

// Op is the op at index i, Last the last op's index.
func (w Writer) Op(i int32) *Op { return &w.o.ops[i] }
func (w Writer) Last() int32    { return w.o.last() }

// Norm and NormB are RMS norm over the residual stream and its backward
// (resid: the residual's gradient added to its input's).
func (w Writer) Norm()            { w.o.norm() }
func (w Writer) NormB(resid bool) { w.o.normB(resid) }

// Linear is nn.Linear of k inputs and out outputs (its input FP32 under
// autocast where castIn; role the collective beside it), returning its
// GEMM's index; LinearB its backward (the weight's gradient, then the
// input's), returning the input gradient's GEMM.
func (w Writer) Linear(k, out float64, castIn bool, role TPRole) int32 {
	return w.o.linear(k, out, castIn, role)
}
func (w Writer) LinearB(k, out float64, castIn bool, wRole, xRole TPRole) int32 {
	return w.o.linearB(k, out, castIn, wRole, xRole)
}

// Projections are separate q, k and v projections (transformers',
// torchtitan's); SplitMLP and SplitMLPB transformers' LlamaMLP (gate
// and up a GEMM each, silu(gate) * up, down) and its backward.
func (w Writer) Projections() { w.o.projections() }
func (w Writer) SplitMLP()    { w.o.splitMLP() }
func (w Writer) SplitMLPB()   { w.o.splitMLPB() }

// RotaryHalves is layers.py's rotary embedding of heads heads on
// interleaved halves (returning its stack's index), RotateHalf
// transformers' (rotate_half), ComplexRotary torchtitan's; each with
// its backward.
func (w Writer) RotaryHalves(heads float64) int32 { return w.o.rotaryHalves(heads) }
func (w Writer) RotaryHalvesB(heads float64)      { w.o.rotaryHalvesB(heads) }
func (w Writer) RotateHalf(heads float64)         { w.o.rotateHalf(heads) }
func (w Writer) RotateHalfB(heads float64)        { w.o.rotateHalfB(heads) }
func (w Writer) ComplexRotary(heads float64)      { w.o.complexRotary(heads) }

// SDPACasts are autocast's casts of the rotary outputs at ops q and k
// for SDPA, SDPACastsB their backward.
func (w Writer) SDPACasts(q, k int32) { w.o.sdpaCasts(q, k) }
func (w Writer) SDPACastsB()          { w.o.sdpaCastsB() }

// Attention is the forward from SDPA (over kvs key elements) to the
// MLP's norm, returning SDPA's FLOPs; AttentionB its backward.
func (w Writer) Attention(kvs float64) float64 { return w.o.attention(kvs) }
func (w Writer) AttentionB(sdpa, kvs float64)  { w.o.attentionB(sdpa, kvs) }

// CloseBlock is the block's last residual add, where the backward
// starts.
func (w Writer) CloseBlock() { w.o.closeBlock() }

// Clone is the copy a reshape of heads heads makes of e elements (none
// of one head); Join autograd's sum of the gradients of a tensor of e
// elements of size bytes read by two ops.
func (w Writer) Clone(heads, e float64)               { w.o.clone(heads, e) }
func (w Writer) Join(e, size float64, dt graph.DType) { w.o.join(e, size, dt) }
