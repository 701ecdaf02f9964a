// Package transformer describes a decoder-only transformer (GPT, Llama,
// and mixtures of experts; Llama 3, Mixtral, Qwen3, GPT-OSS and
// DeepSeek-V3 as presets; any Llama, Mistral, Mixtral, Qwen2/3,
// DeepSeek-V2/V3 or GPT-OSS by its Hugging Face config.json, hf.go) by
// its shape rather than by its ops: layers, hidden size, heads,
// sequence, vocabulary and global batch, and its experts (DESIGN §12).
// Its parameter and FLOP counts are the ones Megatron-LM's tables use
// (Narayanan et al., SC'21), so that a plan at cluster scale
// (planner) is costed per layer and stage, never per op of every
// GPU.
//
// May import: internal/...
package transformer
