// Package codebases holds the code bases a stack runs its layers with,
// as the cost model prices them: each a cost.CodeBase in a file of its
// own, handed the coster's blocks (cost.Blocks), registered by name in
// Registered (registry.go, a cost.Registry) and chosen by its
// declaration of the stack settings that run it (When). fused.go is
// Megatron-Core's layers with Transformer Engine's fused kernels (the
// blocks as they are); llamapy.go, hf.go and titan.go are a plain
// PyTorch loop's, transformers' and torchtitan's layers run eager, each
// an Eager (eager.go) over its code base's ATen ops (planner/eager)
// priced kernel by kernel (eagercost.go), and titan.go also torchtitan's
// blocks compiled (TitanCompiled, registered as torchtitan-compiled: the
// fused blocks with what Inductor leaves of torchtitan's code).
//
// May import: graph/..., evaluate/roofline, planner/cost, planner/eager, planner/mechanisms, planner/memory, planner/plan, internal/...
package codebases
