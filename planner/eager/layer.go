package eager

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// Eager PyTorch's Llama layer (docs/stacks.md): the ATen ops a plain
// PyTorch training step issues for one dense transformer block (RMS
// norm, rotary embedding, grouped-query SDPA, SwiGLU, no biases), each
// costed at its class's roofline rate (evaluate/roofline, the op-level
// model's) and issued by the host one launch each, in place of
// Transformer Engine's fused kernels (attnBlock, mlpBlock). The list is
// what the project's exporter (placer_torch.exporter, fake CPU tensors,
// CUDA's execution settings) records for the layer, op for op:
// TestEagerOpsMatchExporter holds it there for three layers (Layer:
// layers.py's, transformers', torchtitan's; torchtitan's with BF16
// weights only, as FSDP2 runs it).
//
// layers.py's layer, for instance: one QKV and one gate-up projection (a GEMM
// each), RMS norm in the residual stream's dtype
// (x * rsqrt(mean(x^2) + eps) * weight: pow, mean, add, rsqrt, mul, mul),
// the rotary embedding on interleaved halves (two slices, four muls, a
// sub, an add, a stack per Q and K) with FP32 tables under autocast,
// torch's flash SDPA, silu(gate) * up, residual adds. Under autocast
// ("autocast BF16 over FP32 weights") the residual stream, the norms and
// the rotary embedding run in FP32 and every matmul casts its FP32
// weight (and an FP32 input) to BF16 on every forward, their gradients
// cast back in the backward; with BF16 weights everything is BF16 and
// there are no casts. Each weight's gradient is laid out as its
// parameter by AccumulateGrad (new_empty_strided, an allocation, and a
// copy_).

// norm is RMS norm over the residual stream: x * rsqrt(mean(x^2) + eps)
// * weight.
func (o *layerOps) norm() {
	e, Ns, a, c, at, ct := o.Ns*o.h, o.Ns, o.a, o.c, o.at, o.ct
	if o.up {
		o.add("_to_copy", dmv, ct, 0, e*a, e*c)
	}
	o.add("pow", ew, ct, e, e*c, e*c)
	o.add("mean", red, ct, e, e*c, Ns*c)
	o.add("add", ew, ct, Ns, Ns*c, Ns*c)
	o.add("rsqrt", ew, ct, Ns, Ns*c, Ns*c).Keep = KeepSaved
	o.add("mul", ew, ct, e, e*c+Ns*c, e*c).Keep = KeepSaved
	if o.up {
		o.add("_to_copy", dmv, at, 0, e*c, e*a)
	}
	y := o.add("mul", ew, at, e, e*a+o.h*a, e*a)
	if !o.ac {
		y.Keep = KeepSaved // the GEMM after it saves it (under autocast its BF16 cast)
	}
}

// linear is nn.Linear of k inputs and o outputs on N tokens (its input
// FP32 under autocast where castIn), role the tensor-parallel collective
// beside its GEMM. It returns the GEMM's index: its output is a
// temporary unless the caller says what saves it. The GEMM saves its
// input (the BF16 cast where castIn) and autocast's BF16 copy of the
// weight, which autocast also caches to the end of its region.
func (o *layerOps) linear(k, out float64, castIn bool, role TPRole) int32 {
	N, b := o.N, o.b
	if o.ac && castIn {
		o.add("_to_copy", dmv, o.bt, 0, N*k*4, N*k*b).Keep = KeepSaved
	}
	if o.ac {
		o.add("_to_copy", dmv, o.bt, 0, k*out*4, k*out*b).Keep = KeepCache
	}
	o.add("mm", gmm, o.bt, 2*N*k*out, N*k*b+k*out*b, N*out*b).TP = role
	return o.last()
}

// clone is the copy a reshape of heads (permuted from [batch, heads,
// seq, d] to [seq, batch, heads x d]) makes of e elements: none of a
// single head, whose permuted layout is already a view.
func (o *layerOps) clone(heads, e float64) {
	if heads > 1 {
		o.add("clone", dmv, o.bt, 0, e*o.b, e*o.b)
	}
}

// cloneSaved is clone whose copy the GEMM after it saves.
func (o *layerOps) cloneSaved(heads, e float64) {
	if heads > 1 {
		o.add("clone", dmv, o.bt, 0, e*o.b, e*o.b).Keep = KeepSaved
	}
}

// resid is a residual add; keep is how long its sum is held (the
// next norm saves it; a block's last is the next part's input).
func (o *layerOps) resid(keep Keep) {
	e := o.Ns * o.h
	o.add("add", ew, o.at, e, e*o.a+e*o.b, e*o.a).Keep = keep
}

// join is autograd's sum of the gradients of a tensor of e elements
// that several ops read.
func (o *layerOps) join(e, size float64, dt graph.DType) { o.add("add", ew, dt, e, 2*e*size, e*size) }

// grad is a weight's gradient of e elements (BF16 from its GEMM) made
// its parameter's: cast to FP32 under autocast, laid out as the
// parameter (AccumulateGrad).
//
// In the allocation trace the parameter's .grad is the
// new_empty_strided (made on the step's first micro-batch only, as
// AccumulateGrad makes it where the gradient is None, then added to in
// place) and copy_ writes into it.
func (o *layerOps) grad(e float64) {
	a := o.a
	if o.ac {
		c := o.add("_to_copy", dmv, graph.F32, 0, e*o.b, e*4)
		c.Until = o.last() + 2 // copied into the .grad
	}
	g := o.add("new_empty_strided", dmv, o.at, 0, e*a, e*a)
	g.Launches, g.Keep = 0, KeepGrad
	o.add("copy_", dmv, o.at, 0, 2*e*a, e*a).Keep = KeepNone
}

// linearB is linear's backward: the weight's gradient, then the
// input's (the roles: attnBlock's pairs).
//
// It returns the input gradient's GEMM: what feeds the GEMMs' backward
// is held to it. The weight's gradient is held to its cast (or the copy
// into the .grad); the input's to the op after linearB.
func (o *layerOps) linearB(k, out float64, castIn bool, wRole, xRole TPRole) int32 {
	N, b := o.N, o.b
	w := o.add("mm", gmm, o.bt, 2*N*k*out, N*out*b+N*k*b, k*out*b)
	w.TP, w.Until = wRole, o.last()+2
	if !o.ac {
		w.Until = o.last() + 3
	}
	o.add("mm", gmm, o.bt, 2*N*k*out, N*out*b+k*out*b, N*k*b).TP = xRole
	x := o.last()
	o.grad(k * out)
	o.ops[x].Until = o.last() + 1
	if o.ac && castIn {
		o.add("_to_copy", dmv, graph.F32, 0, N*k*b, N*k*4)
	}
	return x
}

// residB is a residual add's backward: under autocast the BF16 branch's
// gradient of an FP32 add.
func (o *layerOps) residB() {
	if o.ac {
		o.add("_to_copy", dmv, o.bt, 0, o.Ns*o.h*4, o.Ns*o.h*o.b)
	}
}

// normB is norm's backward (with resid, the residual's gradient added
// to its input's).
func (o *layerOps) normB(resid bool) {
	e, Ns, h, a, c, at, ct := o.Ns*o.h, o.Ns, o.h, o.a, o.c, o.at, o.ct
	o.add("mul", ew, at, e, 2*e*a, e*a)
	o.add("mul", ew, at, e, e*a+h*a, e*a)
	sum := o.add("sum", red, at, e, e*a, h*a)
	sum.Until = o.last() + 2 // copied into the .grad
	g := o.add("new_empty_strided", dmv, at, 0, h*a, h*a)
	g.Launches, g.Keep = 0, KeepGrad
	o.add("copy_", dmv, at, 0, 2*h*a, h*a).Keep = KeepNone
	if o.up {
		o.add("_to_copy", dmv, ct, 0, e*a, e*c)
	}
	o.add("mul", ew, ct, e, 2*e*c, e*c)
	o.add("mul", ew, ct, e, e*c+Ns*c, e*c)
	o.add("sum", red, ct, e, e*c, Ns*c)
	if resid {
		o.join(e, a, at) // the residual's gradient
	}
	o.add("pow", ew, ct, Ns, Ns*c, Ns*c)
	o.add("mul", ew, ct, Ns, Ns*c, Ns*c)
	o.add("mul", ew, ct, Ns, 2*Ns*c, Ns*c)
	o.add("div", ew, ct, e, e*c, e*c)
	o.add("pow", ew, ct, e, e*c, e*c)
	o.add("mul", ew, ct, e, e*c, e*c)
	o.add("mul", ew, ct, e, 2*e*c, e*c)
	o.join(e, c, ct) // x's two uses (pow, mul)
	if o.up {
		o.add("_to_copy", dmv, at, 0, e*c, e*a)
	}
}

// sdpaCasts are autocast's casts of the FP32 rotary outputs for SDPA
// (none with BF16 weights), q and k the ops that wrote the query and
// the key: the casts, which SDPA saves, consume them; with BF16 weights
// SDPA saves them themselves.
func (o *layerOps) sdpaCasts(q, k int32) {
	if !o.ac {
		o.ops[q].Keep, o.ops[k].Keep = KeepSaved, KeepSaved
		return
	}
	o.add("_to_copy", dmv, o.bt, 0, o.Eq*4, o.Eq*o.b).Keep = KeepSaved
	o.ops[q].Until = o.last()
	o.add("_to_copy", dmv, o.bt, 0, o.Ek*4, o.Ek*o.b).Keep = KeepSaved
	o.ops[k].Until = o.last()
}

// sdpaCastsB are sdpaCasts' backward: the gradients cast back to FP32.
func (o *layerOps) sdpaCastsB() {
	if o.ac {
		o.add("_to_copy", dmv, graph.F32, 0, o.Ek*o.b, o.Ek*4)
		o.add("_to_copy", dmv, graph.F32, 0, o.Eq*o.b, o.Eq*4)
	}
}

// attention is the forward from SDPA to the MLP's norm: SDPA over kvs
// key (and value) elements, its output's heads laid out, the output
// projection, the residual add and the norm. It returns SDPA's FLOPs.
func (o *layerOps) attention(kvs float64) float64 {
	b := o.b
	lse := o.add("new_empty", dmv, graph.F32, 0, o.Eq*b, o.lse)
	lse.Launches, lse.Keep = 0, KeepNone // SDPA's own output below counts it
	sdpa := o.add("_scaled_dot_product_flash_attention", gmm, o.bt, 4*o.N*o.S/2*o.nh*o.d, (o.Eq+2*kvs)*b, o.Eq*b+o.lse)
	sdpa.Attn, sdpa.Keep = true, KeepSaved
	flops := sdpa.FLOPs
	o.cloneSaved(o.nh, o.Eq)
	o.linear(o.nh*o.d, o.h, false, TPAfter)
	o.resid(KeepSaved)
	o.norm()
	return flops
}

// closeBlock is the block's last residual add: an MoE layer's attention
// half under autocast adds the experts' output into the FP32 hidden
// states (transformers' experts: an FP32 branch). The backward starts
// here (residB where the block has its MLP).
func (o *layerOps) closeBlock() {
	if o.s.NoMLP && o.ac {
		o.add("add", ew, o.at, o.Ns*o.h, 2*o.Ns*o.h*o.a, o.Ns*o.h*o.a).Keep = KeepCarry
	} else {
		o.resid(KeepCarry)
	}
	o.bwd = true
	if !o.s.NoMLP {
		o.residB()
	}
}

// attentionB is attention's backward from the MLP's norm to SDPA's
// (sdpa its forward's FLOPs, kvs as attention's).
func (o *layerOps) attentionB(sdpa, kvs float64) {
	b := o.b
	o.normB(true)
	o.residB()
	o.linearB(o.nh*o.d, o.h, false, TPBwdAfter, TPNone)
	sdpaB := o.add("_scaled_dot_product_flash_attention_backward", gmm, o.bt, 2.5*sdpa, (3*o.Eq+2*kvs)*b+o.lse, (o.Eq+2*kvs)*b)
	sdpaB.Attn = true
}

// loss writes the output part's ops (OutputOps): the final norm,
// the output layer's shard of V/T logits, the loss of the FP32 logits,
// and their backward, as each code base runs it: at T 1 wholeLoss
// (layers.py's Loss, torchtitan's loss_fn and transformers' alike); at
// T > 1 the code base's (CodeBase.Loss: layers.py's vocabulary-parallel
// loss, llamaPyLoss; torchtitan's loss_parallel, titanLoss;
// transformers' gathered logits, hfLoss).
func (o *layerOps) loss() {
	T := float64(max(1, o.s.T))
	V, h := o.V, o.h
	Vl := V / T
	o.norm()
	switch {
	case T == 1:
		o.linear(h, V, true, TPBefore)
		lsm := o.wholeLoss(V)
		o.bwd = true
		g := o.wholeLossB(V, lsm)
		o.ops[g].Until = o.linearB(h, Vl, true, TPBefore, TPBwdBefore)
		o.normB(false)
		return
	default:
		o.s.Layer.Loss(Writer{o}, V, Vl)
	}
	o.linearB(h, Vl, true, TPBefore, TPBwdBefore)
	o.normB(false)
}

// coll is a tensor-parallel collective of the loss of bytes (an
// all-gather's gathered total): placer's, costed as placer costs
// collectives (Op.Comm).
func (o *layerOps) coll(k roofline.Collective, bytes float64) {
	op := o.add("all_"+[...]string{roofline.AllReduce: "reduce", roofline.AllGather: "gather", roofline.ReduceScatter: "reduce_scatter"}[k],
		dmv, graph.F32, 0, bytes, bytes)
	op.Comm, op.Coll = true, k
}

// wholeLoss is the loss of V logits on one GPU, forward:
// logits.float(), log_softmax, nll_loss; in layers.py's [seq, batch]
// layout (Traits.SeqFirst) the targets' transposed copy.
//
// It returns the log softmax's index. In the allocation trace the FP32
// logits are held to the log softmax (the BF16 ones to their cast), and
// its output, which it saves, to its backward (wholeLossB).
func (o *layerOps) wholeLoss(V float64) int32 {
	N, b := o.N, o.b
	o.add("_to_copy", dmv, graph.F32, 0, N*V*b, N*V*4)
	f32 := o.last()
	if o.s.Layer.Traits().SeqFirst && o.B > 1 { // its targets.t(), reshaped
		o.add("clone", dmv, graph.I64, 0, N*8, N*8).Keep = KeepSaved // nll_loss saves the targets
	}
	o.add("_log_softmax", red, graph.F32, 5*N*V, N*V*4, N*V*4).Keep = KeepSaved
	lsm := o.last()
	o.ops[f32].Until = lsm
	o.add("nll_loss_forward", red, graph.F32, N*V, N*V*4+N*8, 8)
	return lsm
}

// wholeLossB is wholeLoss's backward (lsm: the log softmax's index, its
// saved output freed by its backward). It returns the index of the
// logits' BF16 gradient, which the output layer's GEMMs read.
func (o *layerOps) wholeLossB(V float64, lsm int32) int32 {
	N, b := o.N, o.b
	o.add("ones_like", dmv, graph.F32, 0, 4, 4)
	o.add("nll_loss_backward", red, graph.F32, N*V, 4+N*V*4+N*8+4, N*V*4)
	o.add("_log_softmax_backward_data", red, graph.F32, 3*N*V, 2*N*V*4, N*V*4)
	o.ops[lsm].Until = o.last()
	o.add("_to_copy", dmv, o.bt, 0, N*V*4, N*V*b)
	return o.last()
}
