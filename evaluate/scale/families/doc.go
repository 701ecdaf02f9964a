// Package families holds what a model family adds to a layer's kernels
// beyond the block every family shares, one file a family (gptoss.go:
// GPT-OSS's YaRN rope, linear biases and SwiGLU clamp; qwen3.go:
// Qwen3's query and key norms), each trait registered by name
// (Registered, one line each) behind the extension points of
// evaluate/scale/cost it implements (AttentionKernels, ExpertOutput,
// ExpertActivation). evaluate/scale asks every registered trait at each
// point and lists those that priced a step (its PricedBy).
//
// May import: graph/..., evaluate/roofline, evaluate/scale/cost,
// evaluate/scale/plan
package families
