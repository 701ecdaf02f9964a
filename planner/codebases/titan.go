package codebases

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/eager"
	"github.com/placer/placer/planner/mechanisms"
	"github.com/placer/placer/planner/plan"
)

// Titan are torchtitan's layers run eager (torchtitan-0.2 with
// compile=false, its default): its Llama TransformerBlock (9dec370) as
// eager PyTorch issues it (LayerTitan: FSDP2's BF16 weights), and its
// MoE (v0.2.0 torchtitan/models/moe/moe.py: MoETitan, torch._grouped_mm
// over the local experts, one host sync with expert parallelism), with
// grouped-gemm=off its use_grouped_mm=False for-loop over the experts
// (one sync more).
type Titan struct{ Eager }

var _ EagerStack = Titan{}

func (Titan) Name() string { return plan.LayersTitan }

// When is torchtitan's eager layers' declaration: a torchtitan stack run
// eager (compile=off, its default).
func (Titan) When() cost.When { return titanWhen }

var titanWhen = cost.When{eagerLayers, titanLayers}

func (l Titan) MoE(b cost.Blocks) (fwd, bwd phase) {
	c := b.Base()
	impl, loop := l.Experts(c.Plan.Run)
	return l.MoEWith(b, impl, loop)
}

func (Titan) Experts(run plan.Settings) (eager.MoEImpl, bool) {
	return eager.MoETitan, run.ExpertLoop
}

// TitanCompiled is torchtitan's model compiled (compile=on): torch.compile
// wraps each TransformerBlock alone (9dec370
// parallelisms/parallelize_llama.py apply_compile: torch.compile of every
// child of model.layers, fullgraph=True), so the blocks are costed as
// fused kernels (Fused) while the final norm, the output layer and
// the loss run eager as torchtitan writes them (train.py loss_fn:
// cross_entropy of pred.flatten(0, 1).float(), an FP32 copy of the
// logits; loss_parallel at T > 1): EagerOutput of its code.
type TitanCompiled struct{ Fused }

var _ cost.CodeBase = TitanCompiled{}

// Name is torchtitan's compiled layers' registered name.
func (TitanCompiled) Name() string { return LayersTitanCompiled }

// LayersTitanCompiled is the name TitanCompiled is registered under:
// what a figure's provenance names (priced_by's code_base); no stack
// names it in its settings, which choose it by compile=on
// (TitanCompiled.When).
const LayersTitanCompiled = "torchtitan-compiled"

// When is torchtitan's compiled layers' declaration: a torchtitan stack
// compiled (compile=on).
func (TitanCompiled) When() cost.When { return titanCompiledWhen }

var titanCompiledWhen = cost.When{cost.Not(eagerLayers), titanLayers}

func (TitanCompiled) Output(b cost.Blocks) (fwd, bwd phase) { return EagerOutput(b, eager.LayerTitan) }

// Dense is a compiled block (Fused') whose selective recomputation
// is torchtitan's per-op policy as the compiled graph runs it
// (TitanSAC), not Megatron-Core's core attention.
//
// Its rotary embedding and repeat_kv are what Inductor leaves of them
// (TitanRotary), which Transformer Engine's fused blocks do not run; its
// residual adds and norms are Inductor's fusions of them
// (TitanResidualNorms).
func (TitanCompiled) Dense(b cost.Blocks) (fwd, bwd phase) {
	c := b.Base()
	a, f := cost.Half(b.AttnBlock()), cost.Half(b.MLPBlock())
	rf, rb, rr := TitanRotary(b)
	a.Fwd, a.Bwd = a.Fwd.Plus(c.RunAll(rf...)), a.Bwd.Plus(c.RunAll(rb...))
	// The residual adds and norms as Inductor fuses them, in place of the
	// fused blocks' (each a run of kernels: launches and busy time only).
	tf, tb, ff, fb := TitanResidualNorms(b)
	a.Fwd = a.Fwd.Plus(c.RunAll(tf...)).Plus(cost.Scale(c.RunAll(ff...), -1))
	a.Bwd = a.Bwd.Plus(c.RunAll(tb...)).Plus(cost.Scale(c.RunAll(fb...), -1))
	// wq, wk, wv and w1, w3 as the separate GEMMs torchtitan's block runs,
	// in place of the fused blocks' QKV and gate-up GEMMs.
	for i, pr := range TitanProjections(b) {
		p := &a
		if i == 1 {
			p = &f
		}
		p.Fwd = p.Fwd.Plus(c.RunAll(pr.TitanF...)).Plus(cost.Scale(c.RunAll(pr.FusedF...), -1))
		p.Bwd = p.Bwd.Plus(c.RunAll(pr.TitanB...)).Plus(pr.InNorm).Plus(cost.Scale(c.RunAll(pr.FusedB...), -1))
	}
	ua, uf := TitanUnfusedBwd(b)
	a.Bwd, f.Bwd = a.Bwd.Plus(ua), f.Bwd.Plus(uf)
	raf, rab, rmf, rmb := TitanRowwiseUnfused(b)
	a.Fwd, a.Bwd, f.Fwd, f.Bwd = a.Fwd.Plus(raf), a.Bwd.Plus(rab), f.Fwd.Plus(rmf), f.Bwd.Plus(rmb)
	caf, cab, cmf, cmb := TitanSeqCopies(b)
	a.Fwd, a.Bwd, f.Fwd, f.Bwd = a.Fwd.Plus(caf), a.Bwd.Plus(cab), f.Fwd.Plus(cmf), f.Bwd.Plus(cmb)
	saf, sab, smf, smb := TitanSymmMemKernels(b)
	a.Fwd, a.Bwd, f.Fwd, f.Bwd = a.Fwd.Plus(saf), a.Bwd.Plus(sab), f.Fwd.Plus(smf), f.Bwd.Plus(smb)
	if c.Plan.Recompute == plan.SelectiveRecompute {
		a.Rec, f.Rec = TitanSAC(b)
		a.Rec = a.Rec.Plus(c.RunAll(rr...))
	}
	return b.Join(a, f, false)
}

// TitanRotary is the kernels of torchtitan's rotary embedding and
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
func TitanRotary(b cost.Blocks) (fwd, bwd, rec []kernel) {
	c := b.Base()
	m, T := c.M, float64(c.Plan.TP)
	d := float64(m.HeadDim())
	eq := c.Tokens * float64(m.Heads) / T * d // Q's elements
	ek := c.Tokens * float64(m.KVHeads) / T * d
	freqs := float64(m.Seq) / float64(max(1, c.Plan.CP)) * d / 2 * 8 // complex64 freqs_cis
	ew := func(cl graph.Class, x, read, write float64) kernel {
		return kernel{Class: cl, FLOPs: x, Read: read, Writes: write}
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

// TitanSAC is what torchtitan's per-op selective checkpointing recomputes
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
// TitanRotary's. Without SwiGLU no third mm of the MLP is recomputed.
func TitanSAC(b cost.Blocks) (attn, mlp phase) {
	c := b.Base()
	m, T := c.M, float64(c.Plan.TP)
	n, h, f := c.Tokens, float64(m.Hidden), float64(m.FFN)
	kw := float64(m.KVHeads) * float64(m.HeadDim()) / T
	qd := float64(m.Heads) * float64(m.HeadDim()) / T
	sp := c.SP()
	act := n * h * bf16
	norm := c.Run(kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h * sp, Read: act * sp, Writes: act * sp}).Plus(mechanisms.Casts(c, n*h*sp))
	attn = norm.Plus(c.Run(c.LGEMM(2*n*h*kw, act+h*kw*bf16, n*kw*bf16)))
	if !c.Plan.SequenceParallel || c.Plan.TP <= 1 {
		_, after, _, _ := c.TPKinds()
		wo := c.LGEMM(2*n*qd*h, n*qd*bf16+qd*h*bf16, act)
		attn = attn.Plus(mechanisms.Casts(c, n*qd)).Plus(c.Pair(wo, after, act))
	}
	mlp = norm
	if m.SwiGLU() {
		w3 := c.LGEMM(2*n*h*f/T, act+h*f/T*bf16, n*f/T*bf16)
		swi := kernel{Class: graph.ClassElementwise, FLOPs: 6 * n * f / T, Read: 2 * n * f / T * bf16, Writes: n * f / T * bf16}
		mlp = mlp.Plus(c.Run(w3)).Plus(c.Run(swi))
	}
	return attn, mlp
}

// TitanResidualNorms is a compiled block's residual adds and RMS norms as
// Inductor fuses them (titan, forward and backward) and what the fused
// blocks (AttnBlock, MLPBlock) charge for them (fused): the caller
// swaps the one for the other. torchtitan's block (9dec370
// torchtitan/models/llama/model.py TransformerBlock.forward) is
// h = x + attention(attention_norm(x)); out = h + feed_forward(ffn_norm(h)),
// its RMSNorm (torchtitan/models/norms.py, norm_type "rmsnorm" in its
// train_configs) x.float() * rsqrt(mean(x^2) + eps), cast back, times
// the weight. Between the extern GEMMs Inductor fuses each run of
// pointwise ops into the reduction that reads them: forward
// attention_norm alone (the block's input comes from outside the graph),
// the attention's residual add with ffn_norm (one kernel reading x and
// the projection's output, writing h and the normed h), the MLP's
// residual add alone (the next block is another graph). Backward an
// add's gradient is its output's (no kernel); each norm's input gradient
// is one row reduction that also adds the residual's gradient (reading
// the gradient, the norm's input and the residual's gradient, writing
// one), its weight's gradient a reduction over the tokens, which
// Inductor splits in two kernels where the hidden size is under 64 a
// multiprocessor (torch/_inductor/ir.py Reduction.num_splits: no split
// when numel_hint >= num_sm * 2 * 32; the same test since torch 2.1;
// 8,448 on an H100 SXM's 132 SMs, h100SMs, which every torchtitan
// row ran on), its second kernel's FP32 partials
// negligible beside the activations (both read the gradient and the
// input).
func TitanResidualNorms(b cost.Blocks) (titanF, titanB, fusedF, fusedB []kernel) {
	c := b.Base()
	m := c.M
	if m.Mixed() || m.MLA() || m.NormsPerBlock() > 2 {
		return nil, nil, nil, nil
	}
	n, h, sp := c.Tokens, float64(m.Hidden), c.SP()
	act := n * h * bf16 * sp
	rd, el := graph.ClassReduction, graph.ClassElementwise
	norm := kernel{Class: rd, FLOPs: 8 * n * h * sp, Read: act, Writes: act}
	resid := kernel{Class: el, FLOPs: 3 * n * h * sp, Read: 2 * act, Writes: 1.5 * act}
	fusedF = []kernel{norm, resid, norm, resid}
	fusedB = []kernel{cost.Twice(resid), cost.Twice(norm), cost.Twice(resid), cost.Twice(norm)}
	add := kernel{Class: el, FLOPs: n * h * sp, Read: 2 * act, Writes: act}
	addNorm := kernel{Class: rd, FLOPs: 9 * n * h * sp, Read: 2 * act, Writes: 2 * act}
	titanF = []kernel{norm, addNorm, add}
	dx := kernel{Class: rd, FLOPs: 10 * n * h * sp, Read: 3 * act, Writes: act}
	dw := []kernel{{Class: rd, FLOPs: 2 * n * h * sp, Read: 2 * act}}
	if h < h100SMs*64 {
		dw = append(dw, kernel{Class: rd, FLOPs: 0})
	}
	for range 2 {
		titanB = append(append(titanB, dx), dw...)
	}
	return titanF, titanB, fusedF, fusedB
}

// h100SMs is an H100 SXM5's streaming multiprocessors (NVIDIA H100 Tensor
// Core GPU Architecture whitepaper, 2022: 132 SMs on the SXM5 part).
const h100SMs = 132

// ProjSwap is one block half's input projections as torchtitan's
// compiled block runs them (TitanF, TitanB: forward, backward) and as
// the fused blocks charge them (fusedF, fusedB), which the caller swaps;
// InNorm is the input gradients' sum where the norm's backward reads it
// (no kernel of its own).
type ProjSwap struct {
	TitanF, TitanB, FusedF, FusedB []kernel
	InNorm                         phase
}

// TitanProjections is a compiled torchtitan block's input projections,
// attention half then MLP half: torchtitan's Attention has wq, wk and wv
// and its FeedForward w1 and w3, each its own nn.Linear (9dec370
// torchtitan/models/llama/model.py; the same at v0.2.0), so torch.compile
// runs each as its own extern cuBLAS mm (Inductor merges parallel
// linears only under pre_grad_fusion_options, empty by default:
// torch/_inductor/config.py, as installed here at 2.14.1), each reading
// the whole input, where the fused blocks (AttnBlock, MLPBlock) read it
// once in one GEMM of the summed width. Each GEMM at its own shape and
// bytes: forward reads the input and the weight and writes its output;
// the input gradient reads the output's gradient and the weight and
// writes an input-sized gradient; the weight gradient reads the input
// and the output's gradient and writes the weight's (BF16: FSDP2's
// unsharded gradient). At the narrow shards of tensor parallelism (wk,
// wv: kv heads x head width / T columns) they are memory-bound. Autograd
// sums the input gradients: with tensor parallelism (T > 1) the sum is
// Partial and goes to its collective (the all-reduce, or with sp=on the
// reduce-scatter of PrepareModuleInput's all-gather), so it is one
// Inductor kernel reading every gradient and writing the sum; at T = 1
// Inductor fuses it into the norm's backward reduction, which then
// reads the other gradients too (no launch). The fused blocks charge
// each backward GEMM the forward's bytes (back), as here swapped out.
func TitanProjections(b cost.Blocks) []ProjSwap {
	c := b.Base()
	m, T := c.M, float64(c.Plan.TP)
	if m.Mixed() || m.MLA() {
		return nil
	}
	n, h := c.Tokens, float64(m.Hidden)
	d := float64(m.HeadDim())
	act := n * h * bf16
	swap := func(cols []float64) ProjSwap {
		var s ProjSwap
		total := 0.0
		for _, o := range cols {
			total += o
			s.TitanF = append(s.TitanF, c.LGEMM(2*n*h*o, act+h*o*bf16, n*o*bf16))
			dgrad := c.Back(c.LGEMM(2*n*h*o, n*o*bf16+h*o*bf16, act))
			wgrad := c.Back(c.LGEMM(2*n*h*o, act+n*o*bf16, h*o*bf16))
			s.TitanB = append(s.TitanB, dgrad, wgrad)
		}
		k := float64(len(cols))
		if T > 1 {
			s.TitanB = append(s.TitanB, kernel{Class: graph.ClassElementwise, FLOPs: (k - 1) * n * h, Read: k * act, Writes: act})
		} else {
			s.InNorm = c.Run(kernel{Class: graph.ClassReduction, FLOPs: (k - 1) * n * h, Read: (k - 1) * act})
			s.InNorm.Busy -= c.H.Launch
			s.InNorm.Launches = 0
		}
		g := c.LGEMM(2*n*h*total, act+h*total*bf16, n*total*bf16)
		s.FusedF, s.FusedB = []kernel{g}, []kernel{c.Back(g), c.Back(g)}
		return s
	}
	kv := float64(m.KVHeads) * d / T
	attn := swap([]float64{float64(m.Heads) * d / T, kv, kv})
	if !m.SwiGLU() {
		return []ProjSwap{attn}
	}
	f := float64(m.FFN) / T
	return []ProjSwap{attn, swap([]float64{f, f})}
}

// TitanUnfusedBwd is what a compiled torchtitan block's backward runs of
// its column-parallel layers' (wq, wk, wv; w1, w3) collectives under
// sequence parallelism (sp=on, T > 1), attention half and MLP half, as a
// change to the fused blocks' overlapped or sequential pairs (AttnBlock,
// MLPBlock: their input gradient's reduce-scatter and the all-gather of
// their input for the weight gradients, bwdBefore and before).
//
// The all-gather: torchtitan gathers the input outside the linears
// (PrepareModuleInput and ColwiseParallel's input layout, a DTensor
// redistribute) and each F.linear saves the gathered input for its
// weight gradient. Under its per-op policy (recompute=selective) the
// all-gather's output is not saved (not in _save_list: TitanSAC) and the
// backward gathers again; under full checkpointing the block's forward
// runs again before its backward, its all-gather with it (the recomputed
// forward, charged apart), and that output is what the weight gradients
// read; without recomputation the forward's output is saved. So only
// under selective recomputation does the backward gather; otherwise the
// weight gradients are bare GEMMs.
//
// Async TP (tpoverlap=on) is torch's micro-pipeline pass
// (torch/_inductor/fx_passes/micro_pipeline_tp.py, micro_pipeline_tp_pass,
// as installed here at 2.14.1; torchtitan sets
// torch._inductor.config._micro_pipeline_tp). It fuses an all-gather with
// the matmuls that take its output as their left operand
// (fuse_all_gather_matmul, _find_consumer_matmuls) and a reduce-scatter
// with the matmul that produces its input (fuse_matmul_reduce_scatter,
// _find_producer_matmul: aten.mm or _scaled_mm, bare or between
// reshapes). Forward all four fuse (wq, wk, wv after their all-gather;
// wo before its reduce-scatter; w1, w3; w2), and in the backward the
// all-gathers of wo's and w2's output gradients before their input
// gradients. Not so:
//   - the reduce-scatter of the input gradient: its input is autograd's
//     sum of the three (two) input gradients (TitanProjections), an add,
//     not a matmul;
//   - the backward's all-gather for the weight gradients (selective): the
//     gathered input is the weight gradient's right operand
//     (grad_output^T @ input), not its left.
//
// These run after their GEMM (gemmComm without overlap).
func TitanUnfusedBwd(b cost.Blocks) (attn, mlp phase) {
	c := b.Base()
	m, T := c.M, float64(c.Plan.TP)
	if !c.Plan.SequenceParallel || c.Plan.TP <= 1 || m.Mixed() || m.MLA() {
		return phase{}, phase{}
	}
	n, h := c.Tokens, float64(m.Hidden)
	act := n * h * bf16
	plain := *c
	plain.Plan.TPOverlap = false
	half := func(cols float64) phase {
		b := c.Back(c.LGEMM(2*n*h*cols, act+h*cols*bf16, n*cols*bf16))
		var p phase
		if c.Plan.TPOverlap {
			p = plain.Pair(b, roofline.ReduceScatter, act).Plus(cost.Scale(c.Pair(b, roofline.ReduceScatter, act), -1))
		}
		switch {
		case c.Plan.Recompute != plan.SelectiveRecompute:
			p = p.Plus(c.Run(b)).Plus(cost.Scale(c.Pair(b, roofline.AllGather, act), -1))
		case c.Plan.TPOverlap:
			p = p.Plus(plain.Pair(b, roofline.AllGather, act)).Plus(cost.Scale(c.Pair(b, roofline.AllGather, act), -1))
		}
		return p
	}
	attn = half((float64(m.Heads) + 2*float64(m.KVHeads)) * float64(m.HeadDim()) / T)
	fcols := float64(m.FFN) / T
	if m.SwiGLU() {
		fcols *= 2
	}
	return attn, half(fcols)
}

// TitanRowwiseUnfused is what async TP leaves unfused besides
// TitanUnfusedBwd's under torchao's rowwise recipes (fp8=rowwise,
// rowwise_with_gw_hp): the all-gathers, forward and backward, whose
// output is cast before its GEMM. torchtitan runs those recipes under
// plain ColwiseParallel and RowwiseParallel (the tensorwise recipe's
// Float8ColwiseParallel gathers float8: mechanisms/rowwise.go), so the gathered
// BF16 tensor goes to Float8Linear's row cast (abs, amax, scale, to) and
// only its output to torch._scaled_mm; the micro-pipeline pass fuses an
// all-gather only with the matmuls that take its own output as their
// left operand (_find_consumer_matmuls, micro_pipeline_tp.py at 2.14.1),
// so it fuses none of them: forward the gathers before wq, wk, wv and
// w1, w3; backward the gathers of wo's and w2's output gradients before
// their input gradients. Each runs after its GEMM (gemmComm without
// overlap) in place of the fused blocks' overlapped pair; attention
// half then MLP half, forward then backward. The reduce-scatters after
// wo and w2 (produced by _scaled_mm) stay fused. Elsewhere nothing.
func TitanRowwiseUnfused(b cost.Blocks) (attnF, attnB, mlpF, mlpB phase) {
	c := b.Base()
	m, T := c.M, float64(c.Plan.TP)
	if !plan.Rowwise(c.Plan.FP8) || !c.Plan.TPOverlap || !c.Plan.SequenceParallel || c.Plan.TP <= 1 || m.Mixed() || m.MLA() {
		return
	}
	n, h := c.Tokens, float64(m.Hidden)
	act := n * h * bf16
	plain := *c
	plain.Plan.TPOverlap = false
	ag := func(g kernel) phase {
		return plain.Pair(g, roofline.AllGather, act).Plus(cost.Scale(c.Pair(g, roofline.AllGather, act), -1))
	}
	qd := float64(m.Heads) * float64(m.HeadDim()) / T
	qkv := (float64(m.Heads) + 2*float64(m.KVHeads)) * float64(m.HeadDim()) / T
	f := float64(m.FFN) / T
	fcols := f
	if m.SwiGLU() {
		fcols = 2 * f
	}
	attnF = ag(c.LGEMM(2*n*h*qkv, act+h*qkv*bf16, n*qkv*bf16))
	attnB = ag(c.Back(c.LGEMM(2*n*qd*h, n*qd*bf16+qd*h*bf16, act)))
	mlpF = ag(c.LGEMM(2*n*h*fcols, act+h*fcols*bf16, n*fcols*bf16))
	mlpB = ag(c.Back(c.LGEMM(2*n*f*h, n*f*bf16+f*h*bf16, act)))
	return attnF, attnB, mlpF, mlpB
}

// TitanSeqCopies is the copies a compiled torchtitan block runs to lay
// out its sequence-parallel collectives (sp=on, T > 1, micro-batch > 1),
// attention half and MLP half, forward and backward. torchtitan's
// activations are batch-first (bs, seq, dim) and its sequence
// parallelism shards dim 1 (SequenceParallel, PrepareModuleInput's
// Shard(1)), while NCCL's all-gather and reduce-scatter work on dim 0.
// So DTensor's redistribute (Shard(1) to Replicate: funcol's
// all_gather_tensor with gather_dim 1; Partial to Shard(1):
// reduce_scatter_tensor with scatter_dim 1) rearranges: after the
// all-gather torch.cat(torch.chunk(res, T, dim=0), dim=1), before the
// reduce-scatter torch.cat(torch.chunk(x, T, dim=1)) (torch/distributed/
// _functional_collectives.py all_gather_single, reduce_scatter_single;
// torch/_utils.py _chunk_or_narrow_cat and _maybe_view_chunk_cat, which
// returns a view only where every dimension before the gather dimension
// is 1: a micro-batch of one sample; torch 2.14.1 as installed here).
// Compiled, the cat is an Inductor kernel unless it fuses (torch/
// _inductor/lowering.py cat: pointwise_cat into consumers that are all
// pointwise, or a producer written straight into the cat's layout): it
// is a copy, reading and writing the whole gathered tensor, where an
// extern GEMM reads the gathered tensor or writes the tensor to be
// scattered:
//   - forward, each all-gather before wq, wk, wv and before w1, w3: the
//     BF16 input; under per-tensor FP8 (fp8=current, delayed) torchao's
//     Float8ColwiseParallel and PrepareFloat8ModuleInput gather the
//     float8 input (one byte; torchao/float8/float8_tensor_parallel.py);
//     under rowwise recipes the gathered BF16
//     tensor goes to the cast's pointwise kernels (abs and amax, scale)
//     and the cat fuses there: none;
//   - forward, each reduce-scatter after wo and after w2: their (BF16)
//     output is a GEMM's (mm, _scaled_mm), so the cat copies it;
//   - backward, the all-gather of wo's and w2's output gradients: BF16,
//     read by their data and weight gradients' mms: a copy; under
//     per-tensor FP8 Float8RowwiseParallel casts the gradient before the
//     gather (_prepare_output_fn: _NoopFwToFloat8BwDynamic after the
//     redistribute, so first in the backward), the data gradient's
//     _scaled_mm reads the gathered float8: a copy of one byte; under
//     rowwise recipes each GEMM reads the gradient's cast after the
//     gather (its pointwise kernels take the cat), except
//     rowwise_with_gw_hp's weight gradient, which reads it in BF16: a
//     copy;
//   - backward, the second all-gather of the input (recompute=selective,
//     TitanUnfusedBwd): read by wq, wk, wv's (w1, w3's) weight-gradient
//     mms in BF16 (rowwise_with_gw_hp too) and by the recomputed wk's
//     (w3's) GEMM (TitanSAC): a copy; under per-tensor FP8 the gathered
//     float8 input goes to the recomputed wk's (w3's) _scaled_mm: a copy
//     of one byte; rowwise: the casts' (none);
//   - backward, the reduce-scatter of the input gradient: its input is
//     Inductor's sum of the projections' input gradients, written
//     straight into the cat's layout: none.
//
// Async TP (tpoverlap=on) fuses each all-gather with the GEMMs after it
// and each reduce-scatter with the GEMM before it, gather_dim and
// scatter_dim included (micro_pipeline_tp.py matches the cat and
// fused_all_gather_matmul restrides: torch/distributed/_symmetric_memory
// _fused_all_gather_matmul_impl), so the forward's and the output
// gradients' copies go; what async TP leaves unfused (TitanUnfusedBwd,
// TitanRowwiseUnfused) keeps its copy as above. Each copy is one
// elementwise kernel reading and writing the tokens x hidden gathered
// elements at their width. Recomputed forwards (recompute=full) copy
// again with the forward (Join). With context parallelism the tokens
// are the GPU's share, as the collectives'.
func TitanSeqCopies(b cost.Blocks) (attnF, attnB, mlpF, mlpB phase) {
	c := b.Base()
	m := c.M
	if !c.Plan.SequenceParallel || c.Plan.TP <= 1 || c.NoComm || c.Plan.MBS <= 1 || m.Mixed() || m.MLA() {
		return
	}
	perTensor := c.Plan.FP8 == plan.FP8Current || c.Plan.FP8 == plan.FP8Delayed
	gwhp := c.Plan.FP8 == plan.FP8RowwiseGWHP
	if c.Plan.FP8 != "" && !perTensor && !plan.Rowwise(c.Plan.FP8) {
		return // another recipe's casts under TP: not read
	}
	e := c.Tokens * float64(m.Hidden)
	cp := func(width float64) phase {
		if width == 0 {
			return phase{}
		}
		return c.Run(kernel{Class: graph.ClassElementwise, Read: e * width, Writes: e * width})
	}
	var gather, scatter, gradGather, regather float64
	switch {
	case c.Plan.FP8 == "":
		gather, scatter, gradGather, regather = bf16, bf16, bf16, bf16
	case perTensor:
		gather, scatter, gradGather, regather = 1, bf16, 1, 1
	case gwhp:
		scatter, gradGather, regather = bf16, bf16, bf16
	default: // rowwise
		scatter = bf16
	}
	if c.Plan.TPOverlap {
		gather, scatter = 0, 0
		if !gwhp { // rowwise_with_gw_hp's gradient gathers stay unfused
			gradGather = 0
		}
	}
	if c.Plan.Recompute != plan.SelectiveRecompute {
		regather = 0
	}
	fwd := cp(gather).Plus(cp(scatter))
	bwd := cp(gradGather).Plus(cp(regather))
	return fwd, bwd, fwd, bwd
}

// TitanSymmMemKernels is what torch's async TP (tpoverlap=on, sp=on,
// T > 1) runs on the compute stream besides its GEMMs, attention half
// and MLP half, forward and backward: the kernels of the fused ops the
// micro-pipeline pass puts in place of a collective and its GEMM
// (torch/distributed/_symmetric_memory/__init__.py, read at torch 2.14.1
// as installed here):
//   - each fused all-gather matmul (_fused_all_gather_matmul_impl,
//     _pipelined_multi_all_gather_and_consume) first copies the local
//     shard into the group's symmetric-memory workspace (copy_shard into
//     local_p2p_bufs, before the barrier), a T-th of the gathered tensor
//     read and written; the peers' shards are pulled by copies between
//     buffers (the collective's time, GEMMComm). Fused here: the
//     forward's gathers before wq, wk, wv and w1, w3 (BF16, or float8
//     under per-tensor FP8) and the backward's gathers of wo's and w2's
//     output gradients (float8 under per-tensor FP8: Float8RowwiseParallel
//     casts the gradient before the gather, TitanSeqCopies); under
//     rowwise recipes none (TitanRowwiseUnfused);
//   - each fused matmul reduce-scatter (_fused_matmul_reduce_scatter_impl,
//     _pipelined_produce_and_all2all) computes every peer's partial of
//     its rows, exchanges them (all-to-all over the workspace) and sums
//     the T partials of its own rows: reduce_partials, one reduction
//     reading T x (n/T x h) BF16 partials and writing the n/T x h
//     output, where NCCL's reduce-scatter sums inside the collective.
//     Fused here: after wo and after w2 (every recipe: _scaled_mm too).
//
// The copy is an elementwise kernel, the sum a reduction (torch.sum over
// the partials' rank dimension; torch 2.14.1 also has a Triton kernel
// for a leading rank dimension). The all-gather output's copy of the
// local shard (ag_out_needed, where the gathered input is returned to
// other consumers) is not charged: its consumers are not traced here.
func TitanSymmMemKernels(b cost.Blocks) (attnF, attnB, mlpF, mlpB phase) {
	c := b.Base()
	m, T := c.M, float64(c.Plan.TP)
	if !c.Plan.TPOverlap || !c.Plan.SequenceParallel || c.Plan.TP <= 1 || c.NoComm || m.Mixed() || m.MLA() {
		return
	}
	perTensor := c.Plan.FP8 == plan.FP8Current || c.Plan.FP8 == plan.FP8Delayed
	rowwise := plan.Rowwise(c.Plan.FP8)
	if c.Plan.FP8 != "" && !perTensor && !rowwise {
		return // another recipe's casts under TP: not read
	}
	n, h := c.Tokens, float64(m.Hidden)
	shard := n / T * h // a T-th of the gathered elements
	mv := func(width float64) phase {
		return c.Run(kernel{Class: graph.ClassElementwise, Read: shard * width, Writes: shard * width})
	}
	sum := c.Run(kernel{Class: graph.ClassReduction, FLOPs: (T - 1) * shard, Read: n * h * bf16, Writes: shard * bf16})
	fwd := sum
	var bwd phase
	switch {
	case perTensor:
		fwd, bwd = fwd.Plus(mv(1)), mv(1)
	case !rowwise:
		fwd, bwd = fwd.Plus(mv(bf16)), mv(bf16)
	}
	return fwd, bwd, fwd, bwd
}
