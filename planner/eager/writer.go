package eager

import "github.com/placer/placer/graph"

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

func (w Writer) Last() int32 { return w.o.last() }

// Norm and NormB are RMS norm over the residual stream and its backward
// (resid: the residual's gradient added to its input's).
func (w Writer) Norm() { w.o.norm() }

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

func (w Writer) SplitMLP() { w.o.splitMLP() }

func (w Writer) SplitMLPB() { w.o.splitMLPB() }

// RotaryHalves is layers.py's rotary embedding of heads heads on
// interleaved halves (returning its stack's index), RotateHalf
// transformers' (rotate_half), ComplexRotary torchtitan's; each with
// its backward.
func (w Writer) RotaryHalves(heads float64) int32 { return w.o.rotaryHalves(heads) }

func (w Writer) RotaryHalvesB(heads float64) { w.o.rotaryHalvesB(heads) }

func (w Writer) RotateHalf(heads float64) { w.o.rotateHalf(heads) }

func (w Writer) RotateHalfB(heads float64) { w.o.rotateHalfB(heads) }

func (w Writer) ComplexRotary(heads float64) { w.o.complexRotary(heads) }

// SDPACasts are autocast's casts of the rotary outputs at ops q and k
// for SDPA, SDPACastsB their backward.
func (w Writer) SDPACasts(q, k int32) { w.o.sdpaCasts(q, k) }

func (w Writer) SDPACastsB() { w.o.sdpaCastsB() }

// Attention is the forward from SDPA (over kvs key elements) to the
// MLP's norm, returning SDPA's FLOPs; AttentionB its backward.
func (w Writer) Attention(kvs float64) float64 { return w.o.attention(kvs) }

func (w Writer) AttentionB(sdpa, kvs float64) { w.o.attentionB(sdpa, kvs) }

// CloseBlock is the block's last residual add, where the backward
// starts.
func (w Writer) CloseBlock() { w.o.closeBlock() }

// Clone is the copy a reshape of heads heads makes of e elements (none
// of one head); Join autograd's sum of the gradients of a tensor of e
// elements of size bytes read by two ops.
func (w Writer) Clone(heads, e float64) { w.o.clone(heads, e) }

func (w Writer) Join(e, size float64, dt graph.DType) { w.o.join(e, size, dt) }
