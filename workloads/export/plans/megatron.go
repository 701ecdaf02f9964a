package plans

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// MegatronArgs are the Megatron-LM (Megatron-Core) command-line arguments
// of model m under plan s on gpus GPUs: the model's shape, the global and
// micro-batch sizes, and every parallel and memory setting of the plan,
// as pretrain_gpt.py reads them. Data, tokenizer, optimizer and logging
// arguments are the user's (MegatronScript writes a placeholder for
// mock data). s must be resolved (planner/plan.Resolve: every degree
// filled in) with T x C x P x D = gpus.
//
// The flags: --tensor-model-parallel-size, --pipeline-model-parallel-size,
// --context-parallel-size (with cp > 1; Megatron-Core's default
// --cp-comm-type p2p is the ring placer costs, --cp-comm-type all_gather
// where the plan says cp-comm-type=all_gather),
// --num-layers-per-virtual-pipeline-stage (L / (P V), even stages) or
// --num-virtual-stages-per-pipeline-rank (with uneven stages, whose
// layers --decoder-first-pipeline-num-layers and
// --decoder-last-pipeline-num-layers set, or the embedding and the loss
// counted as layers, --account-for-embedding-in-pipeline-split and
// --account-for-loss-in-pipeline-split, which Megatron-Core takes
// without the first two), --sequence-parallel,
// --tp-comm-overlap, --use-distributed-optimizer with
// --overlap-grad-reduce and --overlap-param-gather (the overlapped
// data-parallel communication placer's model assumes), and
// --recompute-granularity selective (with --recompute-modules where the
// plan names modules other than the core attention), or full with
// --recompute-method uniform --recompute-num-layers 1 (every layer) or
// --recompute-method block --recompute-num-layers N (N layers of each
// model chunk); for a
// model with experts --num-experts, --moe-router-topk,
// --moe-ffn-hidden-size, --moe-shared-expert-intermediate-size,
// --moe-layer-freq (dense first layers), the all-to-all dispatcher with
// grouped GEMMs, --expert-model-parallel-size and
// --expert-tensor-parallel-size; FP8 as --fp8-format hybrid (E4M3
// forward, E5M2 backward; e4m3 for blockwise, as DeepSeek-V3 trained)
// with --fp8-recipe tensorwise (current scaling), delayed or blockwise;
// fp8=mxfp8 as --fp8-format e4m3 --fp8-recipe mxfp8, fp4=nvfp4 as
// --fp4-format e2m1 --fp4-recipe nvfp4;
// Megatron-FSDP as --use-megatron-fsdp with
// --data-parallel-sharding-strategy optim_grads_params; grads=bf16 as
// --grad-reduce-in-bf16; epoverlap=on as --overlap-moe-expert-parallel-comm
// --delay-wgrad-compute (Megatron-Core's EP A2A overlap). Data parallelism is what the GPUs
// leave: Megatron-LM has no flag for it. The uneven-stage and
// virtual-stages-per-rank flags are Megatron-Core's later releases' (not
// r0.8's). The model's attention and heads: multi-head latent attention
// as --multi-latent-attention with --q-lora-rank (where the queries are
// compressed), --kv-lora-rank, --qk-head-dim, --qk-pos-emb-head-dim and
// --v-head-dim; multi-token prediction as --mtp-num-layers (rotary
// positions only; with epoverlap=on one layer and a pipeline, as
// Megatron-Core asks); a sliding window as --window-size W-1,0 and,
// where it is not in every layer, --window-attn-skip-freq (2, or the
// layers' pattern). Every flag is one of Megatron-LM core_v0.16.1's
// (testdata/megatron-lm-core_v0.16.1-args.txt).
func MegatronArgs(m transformer.Spec, s plan.Strategy, gpus int) ([]string, error) {
	if err := megatronRope(m); err != nil {
		return nil, err
	}
	return megatronArgs(m, s, gpus)
}

// megatronRope refuses a config.json's rope scaling that pretrain_gpt.py
// cannot write: Llama 3's (--use-rope-scaling) and latent attention's
// YaRN (--rotary-scaling-factor, --mscale) it can; GPT-OSS's YaRN on
// plain attention it cannot (core_v0.16.1's --position-embedding-type
// has no yarn, and its --rope-type is latent attention's), nor any other.
// A preset's settings (no config.json: ModelType "") are not written
// (megatronModel writes none for it), so there is nothing to refuse: the
// gpt-oss-120b preset's YaRN, which only its cost reads, exports as it
// did before the preset carried it.
func megatronRope(m transformer.Spec) error {
	if m.Config.ModelType == "" {
		return nil
	}
	if t := m.Config.RopeTheta; t != math.Trunc(t) {
		return ModelError{fmt.Errorf("megatron arguments: rope_theta %g (config.json's model_type %s) is not whole: Megatron-LM's --rotary-base takes an int", t, m.Config.ModelType)}
	}
	switch c := m.Config; {
	case c.RopeScaling == "" || c.RopeScaling == "llama3" || (c.RopeScaling == "yarn" && m.MLA()):
		return nil
	default:
		// A ModelError: no plan of this model runs there, so the
		// search's --for hint does not apply.
		return ModelError{fmt.Errorf("megatron arguments: rope_scaling %s (config.json's model_type %s) on attention without latents: Megatron-LM core_v0.16.1's pretrain_gpt.py has no setting for it (--position-embedding-type has no %s)", c.RopeScaling, c.ModelType, c.RopeScaling)}
	}
}

// megatronArgs is MegatronArgs without the rope check.
func megatronArgs(m transformer.Spec, s plan.Strategy, gpus int) ([]string, error) {
	T, err := oneTensor(s, "megatron arguments", "Megatron-LM has one --tensor-model-parallel-size for every stage")
	if err != nil {
		return nil, err
	}
	P, D, C := s.PipelineDegree(), s.ReplicaCount(), s.ContextDegree()
	switch {
	case C > 1 && T*C*P*D != gpus:
		return nil, fmt.Errorf("megatron arguments: tp=%d x cp=%d x pp=%d x dp=%d is not the %d GPUs", T, C, P, D, gpus)
	case C == 1 && T*P*D != gpus:
		return nil, fmt.Errorf("megatron arguments: tp=%d x pp=%d x dp=%d is not the %d GPUs", T, P, D, gpus)
	case s.MicroBatchSize < 1 || D*s.MicroBatchSize*s.MicroBatchCount() != m.Batch:
		return nil, fmt.Errorf("megatron arguments: dp=%d x mbs=%d x mb=%d is not the batch of %d", D, s.MicroBatchSize, s.MicroBatchCount(), m.Batch)
	case P > 1 && s.Schedule == decision.GPipe && s.MicroBatchCount() > 1:
		// With one micro-batch GPipe and 1F1B are the same steps (a
		// plan's text names schedule=gpipe there: plan.Plan's String):
		// Megatron-LM's 1F1B runs it.
		return nil, fmt.Errorf("megatron arguments: schedule=gpipe: Megatron-LM runs 1F1B (interleaved with virtual stages)")
	}
	stages, err := s.StageLayers(m.Layers)
	if err != nil {
		return nil, fmt.Errorf("megatron arguments: %w", err)
	}
	arg := func(k string, v int) []string { return []string{k, strconv.Itoa(v)} }
	var a []string
	add := func(xs ...string) { a = append(a, xs...) }
	add(arg("--num-layers", m.Layers)...)
	add(arg("--hidden-size", m.Hidden)...)
	add(arg("--ffn-hidden-size", m.FFN)...)
	add(arg("--num-attention-heads", m.Heads)...)
	if d := m.HeadDim(); d != m.Hidden/m.Heads {
		add(arg("--kv-channels", d)...) // a head width of its own (Qwen3's 128 at hidden 2,048 and 32 heads)
	}
	if m.KVHeads != m.Heads {
		add("--group-query-attention")
		add(arg("--num-query-groups", m.KVHeads)...)
	}
	add(arg("--seq-length", m.Seq)...)
	add(arg("--max-position-embeddings", m.Seq)...)
	switch {
	case m.Chunk > 0:
		return nil, ModelError{fmt.Errorf("megatron arguments: chunk=%d (Llama 4's chunked attention): Megatron-LM core_v0.16.1's pretrain_gpt.py has no flag for it (Megatron-Bridge's Llama 4 provider builds the model)", m.Chunk)}
	case m.Act == "geglu" || m.NormsPerBlock() > 2:
		// A ModelError: no plan of this model runs there.
		return nil, ModelError{fmt.Errorf("megatron arguments: act=%s, norms=%d (Gemma's GeGLU MLP and post-norms): Megatron-LM core_v0.16.1's pretrain_gpt.py has no flag for them (its --quick-geglu is another activation; Megatron-Bridge's Gemma 3 provider builds the model)", cmp.Or(m.Act, "swiglu"), m.NormsPerBlock())}
	case m.Hybrid():
		hy, err := megatronHybrid(m) // megatron_hybrid.go
		if err != nil {
			return nil, err
		}
		add(hy...)
	case m.Act == "relu2":
		// Nemotron-4's MLP: squared ReLU, no gate, no biases, rotary
		// positions; its LayerNorm1P is Megatron-Core's LayerNorm with
		// zero-centred scales (--apply-layernorm-1p), a shape's llama
		// RMS norms.
		add("--squared-relu", "--disable-bias-linear", "--position-embedding-type", "rope")
		if m.Config.ModelType == "nemotron" {
			add("--apply-layernorm-1p")
		} else {
			add("--normalization", "RMSNorm")
		}
	case m.SwiGLU(): // placer's llama: RMS norms, SwiGLU, no biases (but GPT-OSS's), rotary positions
		add("--normalization", "RMSNorm", "--swiglu")
		if !m.Config.LinearBias {
			add("--disable-bias-linear")
		}
		add("--position-embedding-type", "rope")
	}
	add(megatronModel(m)...)
	if m.Mixed() {
		mx, err := megatronMixers(m) // megatron_hybrid.go
		if err != nil {
			return nil, err
		}
		add(mx...)
	}
	if !m.Tied {
		add("--untie-embeddings-and-output-weights")
	}
	if m.MLA() {
		// Multi-head latent attention (Megatron-Core's
		// MLATransformerConfig): the queries' compression (none: a full
		// projection, --q-lora-rank left at None), the keys' and values',
		// each head's query and key of head_dim without position plus
		// rope_dim rotary, its value of head_dim. Latent attention has
		// every head's key and value (Spec.Check: no kv_heads).
		add("--multi-latent-attention")
		if m.QLoRA > 0 {
			add(arg("--q-lora-rank", m.QLoRA)...)
		}
		add(arg("--kv-lora-rank", m.KVLoRA)...)
		add(arg("--qk-head-dim", m.HeadDim())...)
		add(arg("--qk-pos-emb-head-dim", m.RopeDim)...)
		add(arg("--v-head-dim", m.HeadDim())...)
	}
	if m.MTP > 0 {
		// Multi-token prediction: Megatron-LM core_v0.16.1's validate_args
		// asks rotary (or no) positions of it (tools/dev/frameworks/
		// megatron_check.py's step of it).
		if m.Family != "llama" {
			return nil, ModelError{fmt.Errorf("megatron arguments: mtp=%d on %s's learned positions: Megatron-LM's multi-token prediction needs rotary positions (a llama: workload)", m.MTP, m.Family)}
		}
		add(arg("--mtp-num-layers", m.MTP)...)
	}
	if m.Window > 0 {
		// A query attends to its Window latest keys, itself included:
		// Megatron-Core's window_size (left, right) keeps keys i-left..i+right,
		// so (Window-1, 0). (Megatron-Bridge's GPT-OSS provider writes
		// (128, 0), 129 keys, for config.json's sliding_window 128, which
		// transformers and OpenAI's reference model read as 128 keys.)
		add("--window-size", fmt.Sprintf("%d,0", m.Window-1))
		if g := m.GlobalEvery; g > 0 {
			// Every layer but the 1-based layers n with n % g == 0:
			// window_attn_skip_freq's own meaning.
			add("--window-attn-skip-freq", strconv.Itoa(g))
		} else if every := m.WindowEvery; every > 1 {
			// The window in layers 0, every, 2 x every, ... (0-based);
			// Megatron-Core's window_attn_skip_freq N windows the 1-based
			// layers n with n % N != 0, which is that for N = 2 only; else
			// the layers' pattern, 1 a windowed layer
			// (transformer/utils.py is_layer_window_attention).
			if every == 2 {
				add("--window-attn-skip-freq", "2")
			} else {
				add("--window-attn-skip-freq", windowPattern(m.Layers, every))
			}
		}
	}
	if m.MoE() {
		// Megatron-Core's mixture of experts: dropless (no capacity
		// factor), the all-to-all dispatcher and grouped expert GEMMs
		// placer costs; the first dense layers by --moe-layer-freq.
		add(arg("--num-experts", m.Experts)...)
		add(arg("--moe-router-topk", m.TopK)...)
		if m.TopK == 1 && !routerPreSoftmax(m) {
			// Top-1 routing over softmax scores: Megatron-Core asks for the
			// softmax before the top-k ("Please use
			// --moe-router-pre-softmax when topk is 1").
			add("--moe-router-pre-softmax")
		}
		add(arg("--moe-ffn-hidden-size", m.ExpertFFN)...)
		if m.SharedExperts > 0 {
			add(arg("--moe-shared-expert-intermediate-size", m.SharedExperts*m.ExpertFFN)...)
		}
		if m.DenseLayers > 0 {
			add("--moe-layer-freq", fmt.Sprintf("([0]*%d+[1]*%d)", m.DenseLayers, m.Layers-m.DenseLayers))
		}
		moeStack(m, s.Software.Settings(), add)
		add(arg("--expert-model-parallel-size", s.ExpertDegree())...)
		etp := T
		if s.ExpertTensor > 0 {
			etp = s.ExpertTensor
		}
		add(arg("--expert-tensor-parallel-size", etp)...)
		if s.EPOverlap {
			if err := mtpOverlap(m, P); err != nil {
				return nil, err
			}
			add("--overlap-moe-expert-parallel-comm", "--delay-wgrad-compute")
		}
	}
	add("--bf16")
	switch s.FP8 {
	case plan.FP8Current:
		add("--fp8-format", "hybrid", "--fp8-recipe", "tensorwise")
	case plan.FP8Delayed:
		add("--fp8-format", "hybrid", "--fp8-recipe", "delayed")
	case plan.FP8Blockwise:
		add("--fp8-format", "e4m3", "--fp8-recipe", "blockwise")
	case plan.FP8MX:
		// Megatron-Bridge's bf16_with_mxfp8_mixed: fp8 "e4m3", recipe
		// "mxfp8" (Megatron-LM's --fp8-recipe choices: tensorwise,
		// delayed, mxfp8, blockwise).
		add("--fp8-format", "e4m3", "--fp8-recipe", "mxfp8")
	case plan.FP4NV:
		// Megatron-LM's FP4 arguments (--fp4-format, choices e2m1;
		// --fp4-recipe, choices nvfp4): Bridge's bf16_with_nvfp4_mixed.
		add("--fp4-format", "e2m1", "--fp4-recipe", "nvfp4")
	case plan.FP8Rowwise, plan.FP8RowwiseGWHP:
		return nil, fmt.Errorf("megatron arguments: --fp8-recipe: fp8=%s is torchao's recipe; Megatron-LM's are tensorwise, delayed, mxfp8 and blockwise", s.FP8)
	}
	if s.GradBF16 {
		add("--grad-reduce-in-bf16")
	}
	add(arg("--micro-batch-size", s.MicroBatchSize)...)
	add(arg("--global-batch-size", m.Batch)...)
	add(arg("--tensor-model-parallel-size", T)...)
	add(arg("--pipeline-model-parallel-size", P)...)
	if C > 1 {
		add(arg("--context-parallel-size", C)...)
		switch s.Software.Settings().CPRing {
		case plan.CPRingKVAllGather:
			add("--cp-comm-type", plan.CPCommAllGather)
		case plan.CPRingQKVOA2A:
			add("--cp-comm-type", plan.CPCommA2A)
		}
	}
	uneven := s.FirstLayers > 0 || s.LastLayers > 0
	switch {
	case s.EmbeddingLayer || s.LossLayer:
		// The split follows from the layers and these units (StageLayers
		// checked first= and last= against it): Megatron-Core refuses
		// them with --decoder-first/last-pipeline-num-layers.
		uneven = true
		if s.EmbeddingLayer {
			add("--account-for-embedding-in-pipeline-split")
		}
		if s.LossLayer {
			add("--account-for-loss-in-pipeline-split")
		}
	default:
		if V := s.VirtualStages(); V > 1 {
			// Megatron-Core splits an end stage's layers into V equal
			// model chunks ("number of layers at first stage: 7 must be
			// divisible by virtual pipeline parallel degree 4",
			// core_v0.16.1's TransformerConfig).
			for _, e := range []struct {
				key string
				n   int
			}{{"first", s.FirstLayers}, {"last", s.LastLayers}} {
				if e.n > 0 && e.n%V != 0 {
					return nil, fmt.Errorf("megatron arguments: %s=%d with vp=%d: Megatron-Core splits an end stage's layers into vp equal model chunks (a multiple of %d, or embedding-layer=on,loss-layer=on)", e.key, e.n, V, V)
				}
			}
		}
		if s.FirstLayers > 0 {
			add(arg("--decoder-first-pipeline-num-layers", s.FirstLayers)...)
		}
		if s.LastLayers > 0 {
			add(arg("--decoder-last-pipeline-num-layers", s.LastLayers)...)
		}
	}
	if V := s.VirtualStages(); V > 1 {
		if uneven {
			add(arg("--num-virtual-stages-per-pipeline-rank", V)...)
		} else {
			add(arg("--num-layers-per-virtual-pipeline-stage", stages[0]/V)...)
		}
	}
	if s.SequenceParallel {
		add("--sequence-parallel")
	}
	if s.TPOverlap {
		add("--tp-comm-overlap")
	}
	if s.FSDP {
		// Megatron-LM core_v0.16.1's validate_args: "Megatron FSDP only
		// supports fsdp_dtensor checkpoint format".
		add("--use-megatron-fsdp", "--ckpt-format", "fsdp_dtensor", "--data-parallel-sharding-strategy", "optim_grads_params", "--no-gradient-accumulation-fusion",
			"--use-distributed-optimizer", "--overlap-grad-reduce", "--overlap-param-gather")
	} else if s.DistOpt {
		add("--use-distributed-optimizer", "--overlap-grad-reduce", "--overlap-param-gather")
	} else if D > 1 {
		add("--overlap-grad-reduce")
	}
	if err := cudaGraphs(m, s, add); err != nil {
		return nil, err
	}
	if s.Software.Settings().FusedLoss {
		// loss-fusion=on: Transformer Engine's fused cross-entropy.
		add("--cross-entropy-loss-fusion", "--cross-entropy-fusion-impl", "te")
	}
	switch s.Recompute {
	case plan.SelectiveRecompute:
		add("--recompute-granularity", "selective")
		if s.RecomputeModules != 0 {
			add("--recompute-modules")
			add(s.RecomputeModules.Names()...)
		}
	case plan.FullRecompute:
		if k := s.RecomputeLayers; k > 0 {
			add("--recompute-granularity", "full", "--recompute-method", "block", "--recompute-num-layers", strconv.Itoa(k))
		} else {
			add("--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1")
		}
	}
	if err := megatronFineTune(s, add); err != nil {
		return nil, err
	}
	if err := megatronRecipe(s, slices.Contains(a, "--hidden-dropout"), add); err != nil {
		return nil, err
	}
	// The keys a mechanism declares in its own file, written as their
	// declarations say (plan.Key.Writes).
	add(plan.DeclaredWrites(plan.ExportMegatron, s)...)
	if err := unwritten("megatron", s, megatronKeys); err != nil {
		return nil, err
	}
	return a, nil
}

// moeStack writes the software keys of a mixture-of-experts plan (the
// strategy's stack= and its own keys: planner's Settings, as
// placer costs them) as Megatron-Core 0.16's arguments: the token
// dispatcher (flex with its backend: DeepEP, or HybridEP where the plan
// says dispatcher=hybridep; core_v0.16.1 transformer_config.py
// moe_flex_dispatcher_backend Literal['deepep', 'hybridep'], a flag
// through arguments.py's ArgumentGroupFactory), the fused permutation and router
// (--moe-permute-fusion, --moe-router-fusion; off by default in
// Megatron-Core, on in placer's default stack as in Megatron-Bridge's
// recipes), grouped expert GEMMs (--moe-grouped-gemm; without it
// Megatron-Core runs SequentialMLP, one GEMM pair per local expert) and
// a capacity factor, padded to capacity as placer costs it. DeepEP with
// the fused permutation, where the stack costs the fused multihot
// conversion (not Settings.UnfusedMultihot), needs Megatron-Core's
// experimental features (--enable-experimental): Megatron-Core takes
// the fused conversion only under them
// (token_dispatcher.py _DeepepManager.get_permuted_hidden_states_by_experts,
// core_v0.16.0), and runs the unfused one, 3 device-to-host
// synchronizations a layer, without.
func moeStack(m transformer.Spec, st plan.Settings, add func(...string)) {
	add("--moe-token-dispatcher-type", st.Dispatcher)
	if st.Dispatcher == plan.DispatcherFlex {
		add("--moe-flex-dispatcher-backend", flexBackend(st))
	}
	if fusedMultihot(st) {
		add("--enable-experimental")
	}
	if !st.ExpertLoop {
		add("--moe-grouped-gemm")
	}
	if !st.UnfusedPermute {
		add("--moe-permute-fusion")
	}
	if !st.UnfusedRouter {
		add("--moe-router-fusion")
	}
	if st.Capacity > 0 {
		add("--moe-expert-capacity-factor", strconv.FormatFloat(st.Capacity, 'g', -1, 64), "--moe-pad-expert-input-to-capacity")
	}
}

// cudaGraphs writes the plan's CUDA graphs (cuda-graphs=, or its stack's) as Megatron-Core 0.16's
// Transformer Engine graphs (--cuda-graph-impl transformer_engine, transformer_config.py): dense,
// each layer's attention and a dense layer's MLP (--cuda-graph-scope attn, and mlp where the model
// has dense layers); full, the whole layer (attn and moe with experts, drop-padding as placer asks;
// empty under rank-capacity, Megatron-Bridge's only). What Megatron-Core refuses is refused in one
// line: graphs beside full recomputation ("full recompute is only supported with full iteration CUDA
// graph"), graphed attention beside the recomputed attention core (where the attention dropout is
// not 0: Megatron-LM's default 0.1 for a model by its shape, the config.json's otherwise), and the
// MLP or MoE graphed beside epoverlap ("CUDA graph scope on moe and mlp is not supported with
// overlap_moe_expert_parallel_comm").
func cudaGraphs(m transformer.Spec, s plan.Strategy, add func(...string)) error {
	g := s.Software.Settings().Graphs
	if g == plan.GraphsOff || g == "" {
		return nil
	}
	if s.Recompute == plan.FullRecompute {
		return fmt.Errorf("megatron arguments: --cuda-graph-impl: cuda-graphs=%s with recompute=full: Megatron-Core graphs layers beside full recomputation only as a full-iteration graph, which placer does not cost", g)
	}
	dense := !m.MoE() || m.DenseLayers > 0
	scope := []string{"attn"}
	if dense {
		scope = append(scope, "mlp")
	}
	if st := s.Software.Settings(); g == plan.GraphsFull && m.MoE() && st.RankCapacity == 0 {
		scope = append(scope, "moe")
	} else if g == plan.GraphsFull && m.MoE() && st.Capacity == 0 {
		scope = nil // HybridEP's budget: the whole layer (an empty cuda_graph_modules); Megatron-Core refuses moe without a capacity factor
	}
	// The attention dropout the arguments leave Megatron-Core: the
	// config.json's (megatronModel writes it), else Megatron-LM's 0.1.
	dropout := 0.1
	if m.Config.ModelType != "" {
		dropout = m.Config.AttentionDropout
	}
	if dropout > 0 && s.Recompute == plan.SelectiveRecompute && (s.RecomputeModules == 0 || slices.Contains(s.RecomputeModules.Names(), "core_attn")) {
		return fmt.Errorf("megatron arguments: --cuda-graph-scope attn: cuda-graphs=%s beside recompute=selective of the attention core: Megatron-Core does not graph attention whose core it recomputes at an attention dropout of %g (\"attention dropout is not supported with graphed attention recomputation\"); recompute other modules (recompute-modules=) or leave cuda-graphs off", g, dropout)
	}
	if s.EPOverlap && len(scope) != 1 {
		return fmt.Errorf("megatron arguments: --cuda-graph-scope %s: cuda-graphs=%s beside epoverlap=on: Megatron-Core graphs only the attention beside the experts' all-to-all overlap", strings.Join(scope, " "), g)
	}
	add("--cuda-graph-impl", "transformer_engine", "--cuda-graph-scope")
	add(scope...)
	return nil
}

// ModelError is an export's refusal of the model itself, whatever its
// plan (so that no search for the framework finds one it runs).
type ModelError struct{ Err error }

func (e ModelError) Error() string { return e.Err.Error() }
func (e ModelError) Unwrap() error { return e.Err }

// mtpOverlap refuses what megatron-core 0.16.1's TransformerConfig does
// of multi-token prediction beside the experts' all-to-all overlap
// (epoverlap=on): more than one MTP layer ("MTP layernum only supports 1
// when enabling overlap_moe_expert_parallel_comm"), and one without a
// pipeline ("Pipeline model parallel size must be larger than 1 when
// enabling overlap_moe_expert_parallel_comm with MTP layer").
func mtpOverlap(m transformer.Spec, P int) error {
	switch {
	case m.MTP > 1:
		return fmt.Errorf("megatron arguments: epoverlap=on with mtp=%d: Megatron-Core overlaps the experts' all-to-alls beside one multi-token-prediction layer at most", m.MTP)
	case m.MTP == 1 && P == 1:
		return fmt.Errorf("megatron arguments: epoverlap=on with mtp=1 and pp=1: Megatron-Core overlaps the experts' all-to-alls beside multi-token prediction only with a pipeline")
	}
	return nil
}

// windowPattern is --window-attn-skip-freq's list of layers layers long,
// 1 where the window is (every every-th layer from the first), as the
// Python expression Megatron-LM's moe_freq_type evaluates:
// "([1]+[0]*2)*4" for 12 layers, every 3rd; a last partial period
// appended ("+[1]+[0]*1").
func windowPattern(layers, every int) string {
	period := fmt.Sprintf("[1]+[0]*%d", every-1)
	s := fmt.Sprintf("(%s)*%d", period, layers/every)
	if r := layers % every; r > 0 {
		s += "+[1]"
		if r > 1 {
			s += fmt.Sprintf("+[0]*%d", r-1)
		}
	}
	return "(" + s + ")"
}

// MegatronScript writes args as a bash array a launch script sources,
// headed by what it is for (the model, the plan as placer writes it) and
// how to run it on nodes of perNode GPUs.
func MegatronScript(m transformer.Spec, plan string, gpus, perNode int, args []string) string {
	var b strings.Builder
	nodes := max(1, gpus/max(perNode, 1))
	fmt.Fprintf(&b, "# placer: Megatron-LM arguments for %s under %s on %d GPUs\n", m, plan, gpus)
	fmt.Fprintf(&b, "# source this file, then %s:\n", onNodes(nodes))
	fmt.Fprintf(&b, "#   torchrun --nnodes %d --nproc-per-node %d ... %s \"${PLACER_ARGS[@]}\" \\\n", nodes, min(perNode, gpus), megatronEntry(m))
	fmt.Fprintf(&b, "#     --tokenizer-type NullTokenizer --vocab-size %d --mock-data ...   # or your data and tokenizer\n", m.Vocab-1)
	fmt.Fprintf(&b, "# (NullTokenizer adds its end-of-document token to --vocab-size: %d in all, as placer costed)\n", m.Vocab)
	b.WriteString(allocatorEnv(plan))
	b.WriteString("PLACER_ARGS=(\n")
	for i := 0; i < len(args); i++ {
		line := shellWord(args[i])
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			i++
			line += " " + shellWord(args[i])
		}
		b.WriteString("  " + line + "\n")
	}
	b.WriteString(")\n")
	return b.String()
}

// oneTensor is s's tensor-parallel degree where every stage has the same
// (tp=, or a stage-tp of one degree); a per-stage degree is a one-line
// error naming who cannot run it and why.
func oneTensor(s plan.Strategy, who, why string) (int, error) {
	ts := s.TensorStages
	if ts == nil {
		return s.TensorDegree(), nil
	}
	for _, t := range ts {
		if t != ts[0] {
			d := make([]string, len(ts))
			for i, x := range ts {
				d[i] = strconv.Itoa(x)
			}
			return 0, fmt.Errorf("%s: stage-tp=%s: a tensor-parallel degree per stage cannot be exported (%s)", who, strings.Join(d, ":"), why)
		}
	}
	return ts[0], nil
}

// shellWord is w as one word of a bash array: as it is where it holds
// only characters bash takes literally, else in single quotes
// (--moe-layer-freq's "([0]*3+[1]*58)").
func shellWord(w string) string {
	plain := w != ""
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r)) {
			plain = false
			break
		}
	}
	if plain {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// flexBackend is Megatron-Core's moe_flex_dispatcher_backend of the flex
// dispatcher's settings st: "hybridep" or "deepep".
// fusedMultihot: the plan's stack costs DeepEP's received indices made
// into the local experts' multihot map by the fused kernel, which
// Megatron-Core runs only with its experimental features on and the
// permutation fused.
func fusedMultihot(st plan.Settings) bool {
	return st.Dispatcher == plan.DispatcherFlex && !st.HybridEP && !st.UnfusedPermute && !st.UnfusedMultihot
}

func flexBackend(st plan.Settings) string {
	if st.HybridEP {
		return plan.DispatcherHybridEP
	}
	return "deepep"
}

// megatronRecipe writes the plan's memory-recipe keys (plan.MemoryRecipe)
// as Megatron-LM core_v0.16.1's arguments: fp8-params=on as
// --fp8-param-gather (arguments.py: kw_args['fp8_param'] =
// args.fp8_param_gather; validate_args: "--fp8-param-gather only
// supported with distributed optimizer, torch fsdp2, megatron fsdp, or
// inference mode"), hidden-dropout=0 as --hidden-dropout 0 (where the
// model's settings did not write it: dropped is true), offload-layers=N
// as --cpu-offloading-num-layers N (validate_args: "if
// args.cpu_offloading_num_layers > 0: args.cpu_offloading = True"), and
// graph-pool=layers as what cudaGraphs wrote (--cuda-graph-impl
// transformer_engine: Transformer Engine's make_graphed_callables, a
// graph a layer's modules and micro-batch; plan.MemoryRecipe's check
// asks cuda-graphs for it). What pretrain_gpt.py cannot set is refused in
// one line: arguments.py's _add_network_size_args excludes
// fp8_dot_product_attention, activation_func_fp8_input_store and
// disable_parameter_transpose_cache from its flags ("no CLI argument
// exists for these"), and torch.cuda.set_per_process_memory_fraction is
// called by no argument. gc-threshold is the script's environment line
// (MegatronScript: allocatorEnv).
func megatronRecipe(s plan.Strategy, dropped bool, add func(...string)) error {
	r := s.MemoryRecipe
	const noFlag = "megatron arguments: %s: Megatron-LM core_v0.16.1's pretrain_gpt.py has no argument for TransformerConfig's %s (arguments.py excludes it: \"no CLI argument exists for these\"); Megatron-Bridge's model.%s sets it"
	switch {
	case r.FP8DPA:
		return fmt.Errorf(noFlag, "fp8-dpa=on", "fp8_dot_product_attention", "fp8_dot_product_attention")
	case r.FP8Activation:
		return fmt.Errorf(noFlag, "fp8-activation=on", "activation_func_fp8_input_store", "activation_func_fp8_input_store")
	case r.NoTransposeCache:
		return fmt.Errorf(noFlag, "fp8-transpose-cache=off", "disable_parameter_transpose_cache", "disable_parameter_transpose_cache")
	case r.MemoryFraction > 0:
		return fmt.Errorf("megatron arguments: memory-fraction=%g: Megatron-LM core_v0.16.1 has no argument that calls torch.cuda.set_per_process_memory_fraction", r.MemoryFraction)
	case r.FP8Params && !s.DistOpt:
		return fmt.Errorf("megatron arguments: --fp8-param-gather: fp8-params=on without distopt=on: Megatron-LM core_v0.16.1's validate_args: \"--fp8-param-gather only supported with distributed optimizer, torch fsdp2, megatron fsdp, or inference mode\"")
	}
	switch {
	case r.FP8Params && s.FP8 == plan.FP4NV:
		// NVFP4 primary weights: core_v0.16.1's --fp4-param-gather
		// (TransformerConfig.fp4_param, fp4_utils.py get_fp4_context
		// builds the weights under quantized_model_init with the NVFP4
		// recipe; testdata/megatron-lm-core_v0.16.1-args.txt).
		add("--fp4-param-gather")
	case r.FP8Params:
		add("--fp8-param-gather")
	}
	if r.NoHiddenDropout && !dropped {
		add("--hidden-dropout", "0")
	}
	if r.OffloadLayers > 0 {
		add("--cpu-offloading-num-layers", strconv.Itoa(r.OffloadLayers))
	}
	return nil
}

// allocatorEnv is the environment line a plan's gc-threshold=F (in its
// text, as plan.Strategy's String writes it) asks of the launch:
// PyTorch's caching allocator reads garbage_collection_threshold from
// PYTORCH_CUDA_ALLOC_CONF (c10/cuda/CUDAAllocatorConfig), not from any
// framework's arguments; "" where the plan sets none.
func allocatorEnv(planText string) string {
	for _, kv := range strings.Split(planText, ",") {
		if v, ok := strings.CutPrefix(kv, "gc-threshold="); ok {
			return "export PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:" + v + "\n"
		}
	}
	return ""
}

// onNodes is where a launch script's command runs: "on each of the 4
// nodes", "on the one node".
func onNodes(nodes int) string {
	if nodes == 1 {
		return "on the one node"
	}
	return fmt.Sprintf("on each of the %d nodes", nodes)
}
