package plans

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// BridgeRelease is the Megatron-Bridge release whose ConfigContainer the
// overrides are written for and checked against (tools/dev/frameworks/
// bridge_check.py: megatron-bridge 0.5.0 with megatron-core 0.18.0).
const BridgeRelease = "0.5.0"

// bridgeMixedPrecision are Megatron-Bridge 0.5.0's mixed-precision recipes
// by placer's fp8= (src/megatron/bridge/training/mixed_precision.py, each
// registered by its function's name, which ConfigContainer.mixed_precision
// takes as a string): "" is BF16 (bf16_mixed); tensorwise current
// scaling, delayed scaling, MXFP8, 1 x 128 and 128 x 128 blockwise
// (Bridge's "subchannel") and NVFP4. torchao's rowwise recipes have none.
var bridgeMixedPrecision = map[string]string{
	"":                "bf16_mixed",
	plan.FP8Current:   "bf16_with_fp8_current_scaling_mixed",
	plan.FP8Delayed:   "bf16_with_fp8_delayed_scaling_mixed",
	plan.FP8MX:        "bf16_with_mxfp8_mixed",
	plan.FP8Blockwise: "bf16_with_fp8_subchannel_scaling_mixed",
	plan.FP4NV:        "bf16_with_nvfp4_mixed",
}

// BridgeOverrides are Megatron-Bridge 0.5.0's ConfigContainer overrides of
// plan s of model m on gpus GPUs, as its override machinery reads them
// (src/megatron/bridge/training/utils/omegaconf_utils.py,
// process_config_with_overrides: Hydra's override grammar applied to the
// container in OmegaConf's struct mode, so that a key the container does
// not have is refused; scripts/training/run_recipe.py passes its command
// line's extra words to it). Every setting placer costs is written, on
// or off, whatever the recipe set: the model's shape (model.num_layers,
// hidden_size, ffn_hidden_size, num_attention_heads, num_query_groups,
// kv_channels, the experts' counts), the sequence (model.seq_length and
// the dataset's), train.micro_batch_size and global_batch_size, the
// parallel degrees (model.tensor/pipeline/virtual_pipeline/context/
// expert/expert_tensor_*_size, sequence_parallel, the uneven stages and
// the embedding and loss counted as layers), recomputation
// (model.recompute_granularity, recompute_method, recompute_num_layers,
// recompute_modules), the distributed optimizer and its overlaps (ddp.*,
// optimizer.use_distributed_optimizer), Megatron-FSDP, the
// mixed-precision recipe by name (bridgeMixedPrecision), tensor-parallel
// overlap, the experts' dispatcher, fusions, grouped GEMMs, capacity and
// all-to-all overlap, CUDA graphs, the fused loss, and fine-tuning:
// LoRA as +peft.dim, +peft.alpha and +peft.target_modules (Bridge's
// override conversion leaves the recipe's LoRA object out of the
// OmegaConf tree, it is callable, so its fields are appended with "+"
// and applied to that object), packing as
// dataset.packed_sequence_specs.packed_sequence_size (a fine-tuning
// recipe's FinetuningDatasetConfig; null where the plan packs nothing).
// What Bridge has no key for is refused in one line.
func BridgeOverrides(m transformer.Spec, s plan.Strategy, gpus int) ([]string, error) {
	const who = "megatron-bridge overrides"
	T, err := oneTensor(s, who, "Megatron-Core has one tensor_model_parallel_size for every stage")
	if err != nil {
		return nil, err
	}
	P, D, C := s.PipelineDegree(), s.ReplicaCount(), s.ContextDegree()
	switch {
	case T*C*P*D != gpus:
		return nil, fmt.Errorf("%s: tp=%d x cp=%d x pp=%d x dp=%d is not the %d GPUs", who, T, C, P, D, gpus)
	case s.MicroBatchSize < 1 || D*s.MicroBatchSize*s.MicroBatchCount() != m.Batch:
		return nil, fmt.Errorf("%s: dp=%d x mbs=%d x mb=%d is not the batch of %d", who, D, s.MicroBatchSize, s.MicroBatchCount(), m.Batch)
	case P > 1 && s.Schedule == decision.GPipe && s.MicroBatchCount() > 1:
		return nil, fmt.Errorf("%s: schedule=gpipe: Megatron-Core runs 1F1B (interleaved with virtual stages)", who)
	case s.GradBF16:
		// MixedPrecisionConfig.setup copies the recipe's
		// grad_reduce_in_fp32 onto the DDP config, and every bf16_*
		// recipe of 0.5.0 is bf16_mixed's True: a ddp override is undone.
		return nil, fmt.Errorf("%s: grads=bf16: Megatron-Bridge 0.5.0's mixed-precision recipes reduce gradients in FP32 (MixedPrecisionConfig.setup sets ddp.grad_reduce_in_fp32 from the recipe)", who)
	}
	mp, ok := bridgeMixedPrecision[s.FP8]
	if !ok {
		return nil, fmt.Errorf("%s: mixed_precision: fp8=%s is torchao's recipe; Megatron-Bridge 0.5.0's are %s", who, s.FP8, strings.Join(bridgeRecipeNames(), ", "))
	}
	if _, err := s.StageLayers(m.Layers); err != nil {
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	var o []string
	set := func(k string, v any) { o = append(o, k+"="+bridgeValue(v)) }
	bridgeModel(m, set)
	set("model.seq_length", m.Seq)
	if BridgeRecipe(s) == "pretrain" {
		// GPTDatasetConfig's field is Megatron-Core's sequence_length
		// (its seq_length is a property, which the override tree has
		// not); FinetuningDatasetConfig's is seq_length.
		set("dataset.sequence_length", m.Seq)
	} else {
		set("dataset.seq_length", m.Seq)
	}
	set("train.micro_batch_size", s.MicroBatchSize)
	set("train.global_batch_size", m.Batch)
	if err := bridgeParallel(m, s, T, set); err != nil {
		return nil, err
	}
	bridgeRecompute(s, set)
	bridgeData(s, D, set)
	set("mixed_precision", mp)
	if m.MoE() {
		bridgeExperts(m, s, T, set)
	}
	var graph []string
	if err := cudaGraphs(m, s, func(xs ...string) { graph = append(graph, xs...) }); err != nil {
		return nil, fmt.Errorf("%s: %s", who, strings.TrimPrefix(err.Error(), "megatron arguments: "))
	}
	if len(graph) > 0 {
		// --cuda-graph-impl transformer_engine --cuda-graph-scope SCOPE...: TransformerConfig's fields.
		set("model.cuda_graph_impl", "transformer_engine")
		set("model.cuda_graph_scope", graph[3:])
	} else {
		set("model.cuda_graph_impl", "none")
	}
	fused := s.Software.Settings().FusedLoss
	set("model.cross_entropy_loss_fusion", fused)
	if fused {
		set("model.cross_entropy_fusion_impl", "te")
	}
	bridgeFineTune(s, m.Seq, m.MoE(), set)
	if err := bridgeRecipe(m, s, set); err != nil {
		return nil, err
	}
	if err := unwritten("megatron-bridge", s, bridgeKeys); err != nil {
		return nil, err
	}
	return o, nil
}

// bridgeRecipeNames are bridgeMixedPrecision's names, in a fixed order.
func bridgeRecipeNames() []string {
	var out []string
	for _, k := range []string{"", plan.FP8Current, plan.FP8Delayed, plan.FP8MX, plan.FP8Blockwise, plan.FP4NV} {
		out = append(out, bridgeMixedPrecision[k])
	}
	return out
}

// bridgeValue writes v in Hydra's override grammar: ints as digits,
// booleans as true/false, nil as null, a list as [a,b], strings as they
// are (every string written here is a bare identifier).
func bridgeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case []string:
		return "[" + strings.Join(x, ",") + "]"
	}
	return fmt.Sprint(v)
}

// bridgeModel writes the shape placer costed as the model provider's
// fields (Megatron-Core's TransformerConfig, which GPTModelProvider
// extends), the vocabulary (GPTModelProvider.vocab_size, unpadded:
// should_pad_vocab off, as placer costs it) and the output layer tied or
// not, and the config.json's settings the Megatron-LM export writes
// (bridgeSettings); the recipe of the model's family supplies the rest
// (latent attention, the router's settings).
func bridgeModel(m transformer.Spec, set func(string, any)) {
	set("model.num_layers", m.Layers)
	set("model.hidden_size", m.Hidden)
	set("model.ffn_hidden_size", m.FFN)
	set("model.num_attention_heads", m.Heads)
	if !m.MLA() {
		set("model.num_query_groups", m.KVHeads)
		set("model.kv_channels", m.HeadDim())
	}
	if m.MoE() {
		set("model.num_moe_experts", m.Experts)
		set("model.moe_router_topk", m.TopK)
		set("model.moe_ffn_hidden_size", m.ExpertFFN)
		if m.SharedExperts > 0 {
			set("model.moe_shared_expert_intermediate_size", m.SharedExperts*m.ExpertFFN)
		}
	}
	set("model.vocab_size", m.Vocab)
	set("model.should_pad_vocab", false)
	set("model.share_embeddings_and_output_weights", m.Tied)
	bridgeSettings(m, set)
	if m.Hybrid() && m.MoE() {
		bridgeHybridExperts(m, set) // bridge_hybrid.go
	}
}

// bridgeSettings writes what megatronModel writes as Megatron-LM's
// arguments of model m's config.json settings (none for a model by its
// shape alone), as GPTModelProvider's and TransformerConfig's fields:
// the rotary base (rotary_base, an int as --rotary-base), the norms'
// epsilon (layernorm_epsilon), the dropouts (attention_dropout,
// hidden_dropout 0), query and key norms (qk_layernorm), query, key and
// value biases (add_qkv_bias), rotary positions over part of each head
// (rotary_percent) and Llama 3's rope scaling (rope_scaling,
// rope_scaling_factor). The router's settings are the family recipe's.
func bridgeSettings(m transformer.Spec, set func(string, any)) {
	c := m.Config
	if c.ModelType == "" {
		return
	}
	if c.RopeTheta > 0 {
		set("model.rotary_base", int(math.Round(c.RopeTheta)))
	}
	if c.NormEps > 0 {
		set("model.layernorm_epsilon", c.NormEps)
	}
	set("model.attention_dropout", c.AttentionDropout)
	set("model.hidden_dropout", 0.0)
	set("model.qk_layernorm", c.QKNorm)
	set("model.add_qkv_bias", c.QKVBias)
	if r := c.RotaryPercent; r > 0 && r != 1 {
		set("model.rotary_percent", r)
	}
	if c.RopeScaling == "llama3" {
		set("model.rope_scaling", true)
		set("model.rope_scaling_factor", c.RopeFactor)
	}
}

// bridgeParallel writes the parallel degrees and the pipeline's split;
// an end stage of first= or last= layers is split into V equal chunks by
// Megatron-Core, as for Megatron-LM (megatronArgs).
func bridgeParallel(m transformer.Spec, s plan.Strategy, T int, set func(string, any)) error {
	V := s.VirtualStages()
	set("model.tensor_model_parallel_size", T)
	set("model.pipeline_model_parallel_size", s.PipelineDegree())
	if V > 1 {
		set("model.virtual_pipeline_model_parallel_size", V)
	} else {
		set("model.virtual_pipeline_model_parallel_size", nil)
	}
	set("model.context_parallel_size", s.ContextDegree())
	if s.ContextDegree() > 1 {
		// TransformerConfig.cp_comm_type (Megatron-Core's --cp-comm-type):
		// Transformer Engine's all-gather or all-to-all context
		// parallelism, as placer costs the plan; unset, Megatron-Core
		// runs its p2p ring.
		switch s.Software.Settings().CPRing {
		case plan.CPRingKVAllGather:
			set("model.cp_comm_type", plan.CPCommAllGather)
		case plan.CPRingQKVOA2A:
			set("model.cp_comm_type", plan.CPCommA2A)
		}
	}
	set("model.sequence_parallel", s.SequenceParallel)
	if m.MoE() {
		etp := T
		if s.ExpertTensor > 0 {
			etp = s.ExpertTensor
		}
		set("model.expert_model_parallel_size", s.ExpertDegree())
		set("model.expert_tensor_parallel_size", etp)
	}
	if s.EmbeddingLayer || s.LossLayer {
		set("model.account_for_embedding_in_pipeline_split", s.EmbeddingLayer)
		set("model.account_for_loss_in_pipeline_split", s.LossLayer)
		return nil
	}
	for _, e := range []struct {
		key, field string
		n          int
	}{{"first", "model.num_layers_in_first_pipeline_stage", s.FirstLayers}, {"last", "model.num_layers_in_last_pipeline_stage", s.LastLayers}} {
		if e.n == 0 {
			continue
		}
		if e.n%V != 0 {
			return fmt.Errorf("megatron-bridge overrides: %s=%d with vp=%d: Megatron-Core splits an end stage's layers into vp equal model chunks (a multiple of %d, or embedding-layer=on,loss-layer=on)", e.key, e.n, V, V)
		}
		set(e.field, e.n)
	}
	return nil
}

// bridgeRecompute writes recomputation as TransformerConfig's fields:
// selective with the plan's modules (the core attention by default, as
// Megatron-Core's), full of every layer (uniform, 1) or of N layers of
// each chunk (block, N), or none.
func bridgeRecompute(s plan.Strategy, set func(string, any)) {
	switch s.Recompute {
	case plan.SelectiveRecompute:
		mods := []string{"core_attn"}
		if s.RecomputeModules != 0 {
			mods = s.RecomputeModules.Names()
		}
		set("model.recompute_granularity", "selective")
		set("model.recompute_method", nil)
		set("model.recompute_num_layers", nil)
		set("model.recompute_modules", mods)
	case plan.FullRecompute:
		method, n := "uniform", 1
		if s.RecomputeLayers > 0 {
			method, n = "block", s.RecomputeLayers
		}
		set("model.recompute_granularity", "full")
		set("model.recompute_method", method)
		set("model.recompute_num_layers", n)
	default:
		set("model.recompute_granularity", nil)
		set("model.recompute_method", nil)
		set("model.recompute_num_layers", nil)
	}
}

// bridgeData writes the data-parallel settings placer costs: the
// distributed optimizer with the gradients' reduce-scatter and the
// parameters' all-gather overlapped; without it the all-reduce
// overlapped where there are replicas; Megatron-FSDP (optim_grads_params,
// the distributed optimizer Bridge asks beside it, the fsdp_dtensor
// checkpoints Megatron-Core 0.16 and later ask of it, no
// gradient-accumulation fusion, as Megatron-LM's validate_args asks).
func bridgeData(s plan.Strategy, D int, set func(string, any)) {
	dist := s.DistOpt || s.FSDP
	set("ddp.use_distributed_optimizer", dist)
	set("optimizer.use_distributed_optimizer", dist)
	set("ddp.overlap_grad_reduce", dist || D > 1)
	set("ddp.overlap_param_gather", dist)
	set("ddp.use_megatron_fsdp", s.FSDP)
	if s.FSDP {
		set("ddp.data_parallel_sharding_strategy", "optim_grads_params")
		set("checkpoint.ckpt_format", "fsdp_dtensor")
		set("model.gradient_accumulation_fusion", false)
	}
	set("model.tp_comm_overlap", s.TPOverlap)
}

// bridgeExperts writes the experts' stack as TransformerConfig's fields,
// as moeStack writes Megatron-LM's flags: the dispatcher (flex with its
// backend, DeepEP or HybridEP), grouped GEMMs, the fused permutation and
// router, a capacity factor padded to capacity, and the all-to-all
// overlap (model.overlap_moe_expert_parallel_comm with
// model.delay_wgrad_compute; Bridge's CommOverlapConfig, absent from
// the recipes by default, is not needed for it).
func bridgeExperts(m transformer.Spec, s plan.Strategy, T int, set func(string, any)) {
	st := s.Software.Settings()
	set("model.moe_token_dispatcher_type", st.Dispatcher)
	if st.Dispatcher == plan.DispatcherFlex {
		set("model.moe_flex_dispatcher_backend", flexBackend(st))
	}
	if fusedMultihot(st) {
		// Megatron-Core's experimental features, as --enable-experimental
		// (moeStack): Bridge 0.5.0 training/setup.py sets them from
		// DistributedInitConfig.enable_megatron_core_experimental.
		set("dist.enable_megatron_core_experimental", true)
	}
	set("model.moe_grouped_gemm", !st.ExpertLoop)
	set("model.moe_permute_fusion", !st.UnfusedPermute)
	set("model.moe_router_fusion", !st.UnfusedRouter)
	if st.Capacity > 0 {
		set("model.moe_expert_capacity_factor", st.Capacity)
		set("model.moe_pad_expert_input_to_capacity", true)
	}
	if st.RankCapacity > 0 { // HybridEP's budget: Megatron-Core 0.18.0 asks the op fuser beside it (planner/plan/rankcapacity.go)
		set("model.moe_expert_rank_capacity_factor", st.RankCapacity)
		set("model.use_transformer_engine_op_fuser", true)
	}
	set("model.overlap_moe_expert_parallel_comm", s.EPOverlap)
	set("model.delay_wgrad_compute", s.EPOverlap)
}

// bridgeFineTune writes LoRA (appended to a *_peft_config recipe's LoRA object, or run_recipe.py's
// --peft_scheme lora; experts adapted as priced: one adapter an EP rank, the full rank, plan/loramoe.go)
// and packing (a fine-tuning recipe's dataset: its packed sequences of the model's length; the mix,
// pack-len, is the data's own, which no key sets). A LoRA plan without packing clears the specs its
// recipe packs by default (recipes/common.py's _peft_common packs SQuAD).
func bridgeFineTune(s plan.Strategy, seq int, experts bool, set func(string, any)) {
	if s.LoRA() {
		set("+peft.dim", s.LoRARank)
		set("+peft.alpha", s.Alpha())
		set("+peft.target_modules", s.Targets().Names())
		if s.LoRADropout > 0 { // LoRA.dropout at its default dropout_position "pre" (the input's, as costed)
			set("+peft.dropout", s.LoRADropout)
		}
		if experts && s.Targets().Has(plan.LoRAFC1|plan.LoRAFC2) {
			set("+peft.share_expert_adapters", true)
			set("+peft.normalize_moe_lora", false)
		}
	}
	switch {
	case s.Packed():
		set("dataset.packed_sequence_specs.packed_sequence_size", seq)
	case s.LoRA():
		set("dataset.packed_sequence_specs", nil)
	}
}

// BridgeRecipe is the kind of Megatron-Bridge recipe plan s's overrides
// apply to: a *_peft_config recipe for LoRA, a *_sft_config recipe for
// packed full fine-tuning, a *_pretrain_config recipe otherwise.
func BridgeRecipe(s plan.Strategy) string {
	switch {
	case s.LoRA():
		return "peft"
	case s.Packed():
		return "sft"
	}
	return "pretrain"
}

// bridgePresetRecipes are Megatron-Bridge 0.5.0's recipes of the models
// placer has presets of, by preset (src/megatron/bridge/recipes: llama/
// llama3.py, qwen/qwen3_moe.py, deepseek/deepseek_v3.py,
// gpt_oss/gpt_oss.py; each NAME_pretrain_config, and NAME_sft_config
// and NAME_peft_config where bridgeRecipeKinds says).
var bridgePresetRecipes = map[string]string{
	"llama3-8b": "llama3_8b", "llama3-70b": "llama3_70b", "llama3.1-405b": "llama31_405b", "deepseek-v3": "deepseek_v3",
	"qwen3-30b-a3b": "qwen3_30b_a3b", "qwen3-235b-a22b": "qwen3_235b_a22b", "gpt-oss-120b": "gpt_oss_120b",
}

// bridgeFamilyRecipes are, by config.json model_type, a Megatron-Bridge
// 0.5.0 recipe of the family (its provider: the norms, rotary
// positions, latent attention and router a model of the family has),
// for a model of no preset; the overrides set its shape. Mistral,
// Mixtral, Qwen2-MoE, Nemotron-4 and Llama 4 have none in 0.5.0.
var bridgeFamilyRecipes = map[string]string{
	"llama": "llama3_8b", "qwen2": "qwen25_7b", "qwen3": "qwen3_8b", "qwen3_moe": "qwen3_30b_a3b", "qwen3_next": "qwen3_next_80b_a3b",
	"deepseek_v2": "deepseek_v2", "deepseek_v3": "deepseek_v3", "gpt_oss": "gpt_oss_20b", "gemma3_text": "gemma3_1b",
	"glm4_moe": "glm45_air_106b", "nemotron_h": "nemotronh_8b",
}

// bridgePretrainOnly are the recipes of bridgePresetRecipes and
// bridgeFamilyRecipes with no _sft_config or _peft_config in 0.5.0
// (recipes/deepseek: pre-training only).
var bridgePretrainOnly = map[string]bool{"deepseek_v2": true, "deepseek_v3": true}

// BridgeRecipeName is the Megatron-Bridge 0.5.0 recipe plan s of model m
// runs from (NAME_KIND_config, KIND BridgeRecipe's), what names the
// model in the file's header (its preset, else its config.json's
// model_type, else ""), and, where 0.5.0 has no recipe of the model's
// family and kind, "" and why: a pre-training run then takes
// vanilla_gpt_pretrain_config (recipes/gpt/vanilla_gpt.py), which the
// overrides reshape.
func BridgeRecipeName(m transformer.Spec, s plan.Strategy) (recipe, model, missing string) {
	kind := BridgeRecipe(s)
	base := ""
	for _, name := range transformer.Presets() {
		if p, _ := transformer.Preset(name); sameShape(p, m) {
			model, base = name, bridgePresetRecipes[name]
			break
		}
	}
	typ := m.Config.ModelType
	if model == "" && typ != "" {
		model = "a " + typ + " model"
	}
	if base == "" {
		base = bridgeFamilyRecipes[typ]
		if typ == "nemotron_h" && m.MoE() {
			base = bridgeHybridExpertsRecipe // bridge_hybrid.go
		}
	}
	switch {
	case base != "" && (kind == "pretrain" || !bridgePretrainOnly[base]):
		return base + "_" + kind + "_config", model, ""
	case base != "":
		missing = fmt.Sprintf("Megatron-Bridge %s's %s recipes are pre-training only", BridgeRelease, base)
	case typ != "" || model != "":
		missing = fmt.Sprintf("Megatron-Bridge %s has no recipe of %s", BridgeRelease, cmp.Or(typ, model))
	default:
		missing = "a model by its shape names no family"
	}
	if kind == "pretrain" {
		return "vanilla_gpt_pretrain_config", model, missing
	}
	return "", model, missing
}

// sameShape is whether a and b are one model's shape, whatever their
// sequence, batch and settings.
func sameShape(a, b transformer.Spec) bool {
	a, b = a.Shape(), b.Shape()
	a.Seq, a.Batch = b.Seq, b.Batch
	return a == b
}

// BridgeScript writes the overrides as a bash array a launch script
// sources, headed by what they are for (the model, the plan) and how
// Megatron-Bridge 0.5.0's scripts/training/run_recipe.py runs them:
// the recipe of the model's family (BridgeRecipeName).
func BridgeScript(m transformer.Spec, planText string, s plan.Strategy, gpus, perNode int, overrides []string) string {
	var b strings.Builder
	nodes := max(1, gpus/max(perNode, 1))
	kind := BridgeRecipe(s)
	recipe, model, missing := BridgeRecipeName(m, s)
	shape := "shape " + strings.TrimPrefix(m.String(), m.Family+":")
	if model != "" {
		shape = model + ", " + shape
	}
	fmt.Fprintf(&b, "# placer: Megatron-Bridge %s ConfigContainer overrides for %s under %s on %d GPUs\n", BridgeRelease, shape, planText, gpus)
	fmt.Fprintf(&b, "# source this file, then %s:\n", onNodes(nodes))
	fmt.Fprintf(&b, "#   torchrun --nnodes %d --nproc-per-node %d ... scripts/training/run_recipe.py \\\n", nodes, min(perNode, gpus))
	shown := recipe
	if shown == "" {
		shown = "RECIPE_" + kind + "_config"
	}
	fmt.Fprintf(&b, "#     --recipe %s --dataset %s \"${PLACER_OVERRIDES[@]}\"\n", shown, map[string]string{"pretrain": "llm-pretrain-mock", "sft": "llm-finetune", "peft": "llm-finetune"}[kind])
	switch {
	case missing != "" && recipe != "":
		fmt.Fprintf(&b, "# (%s: %s, which the overrides reshape; they set the shape, vocabulary and every setting placer costed)\n", missing, recipe)
	case missing != "":
		fmt.Fprintf(&b, "# (%s: RECIPE is a %s recipe of yours; the overrides set the shape, vocabulary and every setting placer costed)\n", missing, kind)
	default:
		b.WriteString("# (the recipe of the model's family; the overrides set the shape, vocabulary and every setting placer costed)\n")
	}
	b.WriteString(allocatorEnv(s.String()))
	b.WriteString("PLACER_OVERRIDES=(\n")
	for _, o := range overrides {
		b.WriteString("  " + shellWord(o) + "\n")
	}
	b.WriteString(")\n")
	return b.String()
}

// bridgeRecipe writes the plan's memory-recipe keys (plan.MemoryRecipe)
// as Megatron-Bridge 0.5.0's overrides of Megatron-Core 0.18.0's
// TransformerConfig (GPTModelProvider's fields): fp8-activation=on as
// model.activation_func_fp8_input_store, fp8-transpose-cache=off as
// model.disable_parameter_transpose_cache, hidden-dropout=0 as
// model.hidden_dropout 0.0 (bridgeSettings writes it for a config.json's
// model), offload-layers=N as model.cpu_offloading and
// model.cpu_offloading_num_layers N, graph-pool=layers as the
// transformer_engine graphs written (make_graphed_callables). fp8-params=on
// is the FP8 recipe's own: Bridge 0.5.0's bf16_with_fp8_delayed_scaling_mixed
// and bf16_with_fp8_current_scaling_mixed set fp8_param_gather True
// (mixed_precision.py), which MixedPrecisionConfig.setup copies onto the
// model's fp8_param; gc-threshold is the script's environment line
// (BridgeScript). Refused in one line: fp8-dpa=on, since every 0.5.0
// recipe holds fp8_dot_product_attention False and setup copies it onto
// the model over an override of model.fp8_dot_product_attention (the
// recipe is named, mixed_precision=NAME, so its fields take no
// override), and memory-fraction, which no Bridge setting sets
// (torch.cuda.set_per_process_memory_fraction is not called in 0.5.0).
func bridgeRecipe(m transformer.Spec, s plan.Strategy, set func(string, any)) error {
	const who = "megatron-bridge overrides"
	r := s.MemoryRecipe
	switch {
	case r.FP8DPA:
		return fmt.Errorf("%s: fp8-dpa=on: Megatron-Bridge %s's mixed-precision recipes hold fp8_dot_product_attention False and MixedPrecisionConfig.setup copies it onto the model, over model.fp8_dot_product_attention (the recipe is named by mixed_precision=, its fields take no override)", who, BridgeRelease)
	case r.MemoryFraction > 0:
		return fmt.Errorf("%s: memory-fraction=%g: Megatron-Bridge %s has no setting that calls torch.cuda.set_per_process_memory_fraction", who, r.MemoryFraction, BridgeRelease)
	}
	if r.FP8Activation {
		set("model.activation_func_fp8_input_store", true)
	}
	if r.FP8OutputProj {
		// Megatron-Core 0.18.0's TransformerConfig.fp8_output_proj (not a
		// MixedPrecisionConfig field: the recipe does not copy over it).
		set("model.fp8_output_proj", true)
	}
	if r.NoTransposeCache {
		set("model.disable_parameter_transpose_cache", true)
	}
	if r.NoHiddenDropout && m.Config.ModelType == "" {
		set("model.hidden_dropout", 0.0)
	}
	if r.OffloadLayers > 0 {
		set("model.cpu_offloading", true)
		set("model.cpu_offloading_num_layers", r.OffloadLayers)
	}
	return nil
}
