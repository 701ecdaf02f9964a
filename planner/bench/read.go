package bench

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/placer/placer/planner/plan"
)

// The models' shapes, as MLPerf's reference and NVIDIA's NeMo configs run
// them. GPT-3 175B: 96 layers, hidden 12,288, 96 heads, FFN 4h
// (conf/custom.yaml of NVIDIA's gpt3 implementations: num_layers 96,
// hidden_size 12288, num_attention_heads 96, ffn_hidden_size 4 x hidden),
// the C4 SentencePiece vocabulary of 50,257 (assumed: the tokenizer.model
// is not in the mirror), tied embeddings (NeMo's GPT default). Llama 2
// 70B: meta-llama/Llama-2-70b-hf config.json (80 layers, hidden 8,192, 64
// heads, 8 key/value heads, intermediate 28,672, vocabulary 32,000,
// untied).
const (
	gpt3Shape    = "gpt:layers=96,hidden=12288,heads=96,vocab=50257"
	llama270Bape = "llama:layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,vocab=32000"
	// llama31405BShape is Llama 3.1 405B (NeMo's Llama31Config405B: 126
	// layers, hidden 16,384, 128 heads, 8 key/value heads, FFN 53,248)
	// with the Mixtral 8x22B tokenizer's 32,768 entries.
	llama31405BShape = "llama:layers=126,hidden=16384,heads=128,kv_heads=8,ffn=53248,vocab=32768"
)

// distOptKeys is the distributed optimizer's keys of row r:
// distopt=on, and for GPT-3 grads=bf16: NeMo's distributed_fused_adam
// (apex's DistributedFusedAdam) as NVIDIA's GPT-3 implementations
// configure it keeps its gradient buffer and reduce-scatter in BF16
// (grad_sync_dtype: bf16 in v3.0's conf/megatron_gpt_config.yaml, v3.1's
// and v4.0's conf/optim/distributed_fused_adam.yaml; v4.0's logs print
// it resolved). runs.csv has no column for it: said in rd.Assumed.
func distOptKeys(r Row, rd *Reading) []string {
	if r.DistOptimizer != "1" || r.DP <= 1 {
		return nil
	}
	if r.Benchmark != "gpt3" {
		return []string{"distopt=on"}
	}
	rd.Assumed = append(rd.Assumed, "gradients reduced in BF16 (grad_sync_dtype: bf16, the distributed_fused_adam config of NVIDIA's GPT-3 implementations; runs.csv has no column for it)")
	return []string{"distopt=on", "grads=bf16"}
}

// Read is row r as placer eval's workload, cluster and strategy, or why
// placer cannot write it (one line). It reads the plan and recipe only,
// never the step time.
func Read(r Row) (Reading, error) {
	var rd Reading
	if r.Benchmark == "bert" {
		return readBERT(r) // bert.go
	}
	if r.TP == 0 || r.DP == 0 || r.MBS == 0 || r.GBS == 0 {
		return rd, fmt.Errorf("no plan in the mirror: neither a config script of this system nor a plan printed in its logs (runs.csv config_match says which)")
	}
	preset, pcie, err := podPreset(r) // pods.go
	if err != nil {
		return rd, err
	}
	perNode, err := nodeOption(r, preset, pcie, &rd)
	if err != nil {
		return rd, err
	}
	if r.CPUOffload == "1" && r.CPUOffloadLayers < 1 {
		return rd, fmt.Errorf("CPU offload (NeMo's cpu_offloading) without its number of layers (runs.csv cpu_offload_layers; placer's key: offload-layers=N)")
	}
	if err := readWorkload(r, &rd); err != nil {
		return rd, err
	}
	if amdGPUs[r.GPU] {
		rd.Assumed = append(rd.Assumed, amdAssumed) // pods.go
	}
	rd.Cluster = fmt.Sprintf("%s:%d%s%s", preset, clusterNodes(r, preset), perNode, attentionOption(r, &rd))
	var k []string
	add := func(format string, a ...any) { k = append(k, fmt.Sprintf(format, a...)) }
	for _, d := range []struct {
		key string
		n   int
	}{{"tp", r.TP}, {"pp", r.PP}, {"vp", r.VP}, {"cp", r.CP}} {
		if d.n > 1 {
			add("%s=%d", d.key, d.n)
		}
	}
	if r.PPEmbedLayer == "1" && r.PP > 1 {
		add("embedding-layer=on")
	}
	if r.PPLossLayer == "1" && r.PP > 1 {
		add("loss-layer=on")
	}
	add("dp=%d", r.DP)
	add("mbs=%d", r.MBS)
	if r.SP == "1" && r.TP > 1 {
		add("sp=on")
	}
	if r.TPOverlap == "1" && r.TP > 1 {
		add("tpoverlap=on")
	}
	k = append(k, distOptKeys(r, &rd)...)
	switch r.RecomputeGranularity {
	case "":
		add("recompute=none")
	case "selective":
		add("recompute=selective")
	case "full":
		add("recompute=full")
		if r.RecomputeMethod == "block" && r.RecomputeLayers > 0 {
			add("recompute-layers=%d", r.RecomputeLayers)
		}
	default:
		return rd, fmt.Errorf("recompute granularity %q: want full or selective", r.RecomputeGranularity)
	}
	k = append(k, fp8Keys(r, &rd)...)
	if p, err := strconv.ParseFloat(r.HiddenDropout, 64); err == nil && p == 0 {
		add("hidden-dropout=0") // the recipe's hidden_dropout 0.0: no masks
	}
	if r.CPUOffload == "1" {
		add("offload-layers=%d", r.CPUOffloadLayers)
	}
	k = append(k, graphKeys(r, &rd)...)
	conf, unread, err := allocConf(r.AllocConf)
	if err != nil {
		return rd, err
	}
	k = append(k, conf...)
	rd.LeftOut = append(rd.LeftOut, unread...)
	ck, err := connectionKeys(r)
	if err != nil {
		return rd, err
	}
	k = append(k, ck...)
	if r.Benchmark == "llama2_70b_lora" {
		lk, err := loraKeys(r, &rd)
		if err != nil {
			return rd, err
		}
		k = append(k, lk)
	}
	rd.Strategy = strings.Join(k, ",")
	leaveOut(r, &rd)
	return rd, nil
}

// fp8Keys are row r's FP8 keys: the recipe, what it holds in FP8 and its
// amax reduction.
func fp8Keys(r Row, rd *Reading) []string {
	var k []string
	add := func(format string, a ...any) { k = append(k, fmt.Sprintf(format, a...)) }
	if r.FP8 == "1" {
		// Transformer Engine's delayed scaling: every round here predates
		// current scaling in NeMo's recipes.
		add("fp8=delayed")
		// Its switches of what is held in FP8 (plan/recipe.go): NeMo's
		// fp8_params, fp8_dot_product_attention,
		// activation_func_fp8_input_store.
		for _, sw := range []struct{ col, key string }{{r.FP8Params, "fp8-params"}, {r.FP8DPA, "fp8-dpa"}, {r.FP8Activation, "fp8-activation"}} {
			if sw.col == "1" {
				add("%s=on", sw.key)
			}
		}
		if r.FP8Params == "1" && r.NoTransposeCache == "1" {
			add("fp8-transpose-cache=off") // disable_parameter_transpose_cache
		}
		if a := amaxKey(r, rd); a != "" {
			add("amax-sync=%s", a)
		}
	}
	return k
}

// graphKeys are row r's CUDA graph keys, and what they assume in rd.
func graphKeys(r Row, rd *Reading) []string {
	var k []string
	add := func(format string, a ...any) { k = append(k, fmt.Sprintf(format, a...)) }
	if r.CUDAGraphMode == "full_iteration" {
		// A whole training step captured in one CUDA graph (NVIDIA's
		// v5.0 llama31_405b GB200 configs: FULL_CUDA_GRAPH=True, its
		// custom_callbacks.py capturing training_step): every layer
		// replayed, the host's launches of the step hidden.
		add("graphs=full")
		rd.Assumed = append(rd.Assumed, "the whole training step captured in one CUDA graph (FULL_CUDA_GRAPH=True) as graphs=full: every layer replayed from a graph; its memory pool not counted")
		return k
	}
	switch r.CUDAGraph {
	case "1":
		// Per-layer graphs as NVIDIA's v4.0 GPT-3 code captures them
		// (custom_callbacks.py: Transformer Engine's
		// make_graphed_callables, a graph a layer and micro-batch): their
		// static buffers (plan/recipe.go, graph-pool=layers).
		add("graphs=dense,graph-pool=layers")
		rd.Assumed = append(rd.Assumed, "per-layer CUDA graphs captured as NVIDIA's v4.0 GPT-3 code does (TE make_graphed_callables: a graph a layer and micro-batch, four hidden states each kept)")
	case "0", "":
		if r.MCoreCUDAGraph == "1" {
			// Megatron-Core's own per-layer graphs (NVIDIA's v5.0 LoRA
			// configs' MCORE_CUDA_GRAPH=1): the layers' launches
			// replayed; their memory pools are Megatron-Core's
			// (transformer/cuda_graphs.py), not read here.
			add("graphs=dense")
			rd.Assumed = append(rd.Assumed, "Megatron-Core's per-layer CUDA graphs (MCORE_CUDA_GRAPH=1) replay the layers' launches; their static buffers are not counted (Megatron-Core's graph memory pools not read)")
		} else if r.CUDAGraph == "0" {
			add("graphs=off")
		}
	}
	return k
}

// leaveOut writes to rd what of row r's recipe placer has no key for:
// FP8 storage switches without FP8 compute, SHARP.
func leaveOut(r Row, rd *Reading) {
	if r.FP8 != "1" {
		for _, sw := range []struct{ col, what string }{{r.FP8Params, "FP8 weights without a BF16 copy (fp8_params)"},
			{r.FP8DPA, "FP8 attention (fp8_dot_product_attention)"}, {r.FP8Activation, "FP8 activation storage (activation_func_fp8_input_store)"}} {
			if sw.col == "1" {
				rd.LeftOut = append(rd.LeftOut, sw.what+" without FP8 compute")
			}
		}
	}
	if r.Sharp == "1" {
		rd.LeftOut = append(rd.LeftOut, "SHARP in-network reduction")
	}
}

// connectionKeys is row r's CUDA_DEVICE_MAX_CONNECTIONS as its scripts
// export it (runs.csv connections; NVIDIA's GPT-3 config_common.sh and
// its LoRA config_*.sh: 1) as placer's connections=N (plan.Strategy
// OneQueue at 1), none where unset. A GPT-3 row at 1 also queue-ahead=on:
// NVIDIA's GPT-3 implementations launch each transfer and bucket ahead of
// the compute hiding it, their NCCL CTAs bounded and the LayerNorms' SMs
// held back "to improve p2p overlap on H100" (config_common.sh of v3.0,
// v3.1, v4.0; overlap_p2p_comm True, batch_p2p_comm False,
// overlap_grad_sync and overlap_param_sync True): one queue exposes
// nothing more (plan.Strategy.QueueAhead). LoRA's code (fused_adam, no
// pipeline) is not read for it: its rows keep connections=1 alone.
func connectionKeys(r Row) ([]string, error) {
	if r.Connections == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(r.Connections)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("runs.csv connections %q: want CUDA_DEVICE_MAX_CONNECTIONS as a whole number of 1 or more", r.Connections)
	}
	k := []string{fmt.Sprintf("connections=%d", n)}
	if n == 1 && r.Benchmark == "gpt3" {
		k = append(k, "queue-ahead=on")
	}
	return k, nil
}

// Transformer Engine's amax reduction by revision (mechanisms.AmaxSync),
// as each release the bench's Dockerfiles install (runs.csv te_revision)
// runs it. teAmaxEnv: the releases that read NVTE_DP_AMAX_REDUCE_INTERVAL
// (default 1: the fp8 group every time; 0: the tensor group) and
// NVTE_ASYNC_AMAX_REDUCTION (default 0: waited for on the compute
// stream), added by TE db95afe and ee87982 (2023-04) and removed by
// 73f8d90 ("cuda graph support", 2024-04-12): release_v0.8 (fp8.py
// global_amax_reduction), 09ba842 and 4ee8e8e (2023-10). teAmaxSync: the
// releases after 73f8d90, whose reduce_and_update_fp8_tensors all-reduces
// over the fp8 group with async_op=False at fp8_autocast's exit and after
// the first module's backward, whatever the environment: v1.6rc1 (=
// 9e4091e) and v1.6rc2.
var (
	teAmaxEnv = map[string]bool{"release_v0.8": true, "09ba84278a0e5b2eff80239599fbfc5e6beb389f": true,
		"4ee8e8ec1dcb9d12ff87a341839de401cb699ddb": true}
	teAmaxSync = map[string]bool{"v1.6rc1": true, "v1.6rc2": true, "9e4091e742638721f35f67f710815cfb36309831": true}
)

// fp8Group is the amax-sync group of the fp8_group row r's framework
// passes to fp8_autocast, "" where not read: NeMo v1.17.0's
// ParallelTransformer passes apex's get_amax_reduction_group(), the
// tensor x data ranks of one pipeline stage (apex parallel_state.py
// "amax_group_size: int = tensor_model_parallel_size *
// data_parallel_size"); Megatron-Core core_v0.7.0.beta and
// core_r0.7.0.beta's TransformerBlock the tensor group
// (transformer_block.py: "fp8_group =
// parallel_state.get_tensor_model_parallel_group()").
func fp8Group(r Row) string {
	switch {
	case r.NeMoRevision == "v1.17.0_pt_23.04" && r.MegatronRevision == "":
		return plan.AmaxSyncTPDP
	case r.MegatronRevision == "core_v0.7.0.beta" || r.MegatronRevision == "core_r0.7.0.beta":
		return plan.AmaxSyncTP
	}
	return ""
}

// amaxKey is the amax-sync group of row r ("": none priced), with what it
// assumes or leaves out written to rd: with delayed scaling and
// reduce_amax, each model chunk's forward and backward end in an
// all-reduce of its amaxes that the compute waits for, over the group
// its Transformer Engine release and environment choose (teAmaxEnv,
// teAmaxSync, fp8Group). An asynchronous one (NVTE_ASYNC_AMAX_REDUCTION=1
// where read) is not priced; neither is a release not read.
func amaxKey(r Row, rd *Reading) string {
	if r.FP8ReduceAmax != "1" {
		return ""
	}
	var group string
	switch {
	case teAmaxEnv[r.TERevision]:
		if r.AmaxAsync == "1" {
			return ""
		}
		switch r.AmaxDPInterval {
		case "0":
			return plan.AmaxSyncTP
		case "", "1":
			group = fp8Group(r)
		default:
			rd.LeftOut = append(rd.LeftOut, "the amaxes' all-reduce over the fp8 group every "+r.AmaxDPInterval+" reductions (NVTE_DP_AMAX_REDUCE_INTERVAL; the tensor group's priced)")
			return plan.AmaxSyncTP
		}
	case teAmaxSync[r.TERevision]:
		group = fp8Group(r)
	default:
		rd.LeftOut = append(rd.LeftOut, fmt.Sprintf("the FP8 amaxes' all-reduce (Transformer Engine revision %q's not read)", r.TERevision))
		return ""
	}
	if group == "" {
		rd.LeftOut = append(rd.LeftOut, "the FP8 amaxes' all-reduce (the framework's fp8_group not read)")
	}
	return group
}

// attentionOption is the cluster option of the attention kernel row r's
// software ran where it is not the preset's first (cuDNN's fused
// attention on an H100): NVIDIA's GPT-3 code of rounds v3.0 and v3.1
// installs flash-attn (v3.1's Dockerfile: flash-attn 2.0.8; v3.0's
// Transformer Engine 0.8 imports it, at least 1.0.2) and its Transformer
// Engine's DotProductAttention takes flash-attn first for BF16 causal
// attention (TE release_v0.8 transformer.py and 09ba842 attention.py,
// forward: FlashAttention before FusedAttention), where v4.0's TE
// v1.6rc1 selects FusedAttention on sm90 (attention.py: "Select
// FusedAttention on sm90 and FlashAttention on others"). placer's flash
// kernel is FlashAttention-2's, measured; v3.0's flash-attn 1.x is
// slower (said in rd.Assumed).
func attentionOption(r Row, rd *Reading) string {
	if r.Benchmark != "gpt3" || r.GPU != "H100" {
		return ""
	}
	switch r.Round {
	case "v3.0":
		rd.Assumed = append(rd.Assumed, "attention by flash-attn 1.x, which Transformer Engine 0.8 takes first, priced as FlashAttention-2's kernel (placer has no FlashAttention-1 measurement)")
	case "v3.1":
		rd.Assumed = append(rd.Assumed, "attention by flash-attn 2.0.8 (the Dockerfile's), which Transformer Engine 09ba842 takes first")
	default:
		return ""
	}
	return ",attention=flash"
}

// readWorkload writes rd's workload (the benchmark's model at the row's
// sequence and global batch) and what it assumes where the row is silent.
func readWorkload(r Row, rd *Reading) error {
	seq := r.Seq
	switch r.Benchmark {
	case "gpt3":
		if seq == 0 {
			seq = 2048
		}
		rd.Workload = fmt.Sprintf("%s,seq=%d,batch=%d", gpt3Shape, seq, r.GBS)
		rd.Assumed = append(rd.Assumed, "vocabulary 50,257 (the C4 SentencePiece tokenizer's; the mirror holds no tokenizer)")
	case "llama31_405b":
		if seq == 0 {
			seq = 8192
			rd.Assumed = append(rd.Assumed, "sequence 8,192 (MLPerf's Llama 3.1 405B benchmark; the row does not say)")
		}
		rd.Workload = fmt.Sprintf("%s,seq=%d,batch=%d", llama31405BShape, seq, r.GBS)
		rd.Assumed = append(rd.Assumed, "vocabulary 32,768 (MLPerf's benchmark replaces Llama 3.1's tokenizer with Mixtral 8x22B's: NVIDIA's v5.0 llama31_405b README)")
	case "llama2_70b_lora":
		if seq == 0 {
			seq = 8192
			rd.Assumed = append(rd.Assumed, "sequence 8,192 (MLPerf's LoRA benchmark; the config does not say)")
		}
		rd.Workload = fmt.Sprintf("%s,seq=%d,batch=%d", llama270Bape, seq, r.GBS)
		rd.Assumed = append(rd.Assumed, "each sample a whole sequence (attention over all of it; GovReport documents padded or packed to 8,192 are not told apart)")
	default:
		return fmt.Errorf("benchmark %q: not on the bench", r.Benchmark)
	}
	return nil
}

// loraKeys is a LoRA row's adapter keys (rank, alpha, targets, the
// adapters' input dropout), what it assumes written to rd.
func loraKeys(r Row, rd *Reading) (string, error) {
	rank, alpha := r.LoRARank, r.LoRAAlpha
	if rank == 0 {
		rank = 16
		rd.Assumed = append(rd.Assumed, "LoRA rank 16 (MLPerf's rule; the row does not say)")
	}
	if alpha == 0 {
		alpha = 32
	}
	targets := "qkv+proj" // NeMo's 'attention': linear_qkv and linear_proj
	if r.LoRATargets != "" && r.LoRATargets != "['attention']" {
		return "", fmt.Errorf("LoRA targets %s: not read (the bench knows NeMo's ['attention'])", r.LoRATargets)
	}
	key := fmt.Sprintf("peft=lora,lora-rank=%d,lora-alpha=%d,lora-targets=%s", rank, alpha, targets)
	// The adapters' input dropout as the recipe sets it
	// (adapter_dropout: NVIDIA's NeMo config's ${oc.env:LORA_DROPOUT,0.1},
	// dropout_position "pre"); where the row does not say, MLPerf's
	// reference's 0.1.
	drop := r.LoRADropout
	if _, err := strconv.ParseFloat(drop, 64); err != nil {
		drop = "0.1"
		rd.Assumed = append(rd.Assumed, "LoRA dropout 0.1 on the adapters' input (MLPerf's reference; the row does not say)")
	}
	if p, _ := strconv.ParseFloat(drop, 64); p > 0 {
		key += ",lora-dropout=" + drop
		// The dropout's mask drawn again in the backward, not kept
		// (NeMo's dropout_recompute: NEMO_LORA_USE_THUNDER_DROPOUT=1 in
		// NVIDIA's v4.1 b200_preview and v5.0 config_common.sh).
		if r.LoRADropoutRecompute == "1" {
			key += ",lora-dropout-recompute=on"
		}
	}
	// A row-parallel adapter's output returned to the sequence shard by
	// an all-to-all (NeMo's a2a_experimental, LORA_A2A=1 in NVIDIA's v4.0
	// config_common.sh); where the row does not say, not priced.
	if r.LoRAA2A == "1" {
		key += ",lora-a2a=on"
	}
	// Transformer Engine's context-parallel exchange as the config sets
	// it (NVIDIA's v4.1 b200_preview LoRA config: cp_comm_type a2a by
	// default); where the row does not say, Megatron-Core's p2p ring.
	if r.CP > 1 && r.CPCommType != "" {
		key += ",cp-comm-type=" + r.CPCommType
	}
	return key, nil
}

// allocConf is PYTORCH_CUDA_ALLOC_CONF as the row's config sets it
// (comma-separated option:value pairs, c10's CUDAAllocatorConfig) as
// placer's keys: expandable_segments as expandable-segments,
// garbage_collection_threshold as gc-threshold (which PyTorch's
// allocator applies only where a memory fraction is set: evaluate/alloc
// replays it so); unread, the options placer has no key for (left out
// of the prediction, named); an error (one line) for a value it cannot
// read.
func allocConf(conf string) (keys, unread []string, err error) {
	for _, kv := range strings.Split(strings.ReplaceAll(conf, " ", ""), ",") {
		if kv == "" {
			continue
		}
		opt, v, _ := strings.Cut(kv, ":")
		switch opt {
		case "expandable_segments":
			switch v {
			case "True", "true", "1":
				keys = append(keys, "expandable-segments=on")
			case "False", "false", "0":
				keys = append(keys, "expandable-segments=off")
			default:
				return nil, nil, fmt.Errorf("PYTORCH_CUDA_ALLOC_CONF %q: expandable_segments %q is not True or False", conf, v)
			}
		case "garbage_collection_threshold":
			keys = append(keys, "gc-threshold="+v)
		default:
			unread = append(unread, fmt.Sprintf("the allocator's %s:%s (PYTORCH_CUDA_ALLOC_CONF; placer reads expandable_segments and garbage_collection_threshold)", opt, v))
		}
	}
	return keys, unread, nil
}
