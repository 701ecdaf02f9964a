// Package families holds what a model family adds to or puts in place of
// a layer's kernels beyond the block every family shares, one file a
// family, each registered by name (Registered, one line each):
// gptoss.go, GPT-OSS's YaRN rope, linear biases and SwiGLU clamp, and
// qwen3.go, Qwen3's query and key norms, gemma.go, Gemma's norms of
// each half's output, and bert.go, BERT's MLM and next-sentence heads,
// behind the extension points of planner/cost they implement
// (AttentionKernels, MLPKernels, ExpertOutput, ExpertActivation,
// OutputHeads), which the coster asks of every registered trait the
// shard's record says prices the step; mla.go, DeepSeek's multi-head
// latent attention in place of the block's own (AttentionBlock), and
// mtp.go, DeepSeek-V3's multi-token prediction modules on the last
// stage (PredictionModules), each the first registered trait the
// record says prices the step, and each what planner/memory counts of
// it (AttentionMemory, PredictionMemory);
// mamba.go (Nemotron-H's Mamba-2 blocks) and gdn.go (Qwen3-Next's Gated
// DeltaNet and gated attention), the mixers whose blocks the coster's
// hybrid layer weighs by the model's layers of each kind.
// planner names those that priced a step (Result.PricedBy).
//
// May import: graph/..., evaluate/roofline, planner/cost,
// planner/mechanisms, planner/plan
package families
