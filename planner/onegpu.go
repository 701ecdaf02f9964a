package planner

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// OneGPU costs parts of a training step on one GPU of Pod, their kernels
// alone: no communication, no pipeline, no optimizer unless asked. It is
// what a measurement on one GPU (tools/measure/kernelbench, tools/measure/layerbench)
// times, and what planner/reference checks those measurements
// against. Times are seconds of the GPU's busy time, forward and
// backward together.
type OneGPU struct {
	Pod plan.Pod
}

// Block is one transformer block of model m at plan s's shard (its
// tensor-parallel degree, micro-batch, context degree; Result.LayerForward
// + LayerBackward), forward and backward, with the output layer and its
// cross-entropy beside it (head). Attention names the backend the block's
// attention runs with ("" or "any": the pod's first kernel). A plan whose
// GPUs are not those of whole nodes fills them with replicas, each a
// micro-batch: a block's kernels do not depend on the data-parallel
// degree.
func (g OneGPU) Block(m transformer.Spec, s plan.Strategy, attention string) (block, head float64, err error) {
	p := g.Pod
	st, q := s, onePod(p, s)
	k, err := p.Kernels.WithAttention(attention)
	if err != nil {
		return 0, 0, err
	}
	p.Kernels = k
	if n := st.MaxTensor() * st.PipelineDegree() * st.ReplicaCount() * st.ContextDegree(); n != q.GPUs() {
		st.Replicas = q.GPUs() / (st.MaxTensor() * st.PipelineDegree() * st.ContextDegree())
		m.Batch = st.Replicas * max(st.MicroBatchSize, 1)
	}
	pl, err := plan.Resolve(m, st, q)
	if err != nil {
		return 0, 0, err
	}
	c := coster{Shard: cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: &p, TPG: plan.Group{PerNode: pl.TP, Nodes: 1},
		Tokens: float64(pl.MBS) * float64(m.Seq) / float64(pl.CP), NoComm: true}, Points: registered}
	decide(c.Points, &c.Shard)
	f, b := c.layer()
	of, ob := c.output()
	return f.Busy + b.Busy, of.Busy + ob.Busy, nil
}

// onePod is p with as many nodes as plan s's GPUs take (a block's shard
// is resolved on them; its kernels do not depend on the nodes).
func onePod(p plan.Pod, s plan.Strategy) plan.Pod {
	gpus := s.MaxTensor() * s.PipelineDegree() * s.ReplicaCount() * s.ContextDegree()
	p.Nodes = max(1, (gpus+p.PerNode-1)/p.PerNode)
	return p
}

// StepParts are one micro-batch's parts of a training step on one GPU
// (OneGPU.Step), forward and backward, seconds.
type StepParts struct {
	// Block is one block at the tensor-parallel shard; Head the output
	// layer with its cross-entropy; Embedding the lookup and its
	// gradient.
	Block, Head, Embedding float64
	// Accumulate is plain PyTorch's addition of a micro-batch's BF16
	// gradients into those already there: one elementwise pass over the
	// GPU's parameters, reading two gradients and writing one
	// (Megatron-Core accumulates in its weight-gradient GEMMs instead:
	// gradient_accumulation_fusion).
	Accumulate float64
}

// Step costs one micro-batch of a step of model m (micro-batch 1) with
// layers of its blocks on one GPU at tensor-parallel degree tensor
// (sequence parallelism where it is above 1), the node's other GPUs
// replicas doing the same work. Attention is as for Block.
func (g OneGPU) Step(m transformer.Spec, tensor, layers int, attention string) (StepParts, error) {
	m.Batch = 1
	T := tensor
	st := plan.Strategy{Tensor: T, Pipeline: 1, Replicas: 1, MicroBatchSize: 1, SequenceParallel: T > 1}
	q := onePod(g.Pod, st)
	var err error
	if q.Kernels, err = q.Kernels.WithAttention(attention); err != nil {
		return StepParts{}, err
	}
	st.Replicas = q.GPUs() / T // the node's other GPUs as replicas: the same work on each
	m.Batch = st.Replicas
	pl, err := plan.Resolve(m, st, q)
	if err != nil {
		return StepParts{}, err
	}
	c := coster{Shard: cost.Shard{M: m, Plan: pl, H: &q.Hardware, Pod: &q, TPG: plan.Group{PerNode: 1, Nodes: 1},
		Tokens: float64(m.Seq), NoComm: true}, Points: registered}
	decide(c.Points, &c.Shard)
	lf, lb := c.layer()
	of, ob := c.output()
	ef, eb := c.embedding()
	L := float64(layers)
	P := L*float64(transformer.LayerParams(m))/float64(T) + float64(transformer.EmbeddingParams(m)+transformer.OutputParams(m))/float64(T)
	accum := kernel{Class: graph.ClassElementwise, FLOPs: P, Read: 2 * P * bf16, Writes: P * bf16}.Time(&q.Hardware)
	return StepParts{Block: lf.Busy + lb.Busy, Head: of.Busy + ob.Busy, Embedding: ef.Busy + eb.Busy, Accumulate: accum}, nil
}

// Adam is fused Adam's update of params FP32 parameters as the optimizer
// step costs it: the FP32 gradient, master weight and two moments read,
// the three written (the BF16 copy and the gradient buffer's zeroing,
// which kernelbench does not run, left out).
func (g OneGPU) Adam(params float64) float64 {
	n := params
	return kernel{Class: graph.ClassElementwise, Read: 16 * n, Writes: 12 * n}.Time(&g.Pod.Hardware)
}

// MoEGlue costs the parts of an MoE layer of model m besides its experts
// at tokens tokens, as placer's fused, memory-bound kernels (moeGlue):
// the router (its GEMM to the experts' scores, softmax, top-k), the
// permutation of each token's copies and their unpermutation.
func (g OneGPU) MoEGlue(m transformer.Spec, tokens int) (router, permute, unpermute float64) {
	rk, scores, pk, uk := moeGlue(m, float64(tokens))
	t := func(k kernel) float64 { return k.Time(&g.Pod.Hardware) }
	return t(rk) + t(scores) + 2*t(rk) + t(cost.Twice(scores)), t(pk) + t(cost.Twice(pk)), t(uk) + t(cost.Twice(uk))
}

// MoELayer costs one whole MoE layer of model m on one GPU holding
// localExperts of its experts at tokens tokens: the router, its glue and
// the grouped expert GEMMs, BF16, no communication (coster.moe).
func (g OneGPU) MoELayer(m transformer.Spec, localExperts, tokens int) float64 {
	ep := m.Experts / localExperts
	pl := plan.Plan{TP: 1, PP: 1, DP: 1, VP: 1, CP: 1, MBS: 1, NumMicro: 1, EP: ep, ETP: 1, EDP: 1, Stages: []int{m.Layers}, TPs: []int{1}}
	c := newCoster(m, pl, &g.Pod, 1, float64(tokens))
	c.NoComm = true
	f, b, _ := c.moe()
	return f.Busy + b.Busy
}
