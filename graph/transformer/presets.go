package transformer

import (
	"slices"
	"strings"
)

// presets are published models by name, as their authors' config.json
// (Hugging Face) gives their shapes; sequence and batch are a run's (the
// preset's seq=4096, batch=1 are placeholders Preset returns; Parse
// refuses a preset without both: "qwen3-30b-a3b:seq=4096,batch=512"). What a preset leaves out is
// listed beside it.
// qwen3MoE is what Qwen3-MoE's config.json sets beyond the shape, as
// FromHFConfig reads it (model_type qwen3_moe: the queries' and keys' RMS
// norms; router_aux_loss_coef 0.001; norm_topk_prob true; softmax
// scores), less the model type, rotary base and norm epsilon, which a
// preset does not export (Qwen/Qwen3-30B-A3B and Qwen3-235B-A22B
// config.json, testdata/hf).
var qwen3MoE = ModelConfig{QKNorm: true, RouterScore: "softmax", AuxLoss: 0.001, NormTopK: true}

var presets = map[string]Spec{
	// meta-llama/Meta-Llama-3-8B config.json: 32 layers, hidden 4,096, 32
	// heads, 8 key/value heads, intermediate 14,336, vocabulary 128,256,
	// untied; 8.03B parameters (its model card). Llama 3.1 8B has the
	// same shape (its rope_scaling differs, which placer ignores).
	"llama3-8b": {Family: "llama", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Seq: 4096, Vocab: 128256, Batch: 1},
	// meta-llama/Meta-Llama-3-70B config.json (Llama-3.1-70B's has the
	// same shape): 80 layers, hidden 8,192, 64 heads, 8 key/value heads,
	// intermediate 28,672, vocabulary 128,256, untied; 70.6B parameters.
	"llama3-70b": {Family: "llama", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, FFN: 28672, Seq: 4096, Vocab: 128256, Batch: 1},
	// meta-llama/Llama-3.1-405B config.json: 126 layers, hidden 16,384,
	// 128 heads, 8 key/value heads, intermediate 53,248, vocabulary
	// 128,256, untied; 405B parameters (its model card; 405.85B counted,
	// the usual figure). The Llama 3 paper's table (planner's
	// Llama3) builds the same shape by hand.
	"llama3.1-405b": {Family: "llama", Layers: 126, Hidden: 16384, Heads: 128, KVHeads: 8, FFN: 53248, Seq: 4096, Vocab: 128256, Batch: 1},
	// deepseek-ai/DeepSeek-V3 config.json: 61 layers, hidden 7,168, 128
	// heads, MLA (q_lora_rank 1,536, kv_lora_rank 512, qk_nope_head_dim
	// 128, qk_rope_head_dim 64, v_head_dim 128), intermediate 18,432 in
	// the first_k_dense_replace = 3 dense layers, 256 routed experts of
	// 2,048 (moe_intermediate_size), 8 per token, 1 shared, vocabulary
	// 129,280, one MTP module (num_nextn_predict_layers); 671B
	// parameters, 37B active (DeepSeek-AI, arXiv 2412.19437). Its
	// node-limited routing and auxiliary-loss-free balancing are not
	// modelled (a token's experts are any TopK).
	"deepseek-v3": {Family: "llama", Layers: 61, Hidden: 7168, Heads: 128, KVHeads: 128, FFN: 18432, Seq: 4096, Vocab: 129280, Batch: 1,
		Head: 128, Experts: 256, TopK: 8, ExpertFFN: 2048, SharedExperts: 1, DenseLayers: 3, QLoRA: 1536, KVLoRA: 512, RopeDim: 64, MTP: 1},
	// Qwen/Qwen3-30B-A3B config.json: 48 layers, hidden 2,048, 32 heads
	// of 128 (head_dim), 4 key/value heads, 128 experts of 768, 8 per
	// token, vocabulary 151,936, untied; 30.5B parameters, 3.3B active
	// (its model card). Its QK norms' weights (2 x 128 a layer) are left
	// out of the counts; their kernels are costed (qwen3MoE's QKNorm).
	"qwen3-30b-a3b": {Family: "llama", Layers: 48, Hidden: 2048, Heads: 32, KVHeads: 4, FFN: 6144, Seq: 4096, Vocab: 151936, Batch: 1,
		Head: 128, Experts: 128, TopK: 8, ExpertFFN: 768, Config: qwen3MoE},
	// Qwen/Qwen3-235B-A22B config.json: 94 layers, hidden 4,096, 64
	// heads of 128, 4 key/value heads, 128 experts of 1,536, 8 per token,
	// vocabulary 151,936; 235B parameters, 22B active.
	"qwen3-235b-a22b": {Family: "llama", Layers: 94, Hidden: 4096, Heads: 64, KVHeads: 4, FFN: 12288, Seq: 4096, Vocab: 151936, Batch: 1,
		Head: 128, Experts: 128, TopK: 8, ExpertFFN: 1536, Config: qwen3MoE},
	// openai/gpt-oss-120b config.json: 36 layers, hidden 2,880, 64 heads
	// of 64, 8 key/value heads, 128 experts of 2,880 (intermediate_size),
	// 4 per token, vocabulary 201,088, untied; 116.8B parameters (its
	// model card); a sliding window of 128 tokens in every other layer
	// from the first (sliding_window, layer_types). The FLOP counts
	// (ModelFLOPs, CausalFLOPs) keep every layer's attention over the
	// whole sequence (Megatron-LM's count); the cost takes the window.
	// Its settings that change what a framework runs (Config, as
	// FromHFConfig reads them from the same file): biases on every
	// linear layer (attention_bias true), the GLU's clamp (swiglu_limit
	// 7.0) and YaRN rotary scaling (rope_scaling: factor 32, beta_fast
	// 32, beta_slow 1, original_max_position_embeddings 4,096). Left
	// out: the biases' parameters (0.01%) and the attention sinks (one
	// scalar a head; Transformer Engine's cuDNN attention takes them in
	// its kernel, planner/families/gptoss.go).
	"gpt-oss-120b": {Family: "llama", Layers: 36, Hidden: 2880, Heads: 64, KVHeads: 8, FFN: 2880, Seq: 4096, Vocab: 201088, Batch: 1,
		Head: 64, Experts: 128, TopK: 4, ExpertFFN: 2880, Window: 128, WindowEvery: 2,
		Config: ModelConfig{LinearBias: true, SwiGLULimit: 7, RopeScaling: "yarn", RopeFactor: 32, BetaFast: 32, BetaSlow: 1, RopeOriginal: 4096}},
	// mistralai/Mixtral-8x7B-v0.1 config.json: 32 layers, hidden 4,096,
	// 32 heads, 8 key/value heads, 8 experts of 14,336, 2 per token,
	// vocabulary 32,000; 46.7B parameters, 12.9B active (Jiang et al.,
	// arXiv 2401.04088).
	"mixtral-8x7b": {Family: "llama", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, FFN: 14336, Seq: 4096, Vocab: 32000, Batch: 1,
		Experts: 8, TopK: 2, ExpertFFN: 14336},
	// mistralai/Mixtral-8x22B-v0.1 config.json: 56 layers, hidden 6,144,
	// 48 heads, 8 key/value heads, 8 experts of 16,384, 2 per token,
	// vocabulary 32,768; 141B parameters, 39B active (Mistral AI).
	"mixtral-8x22b": {Family: "llama", Layers: 56, Hidden: 6144, Heads: 48, KVHeads: 8, FFN: 16384, Seq: 4096, Vocab: 32768, Batch: 1,
		Experts: 8, TopK: 2, ExpertFFN: 16384},
}

// Presets lists the named models Parse reads ("qwen3-30b-a3b:seq=4096,batch=512").
func Presets() []string {
	var out []string
	for k := range presets {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Preset is the named model with its placeholder sequence and batch,
// and whether there is one.
func Preset(name string) (Spec, bool) {
	m, ok := presets[strings.ToLower(name)]
	return m, ok
}
