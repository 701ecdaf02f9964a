package plan

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/placer/placer/decision"
)

// Strategy is a plan of a uniform transformer at cluster scale
// (Megatron-LM's parallelism, DESIGN §12): GPUs = Tensor x Context x
// Pipeline x Replicas, every stage holding its share of identical layers,
// so the stages are a count, not a placement. The zero value is one GPU's
// plan with every degree left to Resolve (the data-parallel degree from
// the GPUs the others leave, the micro-batches from the batch). An op
// graph's strategy around its placement is Strategy; the two
// share the data-parallel degree, the micro-batches and the schedule's
// names, and ParseStrategy refuses the keys only an op graph has.
type Strategy struct {
	// Replicas is the data-parallel degree D (0: what the GPUs leave).
	Replicas int
	// MicroBatches is M, the micro-batches of each replica's share of
	// the batch (0: the batch over dp x mbs; Resolve fills it in).
	MicroBatches int
	// Schedule orders the micro-batches through the stages ("": 1F1B,
	// interleaved with virtual stages; Resolve writes it).
	Schedule decision.Schedule
	// DistOpt is Megatron-LM's distributed optimizer (ZeRO-1, written
	// shard=zero1): every replica keeps the whole parameters and
	// gradients, the gradients are reduce-scattered, each GPU steps 1/D
	// of the optimizer state, and the updated parameters are all-gathered.
	DistOpt bool
	// NoGradOverlap is grad-overlap=off: the data-parallel gradients'
	// reductions run after the backward, not beside it (apex's
	// DistributedFusedLAMB without overlap_reductions, NVIDIA's MLPerf
	// BERT run_pretraining.py without --dwu-overlap-reductions, its
	// default: optimizer.complete_reductions() after the backward;
	// Megatron-LM without --overlap-grad-reduce).
	NoGradOverlap bool
	// OneQueue is connections=1: the run's CUDA_DEVICE_MAX_CONNECTIONS=1,
	// every stream's work in one hardware queue, so a collective or a
	// point-to-point kernel runs to its end before the compute queued
	// behind it starts (NVIDIA/Megatron-LM#1468: --overlap-grad-reduce
	// and --overlap-param-gather overlap nothing at 1, and do when it is
	// unset; alibaba/Megatron-LLaMA#26, li-yi-dong: at 1 the kernels of
	// other streams wait for the data-parallel communication to end).
	// Megatron-Core asserts it is 1 with tensor or context parallelism
	// on Hopper outside FSDP (megatron/training/arguments.py, 1e057005);
	// Megatron's FSDP asserts it is not. Priced: the data-parallel
	// reductions and gathers exposed whole (dpExposed) and each
	// micro-batch's pipeline sends and receives in the steady state
	// (steadySends).
	OneQueue bool
	// QueueAhead is queue-ahead=on (with connections=1): the run's code
	// launches each collective and pipeline transfer ahead of the compute
	// it hides behind, one bucket in flight, its kernels held to a few
	// CTAs beside the compute's, so one hardware queue serializes only
	// the launches and the overlap stands as with many queues (NVIDIA's
	// MLPerf GPT-3 NeMo configs v3.0 to v4.0: config_common.sh exports
	// CUDA_DEVICE_MAX_CONNECTIONS=1 beside NVTE_FWD/BWD_LAYERNORM_SM_MARGIN
	// "to improve p2p overlap on H100", per-communicator max_ctas (v3.1
	// MEGATRON_CORE_*_MAX_CTAS, v4.0 conf/nccl/custom_communicator_cta.yaml:
	// dp 8, pp 2), overlap_p2p_comm True, batch_p2p_comm False,
	// overlap_grad_sync and overlap_param_sync True; Megatron-Core's
	// distrib_optimizer.py in the v4.0 submissions: the next bucket's
	// all-gather launched when the last ends "to ensure that the
	// communication kernels don't head-of-line block the compute kernels
	// since we run with CUDA_DEVICE_MAX_CONNECTIONS=1"). Priced: OneQueue
	// exposes nothing (Serialized is false).
	QueueAhead bool
	// AmaxSync is amax-sync=tp-dp or tp: with fp8=delayed, each model
	// chunk's forward and backward end in an all-reduce of its FP8
	// amaxes that the compute stream waits for, over the tensor x data
	// group (AmaxSyncTPDP) or the tensor group (AmaxSyncTP): Transformer
	// Engine's amax reduction without NVTE_ASYNC_AMAX_REDUCTION (release_v0.8
	// to 1.x; mechanisms.AmaxSync). "" (amax-sync=off): not priced (the
	// reduction asynchronous, or none).
	AmaxSync string
	// Tensor is the tensor-parallel degree T (0 = 1): Megatron-LM's
	// column- then row-parallel split of every attention and MLP block,
	// and a vocabulary-parallel embedding and output layer, over T GPUs
	// of one node.
	Tensor int
	// SequenceParallel splits what runs between the tensor-parallel
	// blocks (norms, dropout, residuals) along the sequence over the T
	// GPUs, turning each all-reduce into a reduce-scatter and an
	// all-gather (Korthikanti et al., 2022).
	SequenceParallel bool
	// Pipeline is the number of pipeline stages P (0 = 1).
	Pipeline int
	// Virtual is the number of model chunks per pipeline stage V
	// (interleaved 1F1B; 0 = 1).
	Virtual int
	// MicroBatchSize is the samples per micro-batch (0: 1, Resolve's).
	MicroBatchSize int
	// Recompute is what a layer's backward recomputes of its forward.
	Recompute Recompute
	// RecomputeLayers, with full recomputation, is how many layers of
	// each model chunk recompute their forward (Megatron-LM's
	// --recompute-method block --recompute-num-layers N); the others keep
	// their activations. 0: every layer (--recompute-method uniform
	// --recompute-num-layers 1).
	RecomputeLayers int
	// TPOverlap overlaps the tensor-parallel all-gathers and
	// reduce-scatters with the GEMMs beside them (Megatron-Core's
	// --tp-comm-overlap; it needs sequence parallelism).
	TPOverlap bool
	// FirstLayers and LastLayers are the layers of the first and the last
	// pipeline stage where they differ from the others' share (0: an even
	// share); the stages between split the rest evenly (Megatron-Core's
	// later --decoder-first-pipeline-num-layers and
	// --decoder-last-pipeline-num-layers; Llama 3 405B's 126 layers on 16
	// stages are first=7, last=7: 7, 8 x 14, 7). StageLayers gives the
	// split.
	FirstLayers, LastLayers int
	// TensorStages, when set, is each pipeline stage's tensor-parallel
	// degree, P of them, in place of Tensor (which is then 0): stage i
	// runs on TensorStages[i] x Replicas GPUs, the plan on Replicas x
	// their sum ("stage-tp=4:8:8:8"). The data-parallel degree is every
	// stage's. nil: every stage runs Tensor.
	TensorStages []int
	// Context is the context-parallel degree C (0 = 1): every sequence
	// of a micro-batch split over C GPUs, each holding 2 of its 2C
	// chunks (chunks i and 2C-1-i, so that causal attention's work is
	// even), the keys and values exchanged around the C GPUs for
	// attention (Megatron-Core's --context-parallel-size). GPUs = Tensor
	// x Context x Pipeline x Replicas; the C GPUs hold the same weights,
	// so gradients are reduced over Context x Replicas.
	Context int
	// Experts is the expert-parallel degree EP of a model with experts
	// (0 = 1): each MoE block's experts split over EP GPUs, the tokens
	// dispatched to their experts and combined back by all-to-alls
	// (Megatron-Core's --expert-model-parallel-size).
	Experts int
	// ExpertTensor is the expert-tensor-parallel degree ETP (0: the
	// tensor-parallel degree, Megatron-Core's default for
	// --expert-tensor-parallel-size): each expert's GEMMs split over ETP
	// GPUs. The experts have a mesh of their own inside each pipeline
	// stage's Tensor x Context x Replicas GPUs: ETP x EP x expert-DP,
	// expert-DP = T x C x D / (ETP x EP) the replicas of an expert's
	// weights (over which its gradients are reduced).
	ExpertTensor int
	// Imbalance is the tokens the most loaded expert-parallel rank
	// receives over the mean (0 = 1: balanced, as the published
	// benchmarks force it): its expert GEMMs and all-to-all traffic are
	// that much larger.
	Imbalance float64
	// FSDP shards the weights, gradients and optimizer state over the
	// data-parallel (and context) ranks, ZeRO-3 as Megatron-FSDP runs it
	// (--use-megatron-fsdp, optim_grads_params): each stage's weights
	// all-gathered for every micro-batch's forward and again for its
	// backward, its gradients reduce-scattered after each backward. In
	// a model with experts (Megatron-FSDP's two meshes) the experts'
	// weights are sharded over the expert-data-parallel ranks and the
	// rest over the data-parallel and context ranks. Not with DistOpt.
	FSDP bool
	// FP8 is the FP8 recipe of the transformer blocks' GEMMs
	// (Transformer Engine's: "current" per-tensor current scaling,
	// "delayed" per-tensor delayed scaling, "blockwise" 1 x 128 and 128
	// x 128 blocks); "": BF16.
	FP8 string
	// FP8Gather gathers the blocks' linear weights under FSDP in float8,
	// cast on the shard before the all-gather (torchao's
	// enable_fsdp_float8_all_gather with
	// precompute_float8_dynamic_scale_for_fsdp: float8gather.go); only
	// with fp8=current and fsdp=on on a torchtitan stack.
	FP8Gather bool
	// GradBF16 keeps the gradients in BF16 and reduces them over the
	// data-parallel ranks in BF16 (Megatron-LM's --grad-reduce-in-bf16,
	// Megatron-Bridge's ddp.grad_reduce_in_fp32=False, torchtitan's
	// mixed_precision_reduce "bfloat16"); false: FP32 main gradients,
	// Megatron-LM's rule for BF16 training (arguments.py turns on
	// --accumulate-allreduce-grads-in-fp32 with --bf16). Halves the
	// gradient buffer and the data-parallel reduction's bytes.
	GradBF16 bool
	// EPOverlap overlaps the experts' all-to-alls of one micro-batch with
	// the computation of another (Megatron-Core's
	// --overlap-moe-expert-parallel-comm with --delay-wgrad-compute: the
	// forward of a micro-batch and the backward of the one before merged
	// layer by layer, in the steady state of 1F1B). With ep > 1; with
	// pp > 1 it needs virtual stages; not with full recomputation.
	EPOverlap bool
	// EmbeddingLayer and LossLayer count the embedding as one layer of
	// the first model chunk and the loss (the final norm, the output
	// layer and the cross-entropy) as one of the last in the pipeline
	// split (Megatron-Core's account_for_embedding_in_pipeline_split and
	// account_for_loss_in_pipeline_split, Megatron-LM's
	// --account-for-embedding-in-pipeline-split and
	// --account-for-loss-in-pipeline-split): the layers and those units
	// split evenly over the P x V model chunks, so the first chunk holds
	// one layer fewer (the embedding alone where a chunk is one unit) and
	// the last likewise. With pp > 1; not with first= or last= other
	// than the split they give (StageLayers).
	EmbeddingLayer, LossLayer bool
	// RecomputeModules, with selective recomputation, are the modules
	// each layer recomputes in its backward (Megatron-Core's
	// --recompute-modules); 0: the core attention alone, Megatron-Core's
	// default (recompute=selective).
	RecomputeModules RecomputeModules
	// FineTune is the plan's fine-tuning (finetune.go): LoRA adapters on
	// frozen base weights, sequences packed from shorter samples; its
	// zero value is full training on whole sequences.
	FineTune
	// MemoryRecipe is how the plan's recipe holds its weights and
	// activations and runs the caching allocator (recipe.go: FP8
	// primary weights, FP8 activation storage, CPU activation offload,
	// the allocator's garbage collection); its zero value is BF16
	// weights with their FP8 copies, BF16 activations, none offloaded,
	// PyTorch's defaults.
	MemoryRecipe
	// Software is the software stack the plan runs on (stack.go: a
	// named stack, the token dispatcher, fusions, grouped GEMMs, CUDA
	// graphs, the routing); its zero value is placer's default stack.
	Software Software
	// Declared is the values of the keys a plug-in declares beside its
	// own code (AddKey, SwitchKey), which no field here holds; its zero
	// value leaves each at its default.
	Declared Declared `json:",omitempty"`
}

// RecomputeModules is a set of the modules selective recomputation
// recomputes (Megatron-Core's recompute_modules,
// megatron/core/transformer/transformer_config.py), written as their
// names joined by "+": "layernorm+moe_act".
type RecomputeModules uint8

// The modules, in Megatron-Core's order. core_attn, mlp, moe and
// shared_experts are checkpointed (their input kept, their forward run
// again before their backward); moe_act, layernorm and mla_up_proj
// discard their output after the forward and recompute it (the input is
// kept by the modules that read it).
const (
	// RecomputeCoreAttn is the core attention (recompute=selective's).
	RecomputeCoreAttn RecomputeModules = 1 << iota
	// RecomputeMoEAct is the experts' activation function: its output
	// (the second grouped GEMM's input) is not kept.
	RecomputeMoEAct
	// RecomputeLayerNorm is the norms that are modules of their own in
	// Megatron-Core's Transformer Engine layers: an MoE block's norm
	// before its experts and latent attention's input norm (the other
	// norms are fused into the GEMM after them, TELayerNormColumnParallelLinear,
	// and not recomputed): their output is not kept.
	RecomputeLayerNorm
	// RecomputeMLAUpProj is latent attention's up projections and
	// rotary embedding: the heads' queries, keys and values are not kept.
	RecomputeMLAUpProj
	// RecomputeMLP is the dense MLP of a dense block (its norm fused in).
	RecomputeMLP
	// RecomputeMoE is an MoE block's whole MoE layer: router, dispatch,
	// experts, combine, the shared experts, its all-to-alls again.
	RecomputeMoE
	// RecomputeSharedExperts is an MoE block's shared experts.
	RecomputeSharedExperts
)

// recomputeNames are the modules' names, in the order of the constants.
var recomputeNames = [...]string{"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"}

// Has reports whether the set holds module x.
func (r RecomputeModules) Has(x RecomputeModules) bool { return r&x != 0 }

// String writes the set as recompute-modules reads it: the names in
// Megatron-Core's order joined by "+" ("" for none).
func (r RecomputeModules) String() string {
	var parts []string
	for i, n := range recomputeNames {
		if r&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, "+")
}

// Names are the set's module names, Megatron-Core's spelling, in its
// order (--recompute-modules' values).
func (r RecomputeModules) Names() []string {
	if r == 0 {
		return nil
	}
	return strings.Split(r.String(), "+")
}

// parseRecomputeModules reads "layernorm+moe_act".
func parseRecomputeModules(v string) (RecomputeModules, error) {
	var r RecomputeModules
	for _, x := range strings.Split(v, "+") {
		i := slices.Index(recomputeNames[:], strings.ToLower(strings.TrimSpace(x)))
		if i < 0 {
			return 0, fmt.Errorf("%q is not a module Megatron-Core recomputes (want %s, joined by +)", x, strings.Join(recomputeNames[:], ", "))
		}
		r |= 1 << i
	}
	return r, nil
}

// Recomputes is the set of modules plan s recomputes in each layer's
// backward with selective recomputation (RecomputeModules, or the core
// attention alone where none are named); 0 without it.
func (s Strategy) Recomputes() RecomputeModules {
	if s.Recompute != SelectiveRecompute {
		return 0
	}
	if s.RecomputeModules == 0 {
		return RecomputeCoreAttn
	}
	return s.RecomputeModules
}

// The groups of amax-sync (Strategy.AmaxSync).
const (
	AmaxSyncTPDP = "tp-dp"
	AmaxSyncTP   = "tp"
)

// The FP8 recipes (Strategy.FP8).
const (
	FP8Current   = "current"
	FP8Delayed   = "delayed"
	FP8Blockwise = "blockwise"
	// FP8MX and FP4NV are the block-scaled formats of Blackwell's tensor
	// cores (blockscaled.go): MXFP8 (fp8=mxfp8) and NVFP4, written
	// fp4=nvfp4 and held in Strategy.FP8 as the blocks' GEMM recipe.
	FP8MX = "mxfp8"
	FP4NV = "nvfp4"
)

// Recompute is activation recomputation (Korthikanti et al., 2022).
type Recompute string

// The recomputations.
const (
	// NoRecompute keeps every activation the backward needs.
	NoRecompute Recompute = ""
	// SelectiveRecompute recomputes the core attention (the softmax and
	// its dropout) in the backward, keeping the rest.
	SelectiveRecompute Recompute = "selective"
	// FullRecompute keeps only each layer's input and runs the layer's
	// forward again before its backward.
	FullRecompute Recompute = "full"
)

// ReplicaCount is the data-parallel degree (at least 1).
func (s Strategy) ReplicaCount() int { return max(s.Replicas, 1) }

// MicroBatchCount is the number of micro-batches (at least 1).
func (s Strategy) MicroBatchCount() int { return max(s.MicroBatches, 1) }

// Sched is the schedule in effect (GPipe when none is named, as
// Strategy's; Resolve names 1F1B where it applies).
func (s Strategy) Sched() decision.Schedule {
	if s.Schedule == "" {
		return decision.GPipe
	}
	return s.Schedule
}

// TensorDegree is the tensor-parallel degree (at least 1).
func (s Strategy) TensorDegree() int { return max(s.Tensor, 1) }

// PipelineDegree is the number of pipeline stages (at least 1).
func (s Strategy) PipelineDegree() int { return max(s.Pipeline, 1) }

// VirtualStages is the number of model chunks per pipeline stage (at least 1).
func (s Strategy) VirtualStages() int { return max(s.Virtual, 1) }

// ContextDegree is the context-parallel degree (at least 1).
func (s Strategy) ContextDegree() int { return max(s.Context, 1) }

// ExpertDegree is the expert-parallel degree (at least 1).
func (s Strategy) ExpertDegree() int { return max(s.Experts, 1) }

// StageTensor is each of the P pipeline stages' tensor-parallel degree:
// TensorStages where set, else T for every stage.
func (s Strategy) StageTensor() []int {
	if s.TensorStages != nil {
		return s.TensorStages
	}
	out := make([]int, s.PipelineDegree())
	for i := range out {
		out[i] = s.TensorDegree()
	}
	return out
}

// MaxTensor is the largest tensor-parallel degree of any stage (at least 1).
func (s Strategy) MaxTensor() int {
	t := s.TensorDegree()
	for _, x := range s.TensorStages {
		t = max(t, x)
	}
	return t
}

// Equal reports whether s and o are the same plan (Strategy holds a
// slice, so == does not compile).
func (s Strategy) Equal(o Strategy) bool {
	if !slices.Equal(s.TensorStages, o.TensorStages) {
		return false
	}
	s.TensorStages, o.TensorStages = nil, nil
	return reflect.DeepEqual(s, o)
}

// StageLayers is how many of a transformer's layers each of the P
// pipeline stages holds: layers / P each, or with FirstLayers or
// LastLayers those on the end stages and the rest split evenly over the
// stages between; with EmbeddingLayer or LossLayer the layers and those
// units split evenly over the P stages, the first stage holding one
// layer fewer for the embedding and the last one fewer for the loss
// (Megatron-Core's get_num_layers_to_build: 94 layers, both units, pp=8:
// 11, 12 x 6, 11), FirstLayers and LastLayers, where given, checked
// against that. The error is one line naming what does not add up.
func (s Strategy) StageLayers(layers int) ([]int, error) {
	P := s.PipelineDegree()
	out := make([]int, P)
	if s.EmbeddingLayer || s.LossLayer {
		return s.unitLayers(layers, out)
	}
	if s.FirstLayers == 0 && s.LastLayers == 0 {
		if layers%P != 0 {
			return nil, fmt.Errorf("pp=%d does not divide the %d layers (first= and last= set the end stages' layers)", P, layers)
		}
		for i := range out {
			out[i] = layers / P
		}
		return out, nil
	}
	if P == 1 {
		return nil, fmt.Errorf("first= or last= with one pipeline stage: they set the end stages of a pipeline")
	}
	rest, inner := layers, P
	if s.FirstLayers > 0 {
		rest, inner = rest-s.FirstLayers, inner-1
	}
	if s.LastLayers > 0 {
		rest, inner = rest-s.LastLayers, inner-1
	}
	if inner == 0 && rest != 0 {
		return nil, fmt.Errorf("first=%d + last=%d is not the %d layers of 2 stages", s.FirstLayers, s.LastLayers, layers)
	}
	if inner > 0 && (rest < inner || rest%inner != 0) {
		return nil, fmt.Errorf("first=%d, last=%d: the other %d layers do not split evenly over the other %d stages (at least one each)", s.FirstLayers, s.LastLayers, rest, inner)
	}
	for i := range out {
		switch {
		case i == 0 && s.FirstLayers > 0:
			out[i] = s.FirstLayers
		case i == P-1 && s.LastLayers > 0:
			out[i] = s.LastLayers
		default:
			out[i] = rest / inner
		}
	}
	return out, nil
}

// endUnits is how many of the embedding and the loss count as layers
// of the first and of the last pipeline stage (EmbeddingLayer,
// LossLayer: 0 or 1 each).
func (s Strategy) endUnits() (first, last int) {
	if s.EmbeddingLayer {
		first = 1
	}
	if s.LossLayer {
		last = 1
	}
	return first, last
}

// unitLayers is StageLayers' split with the embedding or the loss
// counted as a layer (out: P stages to fill).
func (s Strategy) unitLayers(layers int, out []int) ([]int, error) {
	P := len(out)
	e, l := s.endUnits()
	if P == 1 {
		return nil, fmt.Errorf("%s with one pipeline stage: the embedding and the loss count as layers of a pipeline's split", s.unitKeys())
	}
	units := layers + e + l
	if units%P != 0 {
		ends := "embedding and the loss"
		if e == 0 {
			ends = "loss"
		} else if l == 0 {
			ends = "embedding"
		}
		return nil, fmt.Errorf("%s: the %d layers and the %s are %d units, which do not split evenly over pp=%d (Megatron-Core's account_for_*_in_pipeline_split)", s.unitKeys(), layers, ends, units, P)
	}
	for i := range out {
		out[i] = units / P
	}
	out[0] -= e
	out[P-1] -= l
	if s.FirstLayers > 0 && s.FirstLayers != out[0] || s.LastLayers > 0 && s.LastLayers != out[P-1] {
		return nil, fmt.Errorf("first=%d, last=%d with %s: the split puts %d layers on the first stage and %d on the last (Megatron-Core sets them from the layers, not both)", s.FirstLayers, s.LastLayers, s.unitKeys(), out[0], out[P-1])
	}
	return out, nil
}

// unitKeys names the plan's ends counted as layers, as written:
// "embedding-layer=on", "loss-layer=on" or both.
func (s Strategy) unitKeys() string {
	switch {
	case s.EmbeddingLayer && s.LossLayer:
		return "embedding-layer=on and loss-layer=on"
	case s.EmbeddingLayer:
		return "embedding-layer=on"
	}
	return "loss-layer=on"
}

// asWritten is a strategy as its errors name it ("strategy tp=2,pp=4:
// ..."): its String, or, where that is empty (every key at its default:
// nothing written, or tp=1), what it then is, never nothing.
type asWritten Strategy

// Serialized is whether one hardware queue exposes the run's
// communication: connections=1 without queue-ahead=on.
func (s Strategy) Serialized() bool { return s.OneQueue && !s.QueueAhead }

// Declared is the values of the keys declared outside this package
// (AddKey: a mechanism's key, declared in the mechanism's own file), as
// "name=value" pairs in the order set, comma-separated: a string, so
// that a Strategy stays a comparable value. A key at its default is not
// in it.
type Declared string

// Value is key name's value in d ("": its default).
func (d Declared) Value(name string) string {
	// Read in place (no split): every step's plug-ins ask it.
	for rest := string(d); rest != ""; {
		var kv string
		kv, rest, _ = strings.Cut(rest, ",")
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// On is whether switch name (SwitchKey) is on in d.
func (d Declared) On(name string) bool { return d.Value(name) == "on" }

// with is d with key name's value v ("": the default, left out).
func (d Declared) with(name, v string) Declared {
	var kvs []string
	for _, kv := range strings.Split(string(d), ",") {
		if k, _, _ := strings.Cut(kv, "="); kv != "" && k != name {
			kvs = append(kvs, kv)
		}
	}
	if v != "" {
		kvs = append(kvs, name+"="+v)
	}
	return Declared(strings.Join(kvs, ","))
}

// Count is count key name's value in d (CountKey), 0 where not set.
func (d Declared) Count(name string) int {
	n, err := strconv.Atoi(d.Value(name))
	if err != nil {
		return 0
	}
	return n
}

// strategyError is a plan's field out of range, as a one-line error.
func strategyError(format string, args ...any) error {
	return fmt.Errorf("scale: strategy: "+format, args...)
}
