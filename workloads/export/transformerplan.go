package export

import (
	"github.com/placer/placer/decision"
	"github.com/placer/placer/planner/plan"
)

// TransformerPlan is the TransformerPlanFormat torch plan (version 2 of
// TorchPlanFormat in files written before it had a name of its own): a
// uniform transformer run with tensor, pipeline and data parallelism
// (Megatron-LM's 3D parallelism) by tools/dev/torchplan (docs/torch-plan.md). Ranks
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
	MicroBatchSize   int               `json:"micro_batch_size"`
	MicroBatches     int               `json:"micro_batches"`
	Schedule         decision.Schedule `json:"schedule"`
	SequenceParallel bool              `json:"sequence_parallel"`
	Recompute        plan.Recompute    `json:"recompute,omitempty"`
	// RecomputeModules are the modules selective recomputation recomputes
	// (Megatron-Core's names; absent: the attention core);
	// RecomputeLayers, with full recomputation, the layers of each stage
	// that recompute (absent: every layer).
	RecomputeModules []string `json:"recompute_modules,omitempty"`
	RecomputeLayers  int      `json:"recompute_layers,omitempty"`
	DistributedOpt   bool     `json:"distributed_optimizer,omitempty"`
	// FSDP shards the weights, gradients and optimizer state over the
	// replicas (ZeRO-3; fsdp=on). tools/dev/torchplan checks the plan's
	// arithmetic, which sharding leaves as it is: it runs it replicated.
	FSDP bool `json:"fsdp,omitempty"`
	// The experts' mesh of a model with experts (absent in a dense
	// one): ExpertParallel EP GPUs split each MoE layer's experts,
	// ExpertTensor ETP split each expert, and ExpertData EDP hold the
	// same experts (over which their gradients are reduced), ETP x EP x
	// EDP = Tensor x Replicas, Megatron-Core's expert rank order (rank =
	// e + ETP (x + EP d) within a stage: expert-tensor fastest).
	ExpertParallel int                `json:"expert_parallel,omitempty"`
	ExpertTensor   int                `json:"expert_tensor,omitempty"`
	ExpertData     int                `json:"expert_data,omitempty"`
	Stages         []TransformerStage `json:"stages"`
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
	// Mixture of experts (absent: a dense model): every layer from
	// DenseLayers on replaces its MLP by Experts experts of ExpertFFN
	// (the same MLP: activation and biases) and a linear router without
	// bias, each token going to its TopK highest-scoring experts,
	// weighted by the softmax of those TopK scores.
	Experts     int `json:"experts,omitempty"`
	TopK        int `json:"topk,omitempty"`
	ExpertFFN   int `json:"expert_ffn,omitempty"`
	DenseLayers int `json:"dense_layers,omitempty"`
}

// TransformerStage is one pipeline stage: its layers, and whether it holds
// the embedding (the first) or the output layer and loss (the last).
type TransformerStage struct {
	Stage     int   `json:"stage"`
	Layers    []int `json:"layers"`
	Embedding bool  `json:"embedding,omitempty"`
	Output    bool  `json:"output,omitempty"`
}
