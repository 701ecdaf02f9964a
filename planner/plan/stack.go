package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Software is a plan's software stack (docs/stacks.md): the settings of
// the framework that decide how an MoE layer and a small model's kernels
// run, as written (strategy keys): a named stack (stack=NAME, Stacks) and
// any setting written beside it, which overrides the stack's. Its zero
// value is placer's default stack (DefaultSettings): what the cost model
// ran before these keys, so that a plan that names none is costed as it
// was, to the bit.
type Software struct {
	// Stack is the named stack (Stacks' keys; "": the default).
	Stack string
	// Dispatcher is Megatron-Core's moe_token_dispatcher_type
	// (DispatcherAllToAll, DispatcherAllGather, DispatcherFlex with
	// DeepEP, DispatcherHybridEP: flex with moe_flex_dispatcher_backend
	// "hybridep"; "": the stack's).
	Dispatcher string
	// PermuteFusion, RouterFusion and GroupedGEMM are Megatron-Core's
	// moe_permute_fusion, moe_router_fusion and moe_grouped_gemm (Unset:
	// the stack's).
	PermuteFusion, RouterFusion, GroupedGEMM Toggle
	// Graphs is the CUDA graphs' scope (GraphsOff, GraphsDense,
	// GraphsFull; "": the stack's).
	Graphs string
	// GraphSync is graph-sync=N: the host synchronizes the device
	// before each replay of a graph of N whole steps (0: not written,
	// none). Only with cuda-graphs=full.
	GraphSync int
	// Routing is the MoE routing (RoutingDropless, or RoutingCapacity with
	// Capacity its factor; "": the stack's).
	Routing  string
	Capacity float64
	// RankCapacity is rank-capacity=F: HybridEP's static receive budget
	// a rank (Megatron-Core's moe_expert_rank_capacity_factor; 0: none,
	// the buffers sized by the step's count; rankcapacity.go).
	RankCapacity float64
	// Compile is torch.compile of the layers (compile=on: Transformer
	// Engine-like fused kernels, the default costing; off: the stack's
	// eager ATen ops; Unset: the stack's).
	Compile Toggle
	// Expandable is PyTorch's caching allocator's expandable_segments
	// (PYTORCH_CUDA_ALLOC_CONF; Unset: the stack's, Plan.Expandable).
	Expandable Toggle
	// LossFusion is Megatron-Core's cross_entropy_loss_fusion with
	// cross_entropy_fusion_impl "te": Transformer Engine's fused
	// cross-entropy (Unset: the stack's).
	LossFusion Toggle
	// CPRotate is the rotater of torch's context_parallel
	// (CPRingAllGather or CPRingAllToAll: torchtitan's
	// --experimental.context_parallel_rotate_method; "": the stack's).
	// Only a stack that runs torch's ring takes it.
	CPRotate string
	// CPComm is Megatron-Core's --cp-comm-type, the exchange of
	// Transformer Engine's context parallelism (CPCommP2P, its ring, or
	// CPCommAllGather: CPRingKVAllGather, CPCommA2A: CPRingQKVOA2A; "":
	// the stack's). Only a stack
	// that runs TE's ring takes it.
	CPComm string
}

// Toggle is a setting written on, off or left to the stack.
type Toggle uint8

// The toggles.
const (
	Unset Toggle = iota
	On
	Off
)

// The dispatchers, the graphs' scopes and the routings (Software).
const (
	DispatcherAllToAll  = "alltoall"
	DispatcherAllGather = "allgather"
	DispatcherFlex      = "flex"
	DispatcherHybridEP  = "hybridep"

	GraphsOff   = "off"
	GraphsDense = "dense"
	GraphsFull  = "full"

	RoutingDropless = "dropless"
	RoutingCapacity = "capacity"
)

// Settings are a plan's software settings in effect (Software resolved
// against its stack): what the cost model reads. Comparable: it keys the
// phase cache.
type Settings struct {
	// Dispatcher is the token dispatcher (alltoall, allgather or flex:
	// DeepEP's fused kernels).
	Dispatcher string
	// HybridEP: the flex dispatcher's backend is HybridEP
	// (moe_flex_dispatcher_backend "hybridep", dispatcher=hybridep), not
	// DeepEP. Its kernels are costed as DeepEP's (placer has no HybridEP
	// measurement); its fixed buffers (memory.HybridEPBuffers) and its
	// padding of each expert's rows in the dispatch under FP8 are its own.
	HybridEP bool
	// UnfusedPermute, UnfusedRouter and ExpertLoop are
	// moe_permute_fusion, moe_router_fusion and moe_grouped_gemm off:
	// the permutation as Megatron-Core's sequence of small PyTorch
	// kernels, the router's top-k likewise, one GEMM pair per local
	// expert (SequentialMLP) in place of the grouped GEMMs.
	UnfusedPermute, UnfusedRouter, ExpertLoop bool
	// UnfusedMultihot is DeepEP's received top-k indices and
	// probabilities made into the local experts' multihot map by PyTorch
	// ops (_DeepepManager._indices_to_multihot: boolean-mask indexing and
	// a repeat_interleave by a device tensor, each a device-to-host
	// synchronization) rather than the fused kernel, which Megatron-Core
	// runs only with --enable-experimental and moe_permute_fusion
	// (megatron/core/transformer/moe/token_dispatcher.py
	// get_permuted_hidden_states_by_experts, the same gate at 1e057005
	// and core_v0.16.0). The flex dispatcher's DeepEP backend only.
	UnfusedMultihot bool
	// Graphs is the CUDA graphs' scope: off, dense (each layer's
	// attention and a dense layer's MLP replayed from a graph; a dropless
	// MoE layer eager) or full (the whole layer).
	Graphs string
	// GraphSync is the steps of one whole-step graph replay that the
	// host waits for the device before (torch.cuda.synchronize(), then
	// graph.replay(): NVIDIA's MLPerf BERT run_pretraining.py under
	// --cuda_graph_mode full_iteration, its --max_iterations_per_graph
	// steps a graph); 0: no such wait (mechanisms.GraphStepSync).
	GraphSync int
	// Capacity is the capacity factor (0: dropless): every expert
	// receives Capacity x its even share of the tokens, padded or
	// dropped to it (moe_expert_capacity_factor with
	// moe_pad_expert_input_to_capacity).
	Capacity float64
	// RankCapacity is HybridEP's static receive budget factor (0: none;
	// Plan.RankBudget): no host synchronization on the dispatch, the
	// buffers at the budget's rows, a dropless layer a graph can hold.
	RankCapacity float64
	// Eager is the layers costed as eager PyTorch issues them: their
	// ATen ops (eager.LayerOps: unfused norms, rotary embedding, SwiGLU,
	// residual adds, SDPA) each at its class's rate and launched apart,
	// not Transformer Engine's fused kernels (compile=off);
	// FP32Weights their precision, autocast BF16 over FP32 weights (its
	// casts, an FP32 residual stream), else BF16 weights.
	Eager, FP32Weights bool
	// Layers names the registered layer costs (codebases.Registered) of the
	// stack's eager layers, whose code the layers run where Eager
	// (LayersLlamaPy where it is empty: a plain PyTorch loop's);
	// each code base declares the settings that run it (When).
	Layers string
	// CPRing is the context-parallel ring the stack runs (CPRingP2P,
	// CPRingAllGather; "": CPRingP2P, Transformer Engine's).
	CPRing string
	// RepeatKV: the model's code repeats its key-value heads to every
	// query head before the attention kernel (torchtitan 9dec370's
	// Attention: repeat_kv, then SDPA without enable_gqa), so that a
	// context-parallel ring exchanges the query heads' count of K and V.
	RepeatKV bool
	// FusedLoss is the cross-entropy as Transformer Engine's fused
	// kernels compute it (loss-fusion=on; TransformerEngine v2.12
	// transformer_engine/pytorch/cross_entropy.py parallel_cross_entropy,
	// triton/cross_entropy.py): an online softmax over the BF16 logits,
	// then a pass that writes the loss and the logits' gradient in place,
	// the backward a scaling in place; no FP32 copy of the logits.
	FusedLoss bool
	// LAMB is the optimizer LAMB, not Adam (mechanisms/lamb.go): its
	// second pass over the parameters and their norms.
	LAMB bool
}

// DefaultSettings are placer's default stack, the model as it was before
// the software keys: Megatron-Core's all-to-all dispatcher, fused
// permutation and router, grouped expert GEMMs, no CUDA graphs, dropless.
var DefaultSettings = Settings{Dispatcher: DispatcherAllToAll, Graphs: GraphsOff}

// NamedStack is one framework release as it runs by default or in its
// published recipes: its settings and where each is written.
type NamedStack struct {
	Name     string
	Settings Settings
	// Source says where the settings are written (repository, file,
	// release).
	Source string
}

// Stacks are the named stacks (stack=NAME). Each setting is read from the
// release's code or recipes (docs/stacks.md has the table):
//   - megatron-core-0.16: NVIDIA/Megatron-LM core_v0.16.0,
//     megatron/core/transformer/transformer_config.py, the defaults a run
//     gets when it passes no flag: moe_token_dispatcher_type "allgather",
//     moe_permute_fusion False, moe_router_fusion False, moe_grouped_gemm
//     False, cuda_graph_impl "none", moe_expert_capacity_factor None
//     (dropless);
//   - megatron-bridge-25.09 to megatron-bridge-26.06: Megatron-Bridge's
//     DGX-H100 performance recipes of each NeMo container, matched to the
//     Megatron-Bridge tag the container ships (docs/versions1.json at
//     067f987d: "0.1.0 · 25.09", "0.2.0 · 25.11", "0.3.0 · 26.02", "0.3.1
//     · 26.02.01", "0.4.0 · 26.04", "0.4.2 · 26.04.01", "0.5.0 · 26.06";
//     docs/releases/software-versions.md: 25.09 ships 0.1.0rc3, the tag
//     read for it). Each sets what every MoE recipe of its release sets
//     on H100 (the Qwen3 and GPT-OSS performance scripts): the all-to-all
//     dispatcher (Qwen3MoEModelProvider and GPTOSSProvider:
//     moe_token_dispatcher_type "alltoall"; from v0.3.1 the recipes set
//     it, from v0.4.0 set_workload_base_configs writes "alltoall" where a
//     workload names no flex backend), fused permutation and grouped
//     GEMMs (the providers and, from v0.3.1, the recipes:
//     moe_permute_fusion True, moe_grouped_gemm True), the fused router
//     (the performance scripts' common settings: moe_router_fusion True,
//     over the v0.3.1+ recipes' False), no CUDA graphs (no cuda_graph_impl
//     in the H100 FP8-CS and GPT-OSS BF16 workloads; 25.09's YAML
//     "cuda_graphs: false" for h100), dropless routing with force-balanced
//     routers (moe_router_force_load_balancing; use_tokendrop off by
//     default). Where one model's recipe differs the row says so, not
//     the stack: 25.09's Qwen3 scripts drop tokens (v0.1.0rc3
//     scripts/performance/run_script.py: apply_moe_token_drop, whose
//     defaults are moe_expert_capacity_factor 1.0 with
//     moe_pad_expert_input_to_capacity: routing=capacity:1); Qwen3-30B-A3B
//     runs DeepEP in 26.02 (v0.3.0 qwen3_workload_base_configs.py
//     QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1:
//     moe_flex_dispatcher_backend "deepep", applied by the recipe's
//     apply_flex_dispatcher_backend) and HybridEP from 26.02.01 on
//     (v0.3.1 to v0.5.0: moe_flex_dispatcher_backend "hybridep",
//     moe_token_dispatcher_type "flex" in qwen3_30b_a3b_pretrain_config_h100):
//     dispatcher=flex for DeepEP, dispatcher=hybridep for HybridEP (its
//     kernels costed as DeepEP's). The releases'
//     settings are the same: a stack each makes every row's reading
//     explicit (TestBridgeStacks). megatron-bridge-25.11 is what placer
//     costed before (v0.2.1 sets the same on H100: git diff v0.2.0 v0.2.1);
//   - torchtitan-0.2: pytorch/torchtitan v0.2.0, torchtitan/models/moe/moe.py
//     and distributed/expert_parallel.py: eager PyTorch, no CUDA graphs;
//     the router's softmax or sigmoid, topk and histc as separate kernels;
//     the tokens reordered by index kernels (moe/utils.py _permute) and
//     exchanged by all_to_all_single after a .tolist() of the splits;
//     torch._grouped_mm for the experts (use_grouped_mm True); dropless.
//     The unfused permutation and router are costed as Megatron-Core's
//     unfused sequences (unfusedPermute, unfusedRouter), torchtitan's own
//     kernels not counted one by one;
//   - model-zoo-moe-dev: yanring/Megatron-MoE-ModelZoo's Qwen3 runs
//     (best_practice/Qwen3/readme.md, Megatron-Core moe_dev and main of
//     May 2025) with the configuration of the commits that published
//     them (b06a6d8 model_configs/benchmarking/Qwen3-235B-A22B.yaml,
//     8017e11 examples/qwen3/readme.md and 31c5686 run_235b.sh, 2025-05):
//     --moe-permute-fusion, --moe-grouped-gemm, no CUDA graph flag;
//     neither --moe-router-fusion nor --enable-experimental, which
//     274316a added on 2025-08-20 (Megatron-LM 1e057005's arguments.py
//     has no router-fusion flag): the unfused router and DeepEP's unfused
//     multihot conversion (UnfusedMultihot). DeepEP's dispatcher (the
//     table's "DeepEP" rows; its "A2A" row is dispatcher=alltoall),
//     dropless.
var Stacks = []NamedStack{
	{Name: "megatron-core-0.16", Settings: Settings{Dispatcher: DispatcherAllGather, UnfusedPermute: true, UnfusedRouter: true, ExpertLoop: true, Graphs: GraphsOff},
		Source: "NVIDIA/Megatron-LM core_v0.16.0 megatron/core/transformer/transformer_config.py (TransformerConfig defaults)"},
	{Name: "megatron-bridge-25.09", Settings: bridgeH100,
		Source: bridgeStackSource("v0.1.0rc3", "scripts/performance/configs/qwen3/*.yaml (moe_router_fusion: true; h100 cuda_graphs: false), run_script.py, src/megatron/bridge/models/qwen/qwen_provider.py")},
	{Name: "megatron-bridge-25.11", Settings: bridgeH100,
		Source: bridgeStackSource("v0.2.0", "src/megatron/bridge/models/qwen/qwen_provider.py, gpt_oss/gpt_oss_provider.py; scripts/performance/configs/{qwen3,gpt_oss}/*_llm_pretrain.py, workload_base_configs.py")},
	{Name: "megatron-bridge-26.02", Settings: bridgeH100,
		Source: bridgeStackSource("v0.3.0", "src/megatron/bridge/models/qwen/qwen_provider.py, gpt_oss/gpt_oss_provider.py; scripts/performance/configs/{qwen,gpt_oss}/*_llm_pretrain.py, *_workload_base_configs.py")},
	{Name: "megatron-bridge-26.02.01", Settings: bridgeH100,
		Source: bridgeStackSource("v0.3.1", "src/megatron/bridge/recipes/{qwen/qwen3_moe.py,gpt_oss/gpt_oss.py}; scripts/performance/configs/{qwen,gpt_oss}/*_llm_pretrain.py, *_workload_base_configs.py")},
	{Name: "megatron-bridge-26.04", Settings: bridgeH100,
		Source: bridgeStackSource("v0.4.0", "src/megatron/bridge/recipes/{qwen/qwen3_moe.py,gpt_oss/gpt_oss.py}; scripts/performance/utils/overrides.py set_workload_base_configs; configs/{qwen,gpt_oss}/*")},
	{Name: "megatron-bridge-26.04.01", Settings: bridgeH100,
		Source: bridgeStackSource("v0.4.2", "src/megatron/bridge/recipes/{qwen/qwen3_moe.py,gpt_oss/gpt_oss.py}; scripts/performance/utils/overrides.py set_workload_base_configs; configs/{qwen,gpt_oss}/*")},
	{Name: "megatron-bridge-26.06", Settings: bridgeH100,
		Source: bridgeStackSource("v0.5.0", "src/megatron/bridge/recipes/{qwen/qwen3_moe.py,gpt_oss/gpt_oss.py}; scripts/performance/utils/overrides.py set_workload_base_configs; configs/{qwen,gpt_oss}/*")},
	{Name: "torchtitan-0.2", Settings: Settings{Dispatcher: DispatcherAllToAll, UnfusedPermute: true, UnfusedRouter: true, Graphs: GraphsOff, Eager: true, Layers: LayersTitan,
		CPRing: CPRingAllGather, RepeatKV: true},
		Source: "pytorch/torchtitan v0.2.0 torchtitan/models/moe/moe.py, torchtitan/distributed/expert_parallel.py; dense layers eager (compile=false, its default; FSDP2 MixedPrecisionPolicy param_dtype bfloat16: BF16 weights); context parallelism torch's context_parallel with the all-gather rotater (9dec370 config_manager.py --experimental.context_parallel_rotate_method default \"allgather\"), K and V repeated to the query heads before SDPA (models/llama/model.py repeat_kv)"},
	{Name: "torch-eager", Settings: Settings{Dispatcher: DispatcherAllToAll, Graphs: GraphsOff, Eager: true, FP32Weights: true, Layers: LayersLlamaPy},
		Source: "plain PyTorch eager, torch.autocast(\"cuda\", torch.bfloat16) over FP32 weights: placer_torch.profile.layers' Block as placer_torch.exporter records it (TestEagerOpsMatchExporter)"},
	{Name: "torch-eager-bf16", Settings: Settings{Dispatcher: DispatcherAllToAll, Graphs: GraphsOff, Eager: true, Layers: LayersLlamaPy},
		Source: "plain PyTorch eager, BF16 weights (model.to(torch.bfloat16)): placer_torch.profile.layers' Block as placer_torch.exporter records it (TestEagerOpsMatchExporter)"},
	{Name: "hf-eager", Settings: Settings{Dispatcher: DispatcherAllToAll, Graphs: GraphsOff, Eager: true, FP32Weights: true, Layers: LayersHF},
		Source: "Hugging Face transformers' LlamaDecoderLayer (5.24, attn_implementation \"sdpa\") under torch.autocast(\"cuda\", torch.bfloat16) over FP32 weights, as placer_torch.exporter records it (TestEagerOpsMatchExporter)"},
	{Name: "hf-eager-bf16", Settings: Settings{Dispatcher: DispatcherAllToAll, Graphs: GraphsOff, Eager: true, Layers: LayersHF},
		Source: "Hugging Face transformers' LlamaDecoderLayer (5.24, attn_implementation \"sdpa\") with BF16 weights, as placer_torch.exporter records it (TestEagerOpsMatchExporter)"},
	{Name: "model-zoo-moe-dev", Settings: Settings{Dispatcher: DispatcherFlex, Graphs: GraphsOff, UnfusedRouter: true, UnfusedMultihot: true},
		Source: "yanring/Megatron-MoE-ModelZoo best_practice/Qwen3/readme.md (8017e11), model_configs/benchmarking/Qwen3-235B-A22B.yaml (b06a6d8: no --moe-router-fusion, no --enable-experimental)"},
}

// bridgeH100 is what every Megatron-Bridge release of the archive sets
// for its MoE recipes on DGX-H100 (Stacks' comment): the all-to-all
// dispatcher, fused permutation and router, grouped GEMMs, no CUDA
// graphs, dropless.
var bridgeH100 = Settings{Dispatcher: DispatcherAllToAll, Graphs: GraphsOff}

// bridgeStackSource is a Megatron-Bridge stack's source: the tag its
// container ships and the files read there.
func bridgeStackSource(tag, files string) string {
	return "NVIDIA-NeMo/Megatron-Bridge " + tag + " (docs/versions1.json at 067f987d) " + files
}

// stackNames lists Stacks' names for errors.
func stackNames() string {
	names := make([]string, len(Stacks))
	for i, s := range Stacks {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// LookupStack is the named stack name, or a one-line error naming it and
// the stacks there are.
func LookupStack(name string) (NamedStack, error) {
	i := slices.IndexFunc(Stacks, func(s NamedStack) bool { return s.Name == strings.ToLower(name) })
	if i < 0 {
		return NamedStack{}, fmt.Errorf("stack %q is not a named stack (%s)", name, stackNames())
	}
	return Stacks[i], nil
}

// AddStack adds named stack ns to Stacks: a stack whose row is written
// beside its layer costs (planner registers it with them). It
// refuses an empty name, one not in lower case (stack=NAME is looked up
// so) and one taken.
func AddStack(ns NamedStack) error {
	switch {
	case ns.Name == "" || ns.Name != strings.ToLower(ns.Name):
		return fmt.Errorf("stack %q: a stack's name is non-empty and lower case", ns.Name)
	case slices.ContainsFunc(Stacks, func(s NamedStack) bool { return s.Name == ns.Name }):
		return fmt.Errorf("stack %q named twice", ns.Name)
	}
	Stacks = append(Stacks, ns)
	return nil
}

// Settings are sw's settings in effect: its stack's (DefaultSettings
// without one), each written setting over it. An unknown stack is
// Check's error; here it reads as the default.
func (sw Software) Settings() Settings {
	st := DefaultSettings
	if sw.Stack != "" {
		if ns, err := LookupStack(sw.Stack); err == nil {
			st = ns.Settings
		}
	}
	if sw.Dispatcher != "" {
		st.Dispatcher, st.HybridEP = sw.Dispatcher, false
	}
	if sw.Dispatcher == DispatcherHybridEP {
		st.Dispatcher, st.HybridEP = DispatcherFlex, true
	}
	set := func(t Toggle, off *bool) {
		if t != Unset {
			*off = t == Off
		}
	}
	set(sw.PermuteFusion, &st.UnfusedPermute)
	set(sw.RouterFusion, &st.UnfusedRouter)
	set(sw.GroupedGEMM, &st.ExpertLoop)
	if sw.Graphs != "" {
		st.Graphs = sw.Graphs
	}
	if sw.GraphSync > 0 {
		st.GraphSync = sw.GraphSync
	}
	switch sw.Routing {
	case RoutingDropless:
		st.Capacity = 0
	case RoutingCapacity:
		st.Capacity = sw.Capacity
	}
	if sw.RankCapacity > 0 {
		st.RankCapacity = sw.RankCapacity
	}
	set(sw.Compile, &st.Eager)
	if sw.CPRotate != "" {
		st.CPRing = sw.CPRotate
	}
	switch sw.CPComm {
	case CPCommP2P:
		st.CPRing = CPRingP2P
	case CPCommAllGather:
		st.CPRing = CPRingKVAllGather
	case CPCommA2A:
		st.CPRing = CPRingQKVOA2A
	}
	if sw.LossFusion != Unset {
		st.FusedLoss = sw.LossFusion == On
	}
	return st
}

// moeKeys reports whether sw writes a setting of an MoE layer (the
// dispatcher, the permutation, the router, the expert GEMMs, the
// routing): refused on a model without experts, where a named stack's
// are ignored.
func (sw Software) moeKeys() bool {
	return sw.Dispatcher != "" || sw.PermuteFusion != Unset || sw.RouterFusion != Unset || sw.GroupedGEMM != Unset || sw.Routing != "" || sw.RankCapacity != 0
}

// Short is st in a plan's short form where it differs from
// DefaultSettings (report's tables): "ag", "flex" or "hybridep" for the dispatcher,
// "pu" unfused permutation, "ru" unfused router, "loop" one GEMM pair
// per expert, "cg" or "cgfull" CUDA graphs, "capF" capacity routing,
// "lf" the fused cross-entropy; ""
// for the default. moe says whether the model has experts (the MoE
// settings are shown only then).
func (st Settings) Short(moe bool) string {
	var parts []string
	if moe {
		switch st.Dispatcher {
		case DispatcherAllGather:
			parts = append(parts, "ag")
		case DispatcherFlex:
			parts = append(parts, map[bool]string{false: "flex", true: "hybridep"}[st.HybridEP])
		}
		if st.UnfusedPermute {
			parts = append(parts, "pu")
		}
		if st.UnfusedRouter {
			parts = append(parts, "ru")
		}
		if st.ExpertLoop {
			parts = append(parts, "loop")
		}
		if st.Capacity > 0 {
			parts = append(parts, "cap"+strconv.FormatFloat(st.Capacity, 'g', -1, 64))
		}
	}
	if st.Eager {
		parts = append(parts, "eager")
		if st.FP32Weights {
			parts = append(parts, "amp")
		}
	}
	switch st.Graphs {
	case GraphsDense:
		parts = append(parts, "cg")
	case GraphsFull:
		parts = append(parts, "cgfull")
	}
	if st.FusedLoss {
		parts = append(parts, "lf")
	}
	return strings.Join(parts, " ")
}

// The frameworks a stack is the run of (Software.Framework): whose code
// issues the kernels placer costs.
const (
	FrameworkMegatron     = "megatron"     // Megatron-LM / Megatron-Core (placer's default stack, megatron-core-*, megatron-bridge-*, model-zoo-moe-dev)
	FrameworkTorchTitan   = "torchtitan"   // torchtitan-*
	FrameworkPyTorch      = "pytorch"      // a plain PyTorch loop: torch-eager, torch-eager-bf16
	FrameworkTransformers = "transformers" // Hugging Face transformers' layers: hf-eager, hf-eager-bf16
)

// Framework is the framework whose run sw's stack is: FrameworkMegatron
// for placer's default stack (Megatron-Core with Transformer Engine's
// fused kernels) and the Megatron stacks, FrameworkTorchTitan for
// torchtitan's, FrameworkPyTorch and FrameworkTransformers for the eager
// stacks of a plain PyTorch loop and of transformers' layers.
func (sw Software) Framework() string {
	switch s := sw.Stack; {
	case strings.HasPrefix(s, "torchtitan"):
		return FrameworkTorchTitan
	case strings.HasPrefix(s, "torch-eager"):
		return FrameworkPyTorch
	case strings.HasPrefix(s, "hf-eager"):
		return FrameworkTransformers
	}
	return FrameworkMegatron
}

// The context-parallel rings a stack runs (Settings.CPRing).
const (
	// CPRingP2P is Transformer Engine's ring of point-to-point sends
	// (Megatron-Core's default --cp-comm-type p2p: TE
	// pytorch/attention/dot_product_attention/context_parallel.py,
	// AttnFuncWithCPAndKVP2P): at each step every rank sends the K and
	// V it holds to the next rank while it attends to them.
	CPRingP2P = "p2p"
	// CPRingAllGather is torch's context_parallel with its all-gather
	// rotater (torch/distributed/tensor/experimental/_attention.py:
	// _templated_ring_attention, _AllGatherRotater; torchtitan 9dec370's
	// default context_parallel_rotate_method "allgather"): every rank's
	// K and V all-gathered once, issued before the first step and
	// waited before the second; each step's output merged into an FP32
	// running output (_SDPAMerger, convert_to_f32); backward, the K and
	// V gathered again and the FP32 gradients of K and V passed on by an
	// all-to-all after each step (_templated_ring_attention_backward's
	// dkv_rotater), accumulated in FP32.
	CPRingAllGather = "allgather"
	// CPRingAllToAll is torch's context_parallel with its all-to-all
	// rotater (the same file: _AllToAllRotater; torchtitan's
	// --experimental.context_parallel_rotate_method "alltoall"): at each
	// step but the last every rank's K and V go to the next rank by
	// permute_tensor (an all_to_all_single with one peer), issued before
	// the step's call and waited before the next; the rest as
	// CPRingAllGather (its merges, the FP32 gradients of K and V passed on
	// by an all-to-all after each step).
	CPRingAllToAll = "alltoall"
	// CPRingKVAllGather is Transformer Engine's all-gather context
	// parallelism (Megatron-Core's --cp-comm-type all_gather: TE
	// AttnFuncWithCPAndKVAllGather), Llama 3's (arXiv 2407.21783
	// section 3.3.2): every rank's K and V all-gathered, exposed, then
	// one call for each of the rank's two query chunks; backward K and V
	// gathered again and dK, dV reduce-scattered, exposed.
	CPRingKVAllGather = "kv-allgather"
	// CPRingQKVOA2A is Transformer Engine's all-to-all context
	// parallelism (Megatron-Core's --cp-comm-type a2a: TE
	// AttnFuncWithCPAndQKVOA2A, "Like Ulysses, applying A2A to QKVO",
	// arXiv 2309.14509): Q, K and V all-to-all'd so that each rank holds
	// the whole sequence for heads/cp of its heads, one call over the
	// whole sequence, the output all-to-all'd back; backward the
	// output's gradient in, dQ, dK, dV out (mechanisms.Ring's qkvoA2A).
	CPRingQKVOA2A = "qkvo-a2a"
)

// The values of cp-comm-type (Software.CPComm): Megatron-Core's
// --cp-comm-type choices that placer costs (megatron/training/arguments.py;
// the hierarchical a2a+p2p is not costed).
const (
	CPCommP2P       = "p2p"
	CPCommAllGather = "all_gather"
	CPCommA2A       = "a2a"
)

// The registered layer costs' names.
const (
	// LayersFused is Megatron-Core's layers with Transformer Engine's
	// fused kernels: placer's default stack, the Megatron stacks, and
	// any stack compiled (compile=on).
	LayersFused = "fused"
	// LayersLlamaPy is eager PyTorch running placer_torch/profile/layers.py's
	// Block: the layers of a plain PyTorch loop (torch-eager) and of
	// any other stack with compile=off that names no eager layer.
	LayersLlamaPy = "llama.py"
	// LayersHF is eager PyTorch running transformers' Llama and Qwen3
	// MoE layers (hf-eager).
	LayersHF = "transformers"
	// LayersTitan is eager PyTorch running torchtitan's layers
	// (torchtitan-0.2).
	LayersTitan = "torchtitan"
)
