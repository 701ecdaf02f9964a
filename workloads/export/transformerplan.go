package export

import (
	"fmt"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/scale"
	"github.com/placer/placer/graph/transformer"
)

// TransformerPlan is the TransformerPlanFormat torch plan (version 2 of
// TorchPlanFormat in files written before it had a name of its own): a
// uniform transformer run with tensor, pipeline and data parallelism
// (Megatron-LM's 3D parallelism) by tools/torchplan (docs/torch-plan.md). Ranks
// are laid out as Megatron-LM does: rank = t + T (d + D p) for tensor rank
// t, data-parallel rank d and pipeline stage p.
type TransformerPlan struct {
	Format      string          `json:"format"`
	Version     int             `json:"version"`
	Graph       string          `json:"graph"`
	Transformer TransformerSpec `json:"transformer"`
	GPUs        int             `json:"gpus"`
	Tensor      int             `json:"tensor"`
	Pipeline    int             `json:"pipeline"`
	Replicas    int             `json:"replicas"`
	// MicroBatchSize x MicroBatches x Replicas is the global batch.
	MicroBatchSize   int                `json:"micro_batch_size"`
	MicroBatches     int                `json:"micro_batches"`
	Schedule         decision.Schedule  `json:"schedule"`
	SequenceParallel bool               `json:"sequence_parallel"`
	Recompute        scale.Recompute    `json:"recompute,omitempty"`
	DistributedOpt   bool               `json:"distributed_optimizer,omitempty"`
	Stages           []TransformerStage `json:"stages"`
}

// TransformerSpec is the model a transformer plan builds.
type TransformerSpec struct {
	Layers     int    `json:"layers"`
	Hidden     int    `json:"hidden"`
	Heads      int    `json:"heads"`
	KVHeads    int    `json:"kv_heads"`
	FFN        int    `json:"ffn"`
	Seq        int    `json:"seq"`
	Vocab      int    `json:"vocab"`
	Batch      int    `json:"batch"`
	Tied       bool   `json:"tied"`
	Norm       string `json:"norm"`       // layernorm or rmsnorm
	Activation string `json:"activation"` // gelu or swiglu
}

// TransformerStage is one pipeline stage: its layers, and whether it holds
// the embedding (the first) or the output layer and loss (the last).
type TransformerStage struct {
	Stage     int   `json:"stage"`
	Layers    []int `json:"layers"`
	Embedding bool  `json:"embedding,omitempty"`
	Output    bool  `json:"output,omitempty"`
}

// NewTransformerPlan writes model m under strategy s on gpus GPUs as a
// TransformerPlanFormat plan. s must be resolved (every degree named, as
// evaluate/scale.Resolve leaves it: tensor, pipeline, replicas,
// micro-batch size and micro-batches with T x P x R = gpus and
// R x mbs x M = the batch). Interleaved virtual stages are not run by
// tools/torchplan and are refused, as is context parallelism.
func NewTransformerPlan(m transformer.Spec, s scale.Strategy, gpus int) (TransformerPlan, error) {
	T, err := oneTensor(s, "torch plan", "tools/torchplan runs one tensor-parallel degree")
	if err != nil {
		return TransformerPlan{}, err
	}
	P, R := s.P(), s.R()
	switch {
	case s.C() > 1:
		return TransformerPlan{}, fmt.Errorf("torch plan: cp=%d: tools/torchplan does not split sequences (context parallelism runs in Megatron-LM: --to megatron)", s.C())
	case T*P*R != gpus:
		return TransformerPlan{}, fmt.Errorf("torch plan: tp=%d x pp=%d x dp=%d is not the %d GPUs", T, P, R, gpus)
	case s.MicroBatchSize < 1 || R*s.MicroBatchSize*s.M() != m.Batch:
		return TransformerPlan{}, fmt.Errorf("torch plan: dp=%d x mbs=%d x mb=%d is not the batch of %d", R, s.MicroBatchSize, s.M(), m.Batch)
	case s.V() > 1:
		return TransformerPlan{}, fmt.Errorf("torch plan: vp=%d: tools/torchplan runs one model chunk per stage (no interleaving)", s.V())
	}
	counts, err := s.StageLayers(m.Layers)
	if err != nil {
		return TransformerPlan{}, fmt.Errorf("torch plan: %w", err)
	}
	spec := TransformerSpec{Layers: m.Layers, Hidden: m.Hidden, Heads: m.Heads, KVHeads: m.KVHeads, FFN: m.FFN,
		Seq: m.Seq, Vocab: m.Vocab, Batch: m.Batch, Tied: m.Tied, Norm: "layernorm", Activation: "gelu"}
	if m.SwiGLU() {
		spec.Norm, spec.Activation = "rmsnorm", "swiglu"
	}
	tp := TransformerPlan{Format: TransformerPlanFormat, Version: TransformerPlanVersion, Graph: m.String(), Transformer: spec, GPUs: gpus,
		Tensor: T, Pipeline: P, Replicas: R, MicroBatchSize: s.MicroBatchSize, MicroBatches: s.M(),
		Schedule: s.Sched(), SequenceParallel: s.SequenceParallel, Recompute: s.Recompute,
		DistributedOpt: s.DistOpt}
	next := 0
	for p, n := range counts {
		st := TransformerStage{Stage: p, Embedding: p == 0, Output: p == P-1}
		for l := next; l < next+n; l++ {
			st.Layers = append(st.Layers, l)
		}
		next += n
		tp.Stages = append(tp.Stages, st)
	}
	return tp, nil
}
