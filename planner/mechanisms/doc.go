// Package mechanisms holds the mechanisms of a training step that change
// what a layer or the step costs, one file each, each registered by name
// (Registered, one line each) behind the extension point of
// planner/cost it implements: the context-parallel exchange of a
// layer's attention (Ring: cost.CPAttention), the token dispatchers and
// the permutation of a layer with experts (TokenDispatch:
// cost.TokenDispatcher; its work on a shard, Dispatcher, a
// cost.Dispatch), the
// router's load-balancing loss (RouterAuxLoss: cost.RouterKernels),
// FP8's padding of the experts' rows (FP8Padding: cost.ExpertOutput),
// fine-tuning's adapters (LoRA: cost.FineTune), the experts' grouped
// GEMM (TEGroupedGEMM: cost.GroupedGEMM), the FP8 and FP4 recipes' casts
// (FP8Casts: cost.LowPrecision, with the casts in casts.go and the
// block-scaled and rowwise recipes' rules in blockscaled.go and
// rowwise.go); torchao's float8 weights' all-gather (TorchaoFloat8:
// cost.GatherWire); and the mechanisms of the step beyond
// its layers, behind the step-level extension points
// (planner/cost/step.go): the optimizers (Adam, LAMB:
// cost.Optimizer), apex's DistributedFusedLAMB's data-parallel exchange
// (DistLAMB: cost.DataParallel), the weights' casts once a step (FP8Casts,
// TorchaoFloat8: cost.StepKernels), FSDP2's copies and gathers (FSDP2:
// cost.StageKernels, cost.FSDP), what a collective beside the compute
// takes from it (SMContention: cost.Contention), the host's issue
// (HostIssue: cost.Host) and the clock a power limit holds (PowerLimit:
// cost.StepClock).
// planner composes a step from them and names those that priced
// it (planner.Result.PricedBy). No plug-in makes another to ask it.
// What two mechanisms' files share stands in a file below both, named
// for it, no mechanism's: the casts (casts.go), Adam's step arithmetic
// that LAMB's extends (adamstep.go), LAMB as a stack runs it
// (lambsharding.go), Transformer Engine's ring merges (teringmerges.go).
// docs/stacks.md, "Adding a mechanism", walks
// through adding one.
//
// May import: graph/..., evaluate/profile, evaluate/roofline, planner/cost,
// planner/kernels, planner/plan, planner/plan/adapters
package mechanisms
