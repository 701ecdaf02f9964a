// Package mechanisms holds the mechanisms of a training step that change
// what a layer or the step costs, one file each, each registered by name
// (Registered, one line each) behind the extension point of
// evaluate/scale/cost it implements: the context-parallel exchange of a
// layer's attention (Ring: cost.CPAttention), the token dispatchers and
// the permutation of a layer with experts (TokenDispatch:
// cost.TokenDispatcher; its work on a shard, Dispatcher, a
// cost.Dispatch), the
// router's load-balancing loss (RouterAuxLoss: cost.RouterKernels),
// FP8's padding of the experts' rows (FP8Padding: cost.ExpertOutput),
// fine-tuning's adapters (LoRA: cost.FineTune), the experts' grouped
// GEMM (TEGroupedGEMM: cost.GroupedGEMM), the FP8 and FP4 recipes' casts
// (FP8Casts: cost.LowPrecision; the block-scaled and rowwise recipes'
// rules, BlockScaled and Rowwise, registered beside it for a figure's
// provenance); and the mechanisms the composition asks by name on a
// shard, registered for a figure's provenance: torchao's float8
// weights' casts and all-gather (TorchaoFloat8).
// evaluate/scale composes a step from them and names those that priced
// it (scale.PricedByOf). docs/stacks.md, "Adding a mechanism", walks
// through adding one.
//
// May import: graph/..., evaluate/roofline, evaluate/scale/cost,
// evaluate/scale/kernels, evaluate/scale/plan
package mechanisms
