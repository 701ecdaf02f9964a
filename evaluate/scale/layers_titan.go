package scale

import (
	"github.com/placer/placer/evaluate/scale/eager"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph"
)

// titanLayers are torchtitan's layers run eager (torchtitan-0.2 with
// compile=false, its default): its Llama TransformerBlock (9dec370) as
// eager PyTorch issues it (LayerTitan: FSDP2's BF16 weights), and its
// MoE (v0.2.0 torchtitan/models/moe/moe.py: MoETitan, torch._grouped_mm
// over the local experts, one host sync with expert parallelism), with
// grouped-gemm=off its use_grouped_mm=False for-loop over the experts
// (one sync more).
type titanLayers struct{ eagerLayers }

var _ eagerStack = titanLayers{}

func (titanLayers) Name() string { return plan.LayersTitan }

func (l titanLayers) MoE(c coster) (fwd, bwd phase) {
	impl, loop := l.experts(c.pl.Run)
	return l.moe(c, impl, loop)
}

func (titanLayers) experts(run plan.Settings) (eager.MoEImpl, bool) {
	return eager.MoETitan, run.ExpertLoop
}

// titanCompiled is torchtitan's model compiled (compile=on): torch.compile
// wraps each TransformerBlock alone (9dec370
// parallelisms/parallelize_llama.py apply_compile: torch.compile of every
// child of model.layers, fullgraph=True), so the blocks are costed as
// fused kernels (fusedLayers) while the final norm, the output layer and
// the loss run eager as torchtitan writes them (train.py loss_fn:
// cross_entropy of pred.flatten(0, 1).float(), an FP32 copy of the
// logits; loss_parallel at T > 1): eagerOutput of its code.
type titanCompiled struct{ fusedLayers }

func (titanCompiled) Output(c coster) (fwd, bwd phase) { return c.eagerOutput(eager.LayerTitan) }

// Dense is a compiled block (fusedLayers') whose selective recomputation
// is torchtitan's per-op policy as the compiled graph runs it
// (titanSAC), not Megatron-Core's core attention.
//
// Its rotary embedding and repeat_kv are what Inductor leaves of them
// (titanRotary), which Transformer Engine's fused blocks do not run.
func (titanCompiled) Dense(c coster) (fwd, bwd phase) {
	a, f := half(c.attnBlock()), half(c.mlpBlock())
	rf, rb, rr := c.titanRotary()
	a.fwd, a.bwd = a.fwd.plus(c.runAll(rf...)), a.bwd.plus(c.runAll(rb...))
	if c.pl.Recompute == plan.SelectiveRecompute {
		a.rec, f.rec = c.titanSAC()
		a.rec = a.rec.plus(c.runAll(rr...))
	}
	return c.join(a, f, false)
}

// titanRotary is the kernels of torchtitan's rotary embedding and
// repeat_kv in a compiled block, forward, backward and what its per-op
// selective checkpointing recomputes (all of the forward's: none of
// these ops is in its save list, and SDPA's backward reads their
// outputs). torchtitan's apply_rotary_emb (9dec370
// torchtitan/models/llama/model.py) is
// view_as_real(view_as_complex(x.float().reshape(..., -1, 2)) *
// freqs_cis).flatten(3).type_as(x) for Q and K; Inductor does not
// generate code for complex tensors (torch/_inductor/lowering.py,
// unsupported_input_tensor: a complex input or output makes
// fallback_node_due_to_unsupported_type run the node as its ATen kernel;
// make_fallback(aten.view_as_complex, require_contiguous); the same from
// torch 2.1 to the 2.14.1 installed here, so at the December 2024
// nightly torchtitan's rows ran). So each of Q and K runs three kernels:
// a Triton kernel writing x.float() contiguous (mm is an extern cuBLAS
// kernel, so no epilogue takes it), ATen's complex mul (6 FLOPs a
// complex pair, freqs_cis read once), a Triton kernel casting back to
// BF16. repeat_kv (expand, reshape: a copy before SDPA, which runs
// without enable_gqa) is a pointwise copy that Inductor fuses with K's
// cast and that V runs alone. The backward mirrors it: repeat_kv's sums
// (K's fused with the cast of its gradient to FP32, V's alone), each
// gradient cast to FP32, multiplied by conj(freqs_cis) (the conjugate
// resolved once: ATen's clone of the table; the joint graph's CSE
// shares it between Q and K) and cast back.
func (c *coster) titanRotary() (fwd, bwd, rec []kernel) {
	m, T := c.m, float64(c.pl.TP)
	d := float64(m.HeadDim())
	eq := c.tokens * float64(m.Heads) / T * d // Q's elements
	ek := c.tokens * float64(m.KVHeads) / T * d
	freqs := float64(m.Seq) / float64(max(1, c.pl.CP)) * d / 2 * 8 // complex64 freqs_cis
	ew := func(cl graph.Class, x, read, write float64) kernel {
		return kernel{class: cl, flops: x, read: read, writes: write}
	}
	el := graph.ClassElementwise
	up := func(e float64) kernel { return ew(el, e, e*bf16, e*4) }
	mul := func(e float64) kernel { return ew(el, 3*e, e*4+freqs, e*4) }
	down := func(e float64) kernel { return ew(el, e, e*4, e*bf16) }
	rep := m.Heads / max(1, m.KVHeads)
	kDown, kUp := down(ek), up(ek)
	var vs []kernel
	if rep > 1 {
		kDown = ew(el, eq, ek*4, eq*bf16)
		kUp = ew(graph.ClassReduction, eq, eq*bf16, ek*4)
		fwdV := ew(el, eq, ek*bf16, eq*bf16)
		vs = []kernel{fwdV}
		bwd = append(bwd, ew(graph.ClassReduction, eq, eq*bf16, ek*bf16))
	}
	fwd = append([]kernel{up(eq), mul(eq), down(eq), up(ek), mul(ek), kDown}, vs...)
	bwd = append(bwd, kUp, ew(el, 0, freqs, freqs), mul(ek), down(ek), up(eq), mul(eq), down(eq))
	return fwd, bwd, fwd
}

// titanSAC is what torchtitan's per-op selective checkpointing recomputes
// of a compiled dense block, attention half and MLP half. Its policy
// (9dec370 parallelisms/parallelize_llama.py _apply_ac_to_transformer_block,
// _custom_policy) saves the outputs of the ops in _save_list (mm, the
// flash and efficient SDPA, reduce_scatter_tensor, abs and max) except
// every second mm, and marks every other op PREFER_RECOMPUTE. The block's
// mms run wq, wk, wv, wo, w1, w3, w2 (Attention.forward, FeedForward's
// w2(F.silu(w1(x)) * w3(x))), so wk, wo and w3 are recomputed; SDPA is
// saved. Compiled, the backward graph recomputes only what the backward
// reads (AOTAutograd's partitioner), all of it here: each norm's output
// (the projections' weight gradients), K through wk (SDPA's backward),
// the residual stream after the attention through wo (the MLP norm's
// backward: with sp=on its reduce-scatter is saved and wo is not run
// again), w3's output and SwiGLU's product (w2's weight gradient), the
// FP8 casts of the recomputed GEMMs' inputs (their amax saved: abs and
// max). The rotary embeddings and repeat_kv recomputed are
// titanRotary's. Without SwiGLU no third mm of the MLP is recomputed.
func (c *coster) titanSAC() (attn, mlp phase) {
	m, T := c.m, float64(c.pl.TP)
	n, h, f := c.tokens, float64(m.Hidden), float64(m.FFN)
	kw := float64(m.KVHeads) * float64(m.HeadDim()) / T
	qd := float64(m.Heads) * float64(m.HeadDim()) / T
	sp := c.sp()
	act := n * h * bf16
	norm := c.run(kernel{class: graph.ClassReduction, flops: 8 * n * h * sp, read: act * sp, writes: act * sp}).plus(c.casts(n * h * sp))
	attn = norm.plus(c.run(c.lgemm(2*n*h*kw, act+h*kw*bf16, n*kw*bf16)))
	if !c.pl.SequenceParallel || c.pl.TP <= 1 {
		_, after, _, _ := c.tpKinds()
		wo := c.lgemm(2*n*qd*h, n*qd*bf16+qd*h*bf16, act)
		attn = attn.plus(c.casts(n * qd)).plus(c.pair(wo, after, act))
	}
	mlp = norm
	if m.SwiGLU() {
		w3 := c.lgemm(2*n*h*f/T, act+h*f/T*bf16, n*f/T*bf16)
		swi := kernel{class: graph.ClassElementwise, flops: 6 * n * f / T, read: 2 * n * f / T * bf16, writes: n * f / T * bf16}
		mlp = mlp.plus(c.run(w3)).plus(c.run(swi))
	}
	return attn, mlp
}
