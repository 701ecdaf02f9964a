package planner

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// embedding is the first stage's token (and position) embedding: a
// vocabulary-parallel lookup whose partial rows are summed over the
// tensor group (a reduce-scatter with sequence parallelism, an
// all-reduce without), not overlapped.
func (c *coster) embedding() (fwd, bwd phase) {
	act := c.Tokens * float64(c.M.Hidden) * bf16
	look := kernel{Class: graph.ClassEmbedding, Read: act, Writes: act}
	fwd = phase{Busy: look.Time(c.H), Launches: 1}
	if c.Plan.TP > 1 {
		k := roofline.AllReduce
		if c.Plan.SequenceParallel {
			k = roofline.ReduceScatter
		}
		ct, _ := c.Pod.Collective(k, c.TPG, act)
		fwd = fwd.Plus(phase{Busy: ct, TPAll: ct, TPExposed: ct, Launches: 1})
		if c.Plan.SequenceParallel {
			ct, _ = c.Pod.Collective(roofline.AllGather, c.TPG, act)
			bwd = phase{Busy: ct, TPAll: ct, TPExposed: ct, Launches: 1}
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
	table := float64(c.M.Vocab) / float64(c.Plan.TP) * float64(c.M.Hidden)
	bwd = bwd.Plus(phase{Busy: kernel{Class: graph.ClassEmbedding, Read: act, Writes: table * bf16}.Time(c.H) +
		kernel{Class: graph.ClassElementwise, FLOPs: table, Read: table * (bf16 + c.Plan.GradBytes()), Writes: table * c.Plan.GradBytes()}.Time(c.H),
		Launches: 3}) // zero, scatter, accumulate
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
	T := float64(c.Plan.TP)
	n, h, V := c.Tokens, float64(c.M.Hidden), float64(c.M.Vocab)
	act := n * h * bf16
	sp := 1.0
	if c.Plan.SequenceParallel {
		sp = 1 / T
	}
	norm := kernel{Class: graph.ClassReduction, FLOPs: 8 * n * h * sp, Read: act * sp, Writes: act * sp}
	no := c.M.OutputTokens(n)                                   // an encoder's masked positions (its heads: cost.OutputHeads)
	logits, back, casts, castsBack := c.outputGEMM(no, h, V, T) // outputproj.go: BF16, or MXFP8 with fp8-output-proj=on
	logit := no * V / T                                         // logits on this GPU
	pass := func(class graph.Class, read, write float64) float64 {
		return kernel{Class: class, FLOPs: logit, Read: logit * read, Writes: logit * write}.Time(c.H)
	}
	ce := pass(graph.ClassElementwise, bf16, 4) + pass(graph.ClassReduction, 4, 0) + pass(graph.ClassElementwise, 4, 4) +
		pass(graph.ClassElementwise, 4, 4) + pass(graph.ClassReduction, 4, 0) + pass(graph.ClassElementwise, 4, 4)
	ceB := pass(graph.ClassElementwise, 4, 4) + pass(graph.ClassElementwise, 4, bf16)
	ceLaunches, ceBLaunches := 9.0, 2.0
	if c.Plan.Run.FusedLoss {
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
	if c.Plan.SequenceParallel {
		k = roofline.AllGather
	}
	pair := func(g kernel, k roofline.Collective) phase {
		if k < 0 {
			return phase{Busy: g.Time(c.H), Launches: 1}
		}
		return c.GEMMComm(g, k, act)
	}
	small, _ := c.Pod.Collective(roofline.AllReduce, c.TPG, 3*no*4) // max, sum and target logit
	// Launches: the norm; ce's six passes and the three small
	// all-reduces; the backward's two passes, the logits' two GEMMs and
	// the norm's backward.
	fwd = phase{Busy: norm.Time(c.H), Launches: 1}.Plus(casts).Plus(pair(logits, k)).Plus(phase{Busy: ce + small, TPAll: small, TPExposed: small, Launches: ceLaunches})
	bk := roofline.Collective(-1)
	if c.Plan.SequenceParallel {
		bk = roofline.ReduceScatter
	} else if c.Plan.TP > 1 {
		bk = roofline.AllReduce
	}
	bwd = phase{Busy: ceB, Launches: ceBLaunches}.Plus(castsBack).Plus(pair(back, bk)).Plus(phase{Busy: back.Time(c.H), Launches: 1}).Plus(phase{Busy: 2 * norm.Time(c.H), Launches: 1})
	// The heads beside the output layer (an encoder's: families.MLMHeads;
	// none in a decoder).
	for p := range c.Points.OutputHeads.On(&c.Shard) {
		f, b := p.Heads(&c.Shard)
		fwd, bwd = fwd.Plus(f), bwd.Plus(b)
	}
	return fwd, bwd
}
