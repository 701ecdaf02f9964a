package scale

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph"
)

// embedding is the first stage's token (and position) embedding: a
// vocabulary-parallel lookup whose partial rows are summed over the
// tensor group (a reduce-scatter with sequence parallelism, an
// all-reduce without), not overlapped.
func (c *coster) embedding() (fwd, bwd phase) {
	act := c.tokens * float64(c.m.Hidden) * bf16
	look := kernel{class: graph.ClassEmbedding, read: act, writes: act}
	fwd = phase{busy: look.time(c.h), launches: 1}
	if c.pl.TP > 1 {
		k := roofline.AllReduce
		if c.pl.SequenceParallel {
			k = roofline.ReduceScatter
		}
		ct, _ := c.pod.Collective(k, c.tpG, act)
		fwd = fwd.plus(phase{busy: ct, tpAll: ct, tpExposed: ct, launches: 1})
		if c.pl.SequenceParallel {
			ct, _ = c.pod.Collective(roofline.AllGather, c.tpG, act)
			bwd = phase{busy: ct, tpAll: ct, tpExposed: ct, launches: 1}
		}
	}
	// The gradient: PyTorch's embedding backward writes a dense BF16
	// gradient of the whole table shard (zeroed, then the tokens' rows
	// added), and Megatron-Core's DDP adds it into the FP32 main
	// gradient (a hook's main_grad.add_: the fused accumulation into
	// main_grad is the linear layers' only; a BF16 one with grads=bf16). Measured on an H100
	// (measurements/2026-11-26-h100/kernelbench.jsonl, 1.7B.embedding):
	// the backward of a 131,072 x 2,048 table takes 0.93 ms, where
	// scattering only the tokens' rows would take 0.02.
	table := float64(c.m.Vocab) / float64(c.pl.TP) * float64(c.m.Hidden)
	bwd = bwd.plus(phase{busy: kernel{class: graph.ClassEmbedding, read: act, writes: table * bf16}.time(c.h) +
		kernel{class: graph.ClassElementwise, flops: table, read: table * (bf16 + c.pl.GradBytes()), writes: table * c.pl.GradBytes()}.time(c.h),
		launches: 3}) // zero, scatter, accumulate
	return fwd, bwd
}

// fusedOutput is the last stage's final norm, vocabulary-parallel output layer
// and cross-entropy, the logits never gathered (a max and a sum
// all-reduced over the tensor group). The cross-entropy is Megatron-Core's
// unfused one (tensor_parallel/cross_entropy.py; --cross-entropy-loss-fusion
// is off by default), one kernel per pass over the FP32 logits: forward
// the cast to FP32, the max, the subtraction, the exponential, the sum and
// the division (22 bytes read and 16 written per logit); backward the
// multiplication by the loss's gradient, in place, and the cast back to
// BF16 (8 read, 6 written). With loss-fusion=on (Settings.FusedLoss)
// Transformer Engine's fused cross-entropy instead: three passes over the
// BF16 logits.
func (c *coster) fusedOutput() (fwd, bwd phase) {
	T := float64(c.pl.TP)
	n, h, V := c.tokens, float64(c.m.Hidden), float64(c.m.Vocab)
	act := n * h * bf16
	sp := 1.0
	if c.pl.SequenceParallel {
		sp = 1 / T
	}
	norm := kernel{class: graph.ClassReduction, flops: 8 * n * h * sp, read: act * sp, writes: act * sp}
	logits := c.gemm(2*n*h*V/T, act+h*V/T*bf16, n*V/T*bf16)
	logit := n * V / T // logits on this GPU
	pass := func(class graph.Class, read, write float64) float64 {
		return kernel{class: class, flops: logit, read: logit * read, writes: logit * write}.time(c.h)
	}
	ce := pass(graph.ClassElementwise, bf16, 4) + pass(graph.ClassReduction, 4, 0) + pass(graph.ClassElementwise, 4, 4) +
		pass(graph.ClassElementwise, 4, 4) + pass(graph.ClassReduction, 4, 0) + pass(graph.ClassElementwise, 4, 4)
	ceB := pass(graph.ClassElementwise, 4, 4) + pass(graph.ClassElementwise, 4, bf16)
	ceLaunches, ceBLaunches := 9.0, 2.0
	if c.pl.Run.FusedLoss {
		// Transformer Engine's fused cross-entropy (Settings.FusedLoss):
		// the online softmax reads the BF16 logits, the loss kernel reads
		// them again and writes their gradient in place; the backward
		// scales it in place (element_mul_kernel). Its statistics are
		// all-gathered over the tensor group (three FP32 a token, as the
		// unfused kernels' all-reduces carry).
		ce = pass(graph.ClassReduction, bf16, 0) + pass(graph.ClassElementwise, bf16, bf16)
		ceB = pass(graph.ClassElementwise, bf16, bf16)
		ceLaunches, ceBLaunches = 3, 1
	}
	k := roofline.Collective(-1)
	if c.pl.SequenceParallel {
		k = roofline.AllGather
	}
	pair := func(g kernel, k roofline.Collective) phase {
		if k < 0 {
			return phase{busy: g.time(c.h), launches: 1}
		}
		return c.gemmComm(g, k, act)
	}
	small, _ := c.pod.Collective(roofline.AllReduce, c.tpG, 3*n*4) // max, sum and target logit
	// Launches: the norm; ce's six passes and the three small
	// all-reduces; the backward's two passes, the logits' two GEMMs and
	// the norm's backward.
	fwd = phase{busy: norm.time(c.h), launches: 1}.plus(pair(logits, k)).plus(phase{busy: ce + small, tpAll: small, tpExposed: small, launches: ceLaunches})
	bk := roofline.Collective(-1)
	if c.pl.SequenceParallel {
		bk = roofline.ReduceScatter
	} else if c.pl.TP > 1 {
		bk = roofline.AllReduce
	}
	bwd = phase{busy: ceB, launches: ceBLaunches}.plus(pair(logits, bk)).plus(phase{busy: logits.time(c.h), launches: 1}).plus(phase{busy: 2 * norm.time(c.h), launches: 1})
	return fwd, bwd
}

// mtp is the multi-token-prediction modules on the last stage for one
// micro-batch on one GPU, forward and backward, as Megatron-Core's
// MultiTokenPredictionLayer runs DeepSeek-V3's (arXiv 2412.19437 section
// 2.2; Megatron-LM's multi_token_prediction guide): each the shared
// embedding's lookup of the next tokens (ef, eb: the last stage's copy
// of the embedding with pipeline stages), an RMS norm of it and of the
// main model's last hidden state, the two concatenated and projected
// from 2 x Hidden to Hidden (eh_proj, column-parallel: its output
// gathered back over the tensor group), one block like the model's last
// (an MoE block in a model with experts: DeepSeek-V3's MTP module is a
// full block of the main model's kind), and the shared output layer
// with its own cross-entropy (of, ob). The block keeps its activations
// (not recomputed).
func (c *coster) mtp(ef, eb, of, ob phase) (fwd, bwd phase) {
	m := c.m
	n, h := c.tokens, float64(m.Hidden)
	T := float64(c.pl.TP)
	sp := c.sp()
	act := n * h * bf16
	norm := kernel{class: graph.ClassReduction, flops: 8 * n * h * sp, read: act * sp, writes: act * sp}
	cat := kernel{class: graph.ClassDataMovement, read: 2 * act * sp, writes: 2 * act * sp}
	g := c.lgemm(2*n*2*h*h/T, 2*act+2*h*h/T*bf16, act/T)
	b := c.back(g)
	before, _, _, bwdBefore := c.tpKinds()
	var gather phase
	if c.pl.TP > 1 && !c.noComm {
		ct, _ := c.pod.Collective(roofline.AllGather, c.tpG, act)
		gather = phase{busy: ct, tpAll: ct, tpExposed: ct, launches: 1}
	}
	keep := *c
	keep.pl.Recompute = plan.NoRecompute
	bf, bb := keep.block(m.MoE())
	t := c.run
	fwd = ef.plus(t(norm)).plus(t(norm)).plus(t(cat)).plus(c.pair(g, before, 2*act)).plus(gather).plus(bf).plus(of)
	bwd = ob.plus(bb).plus(gather).plus(c.pair(b, bwdBefore, 2*act)).plus(c.pair(b, before, 2*act)).
		plus(t(twice(cat))).plus(t(twice(norm))).plus(t(twice(norm))).plus(eb)
	if c.fp8 > 0 {
		fwd, bwd = fwd.plus(c.casts(2*n*h*sp)), bwd.plus(c.bwdCasts(2*n*h*sp))
	}
	x := float64(m.MTP)
	return scalePhase(fwd, x), scalePhase(bwd, x)
}
