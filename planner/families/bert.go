package families

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
)

// BERT's pre-training heads beyond the output layer (Devlin et al., arXiv
// 1810.04805 section 3.1 and appendix A.1; NVIDIA DeepLearningExamples
// PyTorch/LanguageModeling/BERT modeling.py BertPreTrainingHeads, which
// NVIDIA's MLPerf BERT code runs): the masked-language-model head's
// transform (BertPredictionHeadTransform: a dense layer of Hidden x
// Hidden with its bias, GeLU, a layer norm) on the masked positions
// only, gathered from the sequence first (NVIDIA's dense_seq_output:
// index_select of the masked positions before the head, their gradient
// scattered back into the sequence's), then the decoder tied to the word
// embedding (the output layer the coster prices at the gathered tokens:
// transformer.Spec.OutputTokens); and the next-sentence head (BertPooler:
// a dense layer of Hidden x Hidden and tanh on each sequence's first
// token; then a linear layer of Hidden x 2).

// MLMHeads is those heads on an encoder whose output layer runs on the
// masked positions (transformer.Spec.Predicted > 0).
type MLMHeads struct{}

var _ cost.OutputHeads = MLMHeads{}

// Name is the trait's registered name.
func (MLMHeads) Name() string { return "mlm-nsp-heads" }

// When is the heads' declaration: an encoder with an MLM head on its
// masked positions.
func (MLMHeads) When() cost.When { return mlmWhen }

var mlmWhen = cost.When{cost.Model("predicted>0", func(m *transformer.Spec) bool { return m.Predicted > 0 })}

// Kernels is the heads' kernels on shard s for one micro-batch, forward
// and backward, in FP16/BF16 (2 bytes an element), unsplit by tensor
// parallelism (the heads are small; every bench row that runs them is
// TP 1). p = Predicted of every Seq of the shard's tokens, h = Hidden,
// b = the shard's sequences:
//
//	forward:  gather p x h; transform GEMM 2 p h h; bias+GeLU over p h;
//	          layer norm over p h; pooler GEMM 2 b h h; tanh over b h;
//	          classifier GEMM 2 b h 2.
//	backward: layer norm and GeLU backward over p h (each reads two tensors,
//	          writes one); the transform's data and weight gradients
//	          (2 x 2 p h h); the pooler's and classifier's two each; tanh's
//	          backward; the scatter of the gathered rows' gradient into a
//	          zeroed gradient of the whole sequence (n x h written).
func (MLMHeads) Kernels(s *cost.Shard) (fwd, bwd []cost.Kernel) {
	if s.M.Predicted <= 0 {
		return nil, nil
	}
	const e = 2.0 // bytes an element, FP16 or BF16
	n, h := s.Tokens, float64(s.M.Hidden)
	p := s.M.OutputTokens(n)
	b := n / float64(s.M.Seq)
	ph, bh := p*h, b*h
	gemm := func(flops, read, write float64) cost.Kernel { return s.GEMM(flops, read, write) }
	el := func(class graph.Class, elems, reads, writes float64) cost.Kernel {
		return cost.Kernel{Class: class, FLOPs: elems, Read: reads * elems * e, Writes: writes * elems * e}
	}
	transform := gemm(2*ph*h, (ph+h*h)*e, ph*e)
	pooler := gemm(2*bh*h, (bh+h*h)*e, bh*e)
	classify := gemm(2*bh*2, (bh+2*h)*e, 2*b*e)
	fwd = []cost.Kernel{
		el(graph.ClassElementwise, ph, 1, 1), // gather the masked rows
		transform,
		el(graph.ClassElementwise, ph, 1, 1), // bias + GeLU
		el(graph.ClassReduction, ph, 1, 1),   // layer norm
		pooler,
		el(graph.ClassElementwise, bh, 1, 1), // tanh
		classify,
	}
	bwd = []cost.Kernel{
		el(graph.ClassReduction, ph, 2, 1),   // layer norm backward
		el(graph.ClassElementwise, ph, 2, 1), // GeLU backward
		transform, transform,                 // data and weight gradients
		classify, classify,
		el(graph.ClassElementwise, bh, 2, 1), // tanh backward
		pooler, pooler,
		{Class: graph.ClassElementwise, FLOPs: ph, Read: ph * e, Writes: n * h * e}, // zero + scatter into the sequence
	}
	return fwd, bwd
}

// Heads is Kernels run one after another, forward and backward: the
// heads beside the output layer (cost.OutputHeads).
func (m MLMHeads) Heads(s *cost.Shard) (fwd, bwd cost.Phase) {
	f, b := m.Kernels(s)
	for _, k := range f {
		fwd = fwd.Plus(s.Run(k))
	}
	for _, k := range b {
		bwd = bwd.Plus(s.Run(k))
	}
	return fwd, bwd
}
