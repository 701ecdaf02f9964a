package plan

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
)

// The targets of Key.Exports.
var (
	toAll       = []string{ExportMegatron, ExportBridge, ExportTorchtitan, ExportDeepSpeed, ExportTorchPlan}
	toMegatron  = []string{ExportMegatron, ExportBridge}
	toMegTitan  = []string{ExportMegatron, ExportBridge, ExportTorchtitan}
	toMegPlan   = []string{ExportMegatron, ExportBridge, ExportTorchPlan}
	toAllButDS  = []string{ExportMegatron, ExportBridge, ExportTorchtitan, ExportTorchPlan}
	toAllButTtn = []string{ExportMegatron, ExportBridge, ExportDeepSpeed, ExportTorchPlan}
)

// Keys are the keys of a plan, in the order String writes them.
var Keys = []Key{
	// The batch: both worlds' keys (decision.Strategy reads them too).
	countKey(Key{Name: "dp", Aliases: []string{"replicas"}, Values: "D", Default: "the GPUs the other degrees leave",
		Help: "data-parallel replicas", Doc: docClusterScale, Exports: toAll, group: groupBatch,
		planWrite: never}, 0, func(s *Strategy) *int { return &s.Replicas }),
	countKey(Key{Name: "mb", Aliases: []string{"micro-batches", "micro_batches"}, Values: "M", Default: "the batch over dp x mbs",
		Help: "micro-batches per replica (a check: they follow from the batch)", Doc: docClusterScale, Exports: toAll,
		group: groupBatch, planWrite: never}, 0, func(s *Strategy) *int { return &s.MicroBatches }),
	{Name: "schedule", Values: "1f1b|gpipe", Default: "1f1b", Help: "the pipeline schedule", Doc: docClusterScale,
		Exports: toAll, group: groupBatch,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			s.Schedule = decision.Schedule(strings.ToLower(v))
			return nil
		},
		write: func(s Strategy) string { return string(s.Schedule) },
		planWrite: func(pl Plan) string {
			if pl.PP > 1 && pl.Sched() == decision.GPipe {
				return string(decision.GPipe)
			}
			return ""
		}},
	{Name: "shard", Values: "zero1|none", Default: "none", Help: "zero1: the distributed optimizer (distopt=on)",
		Doc: docClusterScale, Exports: toAllButTtn, group: groupBatch, planWrite: never,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			switch strings.ToLower(v) {
			case "none", "ddp":
				s.DistOpt = false
			case "zero1":
				s.DistOpt = true
			case string(decision.FullShard), string(decision.GradShard):
				return refuse("shard=%s is an op graph's sharding, not modelled at cluster scale (use distopt=on, ZeRO-1)", strings.ToLower(v))
			default:
				return refuse("shard %q: want zero1 or none", v)
			}
			return nil
		},
		write: func(s Strategy) string { return map[bool]string{true: "zero1"}[s.DistOpt] }},

	// The degrees (Plan.String writes its own, resolved, first).
	countKey(Key{Name: "tp", Aliases: []string{"tensor"}, Values: "T", Default: "1", Help: "tensor-parallel degree",
		Doc: docClusterScale, Exports: toAllButDS, group: groupDegrees, planWrite: never}, 1, func(s *Strategy) *int { return &s.Tensor }),
	countKey(Key{Name: "cp", Aliases: []string{"context", "context-parallel"}, Values: "C", Default: "1",
		Help: "context-parallel degree: each sequence split over C GPUs", Doc: docClusterScale, Exports: toMegTitan,
		group: groupDegrees, planWrite: never}, 1, func(s *Strategy) *int { return &s.Context }),
	countKey(Key{Name: "pp", Aliases: []string{"pipeline"}, Values: "P", Default: "1", Help: "pipeline stages",
		Doc: docClusterScale, Exports: toAllButDS, group: groupDegrees, planWrite: never}, 1, func(s *Strategy) *int { return &s.Pipeline }),
	countKey(Key{Name: "vp", Aliases: []string{"virtual"}, Values: "V", Default: "1", Help: "virtual stages (model chunks) per pipeline stage",
		Doc: docClusterScale, Exports: toMegTitan, group: groupDegrees, planWrite: never}, 1, func(s *Strategy) *int { return &s.Virtual }),
	countKey(Key{Name: "mbs", Aliases: []string{"micro-batch-size", "micro_batch_size"}, Values: "b", Default: "1",
		Help: "micro-batch size", Doc: docClusterScale, Exports: toAll, group: groupDegrees, planWrite: never},
		0, func(s *Strategy) *int { return &s.MicroBatchSize }),

	onOffKey(Key{Name: "sp", Aliases: []string{"sequence-parallel"}, Help: "sequence parallelism over the tensor-parallel GPUs",
		Doc: docClusterScale, Exports: toAllButDS, group: groupSP}, func(s *Strategy) *bool { return &s.SequenceParallel }),

	// Recomputation.
	{Name: "recompute", Values: "none|selective|full", Default: "none", Help: "activation recomputation",
		Doc: docClusterScale, Exports: toAllButDS, group: groupRecompute,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			if strings.EqualFold(v, "none") {
				s.Recompute = NoRecompute
			} else {
				s.Recompute = Recompute(strings.ToLower(v))
			}
			return nil
		},
		write: func(s Strategy) string { return string(s.Recompute) }},
	{Name: "recompute-modules", Aliases: []string{"recompute_modules"}, Values: "M+M...", Default: "core_attn",
		Help: "the modules selective recomputation recomputes", Doc: docClusterScale, Exports: toMegPlan, group: groupRecompute,
		set: func(s *Strategy, v string, _ map[string]bool) (err error) {
			s.RecomputeModules, err = parseRecomputeModules(v)
			return err
		},
		write: func(s Strategy) string { return s.RecomputeModules.String() }},
	countKey(Key{Name: "recompute-layers", Aliases: []string{"recompute_layers"}, Default: "every layer",
		Help: "with recompute=full, the layers of each model chunk that recompute", Doc: docClusterScale,
		Exports: toMegPlan, group: groupRecompute}, 0, func(s *Strategy) *int { return &s.RecomputeLayers }),

	// The overlaps and queues.
	onOffKey(Key{Name: "tpoverlap", Aliases: []string{"tp-comm-overlap"}, Help: "tensor-parallel communication overlapped with the GEMMs",
		Doc: docClusterScale, Exports: toMegTitan, group: groupOverlap}, func(s *Strategy) *bool { return &s.TPOverlap }),
	{Name: "distopt", Aliases: []string{"distributed-optimizer"}, Values: "on|off", Default: "off",
		Help: "the distributed optimizer (ZeRO-1; String writes it shard=zero1)", Doc: docClusterScale, group: groupOverlap,
		set: func(s *Strategy, v string, seen map[string]bool) error {
			on, err := onOff(v)
			if on {
				if seen["shard"] {
					return refuse("distopt and shard both given (distopt=on is shard=zero1)")
				}
				s.DistOpt = true
			}
			return err
		},
		write:     func(Strategy) string { return "" },
		planWrite: func(pl Plan) string { return map[bool]string{true: "on"}[pl.DistOpt] }},
	{Name: "grad-overlap", Aliases: []string{"overlap-grad-reduce"}, Values: "on|off", Default: "on",
		Help: "the data-parallel gradients reduced beside the backward (off: after it)", Doc: docClusterScale, group: groupOverlap,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			on, err := onOff(v)
			s.NoGradOverlap = !on
			return err
		},
		write: func(s Strategy) string { return map[bool]string{true: "off"}[s.NoGradOverlap] }},
	{Name: "connections", Aliases: []string{"cuda-device-max-connections"}, Values: "N", Default: "more than 1",
		Help: "CUDA_DEVICE_MAX_CONNECTIONS (1: one hardware queue)", Doc: docClusterScale, group: groupOverlap,
		set: func(s *Strategy, v string, _ map[string]bool) (err error) {
			n, aerr := strconv.Atoi(v)
			if aerr != nil || n < 1 {
				err = fmt.Errorf("%q: want CUDA_DEVICE_MAX_CONNECTIONS, a count of at least 1", v)
			}
			s.OneQueue = n == 1
			return err
		},
		write: func(s Strategy) string { return map[bool]string{true: "1"}[s.OneQueue] }},
	onOffKey(Key{Name: "queue-ahead", Help: "with connections=1, communication launched ahead of the compute hiding it",
		Doc: docClusterScale, group: groupOverlap}, func(s *Strategy) *bool { return &s.QueueAhead }),
	{Name: "amax-sync", Values: "tp-dp|tp|off", Default: "off", Help: "with fp8=delayed, the FP8 amaxes' all-reduce waited for, over that group",
		Doc: docClusterScale, group: groupOverlap,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			switch s.AmaxSync = strings.ToLower(v); s.AmaxSync {
			case AmaxSyncTPDP, AmaxSyncTP:
			case "off":
				s.AmaxSync = ""
			default:
				return fmt.Errorf("%q: want tp-dp (the FP8 amaxes' all-reduce waited for, over the tensor x data group), tp (over the tensor group) or off", v)
			}
			return nil
		},
		write: func(s Strategy) string { return s.AmaxSync }},

	// The pipeline's stages.
	countKey(Key{Name: "first", Aliases: []string{"first-stage-layers"}, Default: "an even share",
		Help: "the layers of the first pipeline stage", Doc: docClusterScale, Exports: toAllButDS, group: groupStages},
		0, func(s *Strategy) *int { return &s.FirstLayers }),
	countKey(Key{Name: "last", Aliases: []string{"last-stage-layers"}, Default: "an even share",
		Help: "the layers of the last pipeline stage", Doc: docClusterScale, Exports: toAllButDS, group: groupStages},
		0, func(s *Strategy) *int { return &s.LastLayers }),
	onOffKey(Key{Name: "embedding-layer", Aliases: []string{"account-for-embedding-in-pipeline-split"},
		Help: "the embedding counted as a layer of the pipeline split", Doc: docClusterScale, Exports: toAllButDS,
		group: groupStages}, func(s *Strategy) *bool { return &s.EmbeddingLayer }),
	onOffKey(Key{Name: "loss-layer", Aliases: []string{"account-for-loss-in-pipeline-split"},
		Help: "the loss counted as a layer of the pipeline split", Doc: docClusterScale, Exports: toAllButDS,
		group: groupStages}, func(s *Strategy) *bool { return &s.LossLayer }),
	{Name: "stage-tp", Aliases: []string{"tensor-stages"}, Values: "T0:T1:...", Default: "tp for every stage",
		Help: "each pipeline stage's tensor-parallel degree, in place of tp", Doc: docClusterScale, Exports: toMegPlan,
		group: groupStages, planWrite: never,
		set: func(s *Strategy, v string, _ map[string]bool) (err error) {
			s.TensorStages, err = degrees(v)
			return err
		},
		write: func(s Strategy) string {
			if s.TensorStages == nil {
				return ""
			}
			return stageTP(s.TensorStages)
		}},

	// The experts.
	countKey(Key{Name: "ep", Aliases: []string{"expert-parallel"}, Values: "E", Default: "1", Help: "expert-parallel degree",
		Doc: docClusterScale, Exports: toAll, group: groupRest,
		planWrite: func(pl Plan) string {
			if pl.EP > 1 {
				return strconv.Itoa(pl.EP)
			}
			return ""
		}}, 1, func(s *Strategy) *int { return &s.Experts }),
	countKey(Key{Name: "etp", Aliases: []string{"expert-tensor-parallel"}, Default: "tp's",
		Help: "expert-tensor-parallel degree", Doc: docClusterScale, Exports: toAll, group: groupRest,
		planWrite: func(pl Plan) string {
			if pl.ETP != pl.TP {
				return strconv.Itoa(pl.ETP)
			}
			return ""
		}}, 0, func(s *Strategy) *int { return &s.ExpertTensor }),
	{Name: "imbalance", Values: "f", Default: "1", Help: "the most loaded expert-parallel rank's tokens over the mean, 1 to 64",
		Doc: docClusterScale, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			f, err := strconv.ParseFloat(v, 64)
			s.Imbalance = f
			if err != nil || !(f >= 1 && f <= 64) {
				return fmt.Errorf("%q is not a factor from 1 to 64", v)
			} else if f == 1 {
				s.Imbalance = 0
			}
			return nil
		},
		write: func(s Strategy) string {
			if s.Imbalance > 1 {
				return float(s.Imbalance)
			}
			return ""
		}},

	// Precision and sharding.
	{Name: "fp8", Values: "current|delayed|blockwise|mxfp8|rowwise|rowwise_with_gw_hp|none", Default: "none (BF16)",
		Help: "the blocks' GEMMs in FP8, with that recipe", Doc: docClusterScale, Exports: toMegTitan, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			switch v = strings.ToLower(v); v {
			case "none", "off", "bf16":
				s.FP8 = ""
			default:
				// torchao's recipe names are written with underscores;
				// rowwise-with-gw-hp reads the same.
				s.FP8 = strings.ReplaceAll(v, "-", "_")
			}
			return nil
		},
		write: func(s Strategy) string {
			if s.FP8 == FP4NV {
				return ""
			}
			return s.FP8
		}},
	{Name: "fp4", Values: "nvfp4|none", Default: "none (BF16)", Help: "the blocks' GEMMs in NVFP4",
		Doc: docClusterScale, Exports: toMegatron, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) (err error) {
			s.FP8, err = parseFP4(v)
			return err
		},
		write: func(s Strategy) string { return map[bool]string{true: FP4NV}[s.FP8 == FP4NV] }},
	onOffKey(Key{Name: "fsdp", Help: "weights, gradients and optimizer state sharded (ZeRO-3)", Doc: docClusterScale,
		Exports: toAll, group: groupRest}, func(s *Strategy) *bool { return &s.FSDP }),
	onOffKey(Key{Name: "fp8gather", Help: "with fp8=current and fsdp=on on a torchtitan stack, FSDP's all-gathers in float8",
		Doc: docClusterScale, Exports: []string{ExportTorchtitan}, group: groupRest}, func(s *Strategy) *bool { return &s.FP8Gather }),
	{Name: "grads", Aliases: []string{"grad-dtype"}, Values: "bf16|fp32", Default: "fp32",
		Help: "the gradients' precision, kept and reduced", Doc: docClusterScale, Exports: toMegatron, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			switch strings.ToLower(v) {
			case "bf16":
				s.GradBF16 = true
			case "fp32":
				s.GradBF16 = false
			default:
				return fmt.Errorf("%q: want bf16 or fp32", v)
			}
			return nil
		},
		write: func(s Strategy) string { return map[bool]string{true: "bf16"}[s.GradBF16] }},
	onOffKey(Key{Name: "epoverlap", Aliases: []string{"ep-comm-overlap"}, Help: "the experts' all-to-alls overlapped with another micro-batch's computation",
		Doc: docClusterScale, Exports: toMegatron, group: groupRest}, func(s *Strategy) *bool { return &s.EPOverlap }),

	// Fine-tuning (finetune.go).
	{Name: "peft", Values: "lora|none", Default: "none", Help: "LoRA fine-tuning", Doc: docClusterScale,
		Exports: []string{ExportBridge}, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			switch strings.ToLower(v) {
			case "lora":
				if s.LoRARank == 0 {
					s.LoRARank = -1 // set: finish gives it the default rank
				}
			case "none", "off":
				s.LoRARank = 0
			default:
				return fmt.Errorf("%q: want lora or none (DoRA and other adapters are not modelled)", v)
			}
			return nil
		},
		write: func(s Strategy) string { return map[bool]string{true: "lora"}[s.LoRA()] }},
	{Name: "lora-rank", Values: "R", Default: strconv.Itoa(DefaultLoRARank), Help: "with peft=lora, the adapters' rank",
		Doc: docClusterScale, Exports: []string{ExportBridge}, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) (err error) {
			s.LoRARank, err = positive(v)
			return err
		},
		write: func(s Strategy) string {
			if s.LoRA() {
				return strconv.Itoa(s.LoRARank)
			}
			return ""
		}},
	{Name: "lora-alpha", Values: "A", Default: "twice the rank", Help: "with peft=lora, the adapters' alpha",
		Doc: docClusterScale, Exports: []string{ExportBridge}, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) (err error) {
			s.LoRAAlpha, err = positive(v)
			return err
		},
		write: func(s Strategy) string {
			if s.LoRA() && s.LoRAAlpha > 0 {
				return strconv.Itoa(s.LoRAAlpha)
			}
			return ""
		}},
	{Name: "lora-targets", Values: "qkv+proj+fc1+fc2", Default: "every linear module", Help: "with peft=lora, the modules adapted",
		Doc: docClusterScale, Exports: []string{ExportBridge}, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) (err error) {
			s.LoRATargets, err = parseLoRATargets(v)
			return err
		},
		write: func(s Strategy) string {
			if s.LoRA() && s.LoRATargets != 0 && s.LoRATargets != LoRAAll {
				return s.LoRATargets.String()
			}
			return ""
		}},
	{Name: "lora-dropout", Values: "P", Default: "0", Help: "with peft=lora, the dropout on each adapter's input",
		Doc: docClusterScale, Exports: []string{ExportBridge}, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			p, err := strconv.ParseFloat(v, 64)
			s.LoRADropout = p
			if err != nil || !(p >= 0 && p < 1) {
				return fmt.Errorf("%q is not a dropout probability from 0, below 1", v)
			}
			return nil
		},
		write: func(s Strategy) string {
			if s.LoRA() {
				return float(s.LoRADropout)
			}
			return ""
		}},
	{Name: "lora-a2a", Values: "on|off", Default: "off", Help: "with peft=lora and sp=on, a row-parallel adapter's output returned by an all-to-all",
		Doc: docClusterScale, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) (err error) {
			s.LoRAA2A, err = onOff(v)
			return err
		},
		write: func(s Strategy) string { return map[bool]string{true: "on"}[s.LoRA() && s.LoRAA2A] }},
	onOffKey(Key{Name: "lora-dropout-recompute", Help: "with lora-dropout, the adapters' dropout masks drawn again in the backward, not kept",
		Doc: docClusterScale, group: groupRest}, func(s *Strategy) *bool { return &s.LoRADropoutRecompute }),
	{Name: "pack", Values: "on|off", Default: "off", Help: "sequences packed from samples (pack-len)", Doc: docClusterScale,
		Exports: toMegatron, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			on, err := onOff(v)
			if err == nil && on && s.PackLens == nil {
				s.PackLens = []int{} // on: finish wants pack-len
			} else if !on {
				s.PackLens = nil
			}
			return err
		},
		write: func(s Strategy) string { return map[bool]string{true: "on"}[s.Packed()] }},
	{Name: "pack-len", Values: "L1:L2:...", Default: "none", Help: "the packed samples' lengths", Doc: docClusterScale,
		Exports: toMegatron, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) (err error) {
			s.PackLens, err = degrees(v)
			return err
		},
		write: func(s Strategy) string {
			if s.Packed() {
				return stageTP(s.PackLens)
			}
			return ""
		}},

	// The memory recipe (recipe.go).
	onOffKey(Key{Name: "fp8-params", Aliases: []string{"fp8-param-gather"}, Help: "FP8 primary weights",
		Doc: docClusterScale, Exports: toMegatron, group: groupRest}, func(s *Strategy) *bool { return &s.FP8Params }),
	onOffKey(Key{Name: "fp8-activation", Help: "the MLP activation's input stored in FP8",
		Doc: docClusterScale, Exports: []string{ExportBridge}, group: groupRest}, func(s *Strategy) *bool { return &s.FP8Activation }),
	onOffKey(Key{Name: "fp8-output-proj", Help: "with fp8=mxfp8, the output layer's GEMMs in MXFP8 (Megatron-Core's fp8_output_proj)",
		Doc: docClusterScale, Exports: []string{ExportBridge}, group: groupRest}, func(s *Strategy) *bool { return &s.FP8OutputProj }),
	onOffKey(Key{Name: "fp8-dpa", Help: "Transformer Engine's FP8 attention", Doc: docClusterScale, group: groupRest},
		func(s *Strategy) *bool { return &s.FP8DPA }),
	{Name: "fp8-transpose-cache", Values: "on|off", Default: "on", Help: "with fp8-params=on, the FP8 weights' transposes cached",
		Doc: docClusterScale, Exports: []string{ExportBridge}, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			on, err := onOff(v)
			s.NoTransposeCache = !on
			return err
		},
		write: func(s Strategy) string { return map[bool]string{true: "off"}[s.NoTransposeCache] }},
	{Name: "hidden-dropout", Values: "P", Default: "the model's", Help: "the hidden dropout (0: none, no masks kept)",
		Doc: docClusterScale, Exports: toMegTitan, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			p, err := strconv.ParseFloat(v, 64)
			if err != nil || !(p >= 0 && p < 1) {
				err = fmt.Errorf("%q is not a dropout probability from 0, below 1", v)
			}
			s.NoHiddenDropout = p == 0 && err == nil
			return err
		},
		write: func(s Strategy) string { return map[bool]string{true: "0"}[s.NoHiddenDropout] }},
	countKey(Key{Name: "offload-layers", Default: "0", Help: "the layers of each model chunk whose activations go to the host",
		Doc: docClusterScale, Exports: toMegatron, group: groupRest}, 0, func(s *Strategy) *int { return &s.OffloadLayers }),
	{Name: "graph-pool", Values: "layers|none", Default: "none", Help: "the static buffers of Transformer Engine's per-layer CUDA graphs",
		Doc: docClusterScale, Exports: toMegatron, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			switch s.GraphPool = strings.ToLower(v); s.GraphPool {
			case GraphPoolLayers:
			case "none", "off":
				s.GraphPool = ""
			default:
				return fmt.Errorf("%q: want layers (Transformer Engine's make_graphed_callables, a graph a layer and micro-batch) or none", v)
			}
			return nil
		},
		write: func(s Strategy) string { return s.GraphPool }},
	{Name: "gc-threshold", Aliases: []string{"garbage_collection_threshold"}, Values: "F", Default: "none",
		Help: "the caching allocator's garbage_collection_threshold", Doc: docClusterScale, Exports: toMegatron, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) (err error) {
			s.GCThreshold, err = fraction(v, false)
			return err
		},
		write: func(s Strategy) string { return float(s.GCThreshold) }},
	{Name: "memory-fraction", Values: "F", Default: "1", Help: "the process's share of the GPU's memory",
		Doc: docClusterScale, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) (err error) {
			s.MemoryFraction, err = fraction(v, true)
			return err
		},
		write: func(s Strategy) string { return float(s.MemoryFraction) }},

	// The software stack (stack.go).
	{Name: "stack", Values: "a named stack", Default: "placer's default", Help: "a named stack, every setting of its release",
		Doc: docStacks, Exports: toMegTitan, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			s.Software.Stack = strings.ToLower(v)
			if _, err := LookupStack(v); err != nil {
				return fmt.Errorf("%q is not a named stack (%s)", v, stackNames())
			}
			return nil
		},
		write: func(s Strategy) string { return s.Software.Stack }},
	{Name: "dispatcher", Aliases: []string{"moe-token-dispatcher-type"}, Values: "alltoall|allgather|flex|hybridep",
		Default: "alltoall", Help: "the experts' token dispatcher", Doc: docStacks, Exports: toMegatron, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			s.Software.Dispatcher = strings.ToLower(v)
			if s.Software.Dispatcher == "deepep" {
				s.Software.Dispatcher = DispatcherFlex
			}
			return nil
		},
		write: func(s Strategy) string { return s.Software.Dispatcher }},
	toggleKey(Key{Name: "permute-fusion", Aliases: []string{"moe-permute-fusion"}, Help: "the experts' permutation fused",
		Exports: toMegatron}, func(s *Strategy) *Toggle { return &s.Software.PermuteFusion }),
	toggleKey(Key{Name: "router-fusion", Aliases: []string{"moe-router-fusion"}, Help: "the router fused",
		Exports: toMegatron}, func(s *Strategy) *Toggle { return &s.Software.RouterFusion }),
	toggleKey(Key{Name: "grouped-gemm", Aliases: []string{"moe-grouped-gemm"}, Help: "the experts' GEMMs grouped",
		Exports: toMegatron}, func(s *Strategy) *Toggle { return &s.Software.GroupedGEMM }),
	toggleKey(Key{Name: "compile", Help: "torch.compile of the layers", Exports: []string{ExportTorchtitan}},
		func(s *Strategy) *Toggle { return &s.Software.Compile }),
	toggleKey(Key{Name: "expandable-segments", Aliases: []string{"expandable_segments"}, Help: "the caching allocator's expandable segments"},
		func(s *Strategy) *Toggle { return &s.Software.Expandable }),
	toggleKey(Key{Name: "loss-fusion", Aliases: []string{"cross-entropy-loss-fusion"}, Help: "Transformer Engine's fused cross-entropy",
		Exports: toMegatron}, func(s *Strategy) *Toggle { return &s.Software.LossFusion }),
	{Name: "cuda-graphs", Aliases: []string{"graphs"}, Values: "off|dense|full", Default: "off", Help: "CUDA graphs",
		Doc: docStacks, Exports: toMegatron, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			s.Software.Graphs = strings.ToLower(v)
			if s.Software.Graphs == "none" {
				s.Software.Graphs = GraphsOff
			}
			return nil
		},
		write: func(s Strategy) string { return s.Software.Graphs }},
	{Name: "graph-sync", Aliases: []string{"max-iterations-per-graph"}, Values: "N", Default: "none",
		Help: "with cuda-graphs=full, a host synchronization before each replay of a graph of N steps", Doc: docClusterScale,
		group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1<<20 {
				return fmt.Errorf("%q: want the steps of one graph replay, a whole number from 1", v)
			}
			s.Software.GraphSync = n
			return nil
		},
		write: func(s Strategy) string {
			if s.Software.GraphSync > 0 {
				return strconv.Itoa(s.Software.GraphSync)
			}
			return ""
		}},
	{Name: "cp-rotate", Aliases: []string{"context-parallel-rotate-method"}, Values: "allgather|alltoall", Default: "the stack's",
		Help: "torchtitan's context-parallel rotation", Doc: docStacks, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			s.Software.CPRotate = strings.ToLower(v)
			if s.Software.CPRotate != CPRingAllGather && s.Software.CPRotate != CPRingAllToAll {
				return fmt.Errorf("%q: want allgather or alltoall", v)
			}
			return nil
		},
		write: func(s Strategy) string { return s.Software.CPRotate }},
	{Name: "cp-comm-type", Aliases: []string{"cp_comm_type"}, Values: "p2p|all_gather|a2a", Default: "p2p",
		Help: "Megatron-Core's context-parallel exchange", Doc: docStacks, Exports: toMegatron, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			s.Software.CPComm = strings.ToLower(v)
			if c := s.Software.CPComm; c != CPCommP2P && c != CPCommAllGather && c != CPCommA2A {
				return fmt.Errorf("%q: want p2p, all_gather or a2a", v)
			}
			return nil
		},
		write: func(s Strategy) string { return s.Software.CPComm }},
	{Name: "routing", Values: "dropless|capacity:F", Default: "dropless", Help: "the experts' routing", Doc: docStacks,
		Exports: toMegatron, group: groupRest,
		set: func(s *Strategy, v string, _ map[string]bool) error {
			lv := strings.ToLower(v)
			switch {
			case lv == RoutingDropless:
				s.Software.Routing, s.Software.Capacity = RoutingDropless, 0
			case strings.HasPrefix(lv, RoutingCapacity+":"):
				f, err := strconv.ParseFloat(strings.TrimPrefix(lv, RoutingCapacity+":"), 64)
				if err != nil || !(f > 0 && f <= 64) {
					return fmt.Errorf("%q: want capacity:F, F a capacity factor above 0, at most 64", v)
				}
				s.Software.Routing, s.Software.Capacity = RoutingCapacity, f
			default:
				return fmt.Errorf("%q: want dropless or capacity:F", v)
			}
			return nil
		},
		write: func(s Strategy) string {
			switch s.Software.Routing {
			case RoutingDropless:
				return RoutingDropless
			case RoutingCapacity:
				return RoutingCapacity + ":" + strconv.FormatFloat(s.Software.Capacity, 'g', -1, 64)
			}
			return ""
		}},
	rankCapacityKey,
}

// keyIndex is Keys by each name and alias.
var keyIndex = indexKeys()

// indexKeys is Keys by each name and alias.
func indexKeys() map[string]*Key {
	out := map[string]*Key{}
	for i := range Keys {
		k := &Keys[i]
		for _, n := range append([]string{k.Name}, k.Aliases...) {
			out[n] = k
		}
	}
	return out
}

// IsKey reports whether k (a name or an alias) is a key of a plan.
func IsKey(k string) bool { return keyIndex[k] != nil }

// KeyName is k's name where k is a key's alias (tensor: tp), else k.
func KeyName(k string) string {
	if key := keyIndex[k]; key != nil {
		return key.Name
	}
	return k
}

// KeysExportedTo are the names of the keys target writes a setting for
// (Key.Exports), in Keys' order.
func KeysExportedTo(target string) []string {
	var out []string
	for _, k := range Keys {
		if slices.Contains(k.Exports, target) {
			out = append(out, k.Name)
		}
	}
	return out
}

// StrategyKeys lists ParseStrategy's keys for its errors, by name in
// Keys' order.
var StrategyKeys = keyNames()

// keyNames is Keys' names, comma-separated.
func keyNames() string {
	names := make([]string, len(Keys))
	for i, k := range Keys {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// writeKeys appends to parts each key of group g as "name=value", with
// value(k) its value ("": left out).
func writeKeys(parts []string, g keyGroup, value func(k *Key) string) []string {
	for i := range Keys {
		k := &Keys[i]
		if k.group != g {
			continue
		}
		if v := value(k); v != "" {
			parts = append(parts, k.Name+"="+v)
		}
	}
	return parts
}

// KeyValue is one key=value pair of a plan's text.
type KeyValue struct{ Key, Value string }

// SplitStrategy splits a plan's text ("tp=2,pp=4") into its key=value
// pairs, in order, the keys as written; the error, one line, names a
// pair that is not key=value (and the keys, StrategyKeys) or a key given
// twice. "" has no pairs.
func SplitStrategy(text string) ([]KeyValue, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var out []KeyValue
	seen := map[string]bool{}
	for _, kv := range strings.Split(text, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || v == "" {
			return nil, fmt.Errorf("strategy %q: %q is not key=value (keys %s)", text, kv, StrategyKeys)
		}
		if seen[k] {
			return nil, fmt.Errorf("strategy %q: %q given twice", text, k)
		}
		seen[k] = true
		out = append(out, KeyValue{k, v})
	}
	return out, nil
}

// setKey sets key k of the strategy text to v (seen: the keys given so
// far, k among them); its error is one line naming the text and the key.
func (s *Strategy) setKey(text, k, v string, seen map[string]bool) error {
	if k == "bucket" {
		return fmt.Errorf("strategy %q: bucket is a key of an op graph's strategy, not of a transformer's plan at cluster scale (its gradients are reduced in one overlapped pass)", text)
	}
	key := keyIndex[k]
	if key == nil {
		return fmt.Errorf("strategy %q: unknown key %q (keys %s)", text, k, StrategyKeys)
	}
	err := key.set(s, v, seen)
	var r refusal
	switch {
	case err == nil:
		return nil
	case errors.As(err, &r):
		return fmt.Errorf("strategy %q: %s", text, r.msg)
	}
	return fmt.Errorf("strategy %q: %s: %v", text, k, err)
}

// String writes s as ParseStrategy reads it, in the order of
// Keys: "dp=48,shard=zero1,tp=8,pp=6" (Plan.String writes a resolved
// plan degrees first); "" for the zero plan.
func (s Strategy) String() string {
	var parts []string
	for g := range numGroups {
		parts = writeKeys(parts, g, func(k *Key) string { return k.write(s) })
	}
	return strings.Join(parts, ",")
}

func (w asWritten) String() string {
	if s := Strategy(w).String(); s != "" {
		return s
	}
	return "(every key at its default: tp=1, pp=1, every GPU a data-parallel replica)"
}

// String writes the plan as ParseStrategy reads it, degrees
// first: "tp=8,pp=16,dp=48,vp=7,mbs=1,sp=on,distopt=on", with context
// parallelism "tp=8,cp=16,pp=16,dp=8,..." (the
// micro-batches and the 1F1B schedule follow from it), then the other
// keys of Keys in planGroups' order.
func (pl Plan) String() string {
	s := fmt.Sprintf("tp=%d,pp=%d,dp=%d", pl.TP, pl.PP, pl.DP)
	if !pl.Uniform() {
		s = fmt.Sprintf("stage-tp=%s,pp=%d,dp=%d", stageTP(pl.TPs), pl.PP, pl.DP)
	}
	if pl.CP > 1 {
		s = fmt.Sprintf("tp=%d,cp=%d,pp=%d,dp=%d", pl.TP, pl.CP, pl.PP, pl.DP)
	}
	if pl.VP > 1 {
		s += fmt.Sprintf(",vp=%d", pl.VP)
	}
	s += fmt.Sprintf(",mbs=%d", pl.MBS)
	var parts []string
	for _, g := range planGroups {
		parts = writeKeys(parts, g, func(k *Key) string {
			if k.planWrite != nil {
				return k.planWrite(pl)
			}
			return k.write(pl.Strategy)
		})
	}
	for _, kv := range parts {
		s += "," + kv
	}
	return s
}

// Stack is the stack plan pl is costed on.
func (pl Plan) Stack() StackInfo {
	name := pl.Software.Stack
	if name == "" {
		name = "default"
	}
	return StackInfo{Name: name, Framework: pl.Software.Framework(), Compiled: !pl.Run.Eager, Keys: Strategy{Software: pl.Software}.String()}
}

// StackInfo says which software stack a plan is costed on: what
// placer eval and search print on their "stack" line and write as
// "stack" in --json and in a search's plan file (-o), which placer
// export reads to write the plan for the framework it was costed for.
type StackInfo struct {
	// Name is the named stack (stack=NAME), "default" for placer's
	// default stack (Megatron-Core with Transformer Engine's fused
	// kernels).
	Name string `json:"name"`
	// Framework is whose run the stack is (Software.Framework).
	Framework string `json:"framework"`
	// Compiled is whether the dense layers are costed as fused kernels
	// (Transformer Engine's, or torch.compile's: compile=on) rather than
	// as the ATen ops eager PyTorch issues.
	Compiled bool `json:"compiled"`
	// Keys are the plan's software keys as written in its strategy
	// (stack=..., compile=..., dispatcher=...; "" for none).
	Keys string `json:"keys,omitempty"`
}

// String is the stack as the "stack" line says it: its name, whose run
// it is and how its layers are costed (the keys are the strategy's).
func (si StackInfo) String() string {
	name := si.Name
	if name == "default" {
		name = "placer's default"
	}
	who := map[string]string{FrameworkMegatron: "Megatron-Core", FrameworkTorchTitan: "torchtitan",
		FrameworkPyTorch: "a plain PyTorch loop", FrameworkTransformers: "Hugging Face transformers' layers"}[si.Framework]
	switch {
	case si.Framework == FrameworkMegatron && si.Compiled:
		return name + ": Megatron-Core, Transformer Engine's fused kernels"
	case si.Framework == FrameworkTorchTitan && si.Compiled:
		// torchtitan compiles each TransformerBlock alone.
		return name + " compiled: torchtitan's blocks under torch.compile costed as fused kernels, its output layer and loss as the ATen ops eager PyTorch issues"
	case si.Compiled:
		return fmt.Sprintf("%s compiled: %s under torch.compile, its layers costed as fused kernels", name, who)
	case si.Name == "default":
		return name + " with compile=off: its layers costed as the ATen ops eager PyTorch issues"
	}
	return fmt.Sprintf("%s: %s, eager: its layers costed as the ATen ops eager PyTorch issues", name, who)
}

// AddKey adds key k (SwitchKey's or ValueKey's) after Keys' own:
// ParseStrategy reads it, String and Plan.String write it, StrategyKeys
// and the exports' refusals name it, as they do a key of Keys; the
// exports it names (Exports) write it from its declaration
// (DeclaredWrites), every other export refuses a plan that sets it. It
// refuses a key whose name or alias is taken, one without a name, a
// docs file or a help line, one naming an export it has no Writes for
// (or Writes for an export it does not name), or one no constructor
// made (no way to set or write it). A plug-in's registration adds its
// keys (planner/mechanisms' Registered).
func AddKey(k Key) error {
	names := append([]string{k.Name}, k.Aliases...)
	switch {
	case k.Name == "" || k.Help == "" || k.Doc == "":
		return fmt.Errorf("key %q: a declared key needs a name, a help line and a docs file", k.Name)
	case len(k.Exports) != len(k.Writes) || slices.ContainsFunc(k.Exports, func(t string) bool { return k.Writes[t] == nil }):
		return fmt.Errorf("key %q: a declared key's exports (%s) are those its declaration writes (Writes)", k.Name, strings.Join(k.Exports, ", "))
	case k.set == nil || k.write == nil:
		return fmt.Errorf("key %q: not made by a key constructor (SwitchKey, ValueKey, CountKey)", k.Name)
	case strings.ToLower(k.Name) != k.Name || strings.ContainsAny(k.Name, ",= "):
		return fmt.Errorf("key %q: want lower case, no comma, '=' or space", k.Name)
	}
	for _, n := range names {
		if keyIndex[n] != nil || n == "bucket" {
			return fmt.Errorf("key %q named twice", n)
		}
	}
	Keys = append(slices.Clip(Keys), k)
	reindexKeys()
	return nil
}

// ReindexKeys rebuilds what reads Keys by name (ParseStrategy's index,
// StrategyKeys) after Keys is set back (a test's cleanup of AddKey).
func ReindexKeys() { reindexKeys() }

// reindexKeys rebuilds keyIndex and StrategyKeys from Keys.
func reindexKeys() {
	keyIndex = indexKeys()
	StrategyKeys = keyNames()
}

// DeclaredWrites is what export target writes for the declared keys s
// sets (Key.Writes), in Keys' order: none where s sets none.
func DeclaredWrites(target string, s Strategy) []string {
	var out []string
	for _, k := range Keys {
		if w := k.Writes[target]; w != nil {
			if v := s.Declared.Value(k.Name); v != "" {
				out = append(out, w(v)...)
			}
		}
	}
	return out
}

// resolveDeclared refuses, in one line, plan pl of model m where a
// declared key it sets does not go with it (Key.Resolved).
func (pl *Plan) resolveDeclared(m *transformer.Spec, written asWritten) error {
	if pl.Declared == "" {
		return nil
	}
	for _, k := range Keys {
		if k.Resolved == nil {
			continue
		}
		if v := pl.Declared.Value(k.Name); v != "" {
			if err := k.Resolved(m, pl, v); err != nil {
				return fmt.Errorf("strategy %s: %s=%s: %w", written, k.Name, v, err)
			}
		}
	}
	return nil
}
