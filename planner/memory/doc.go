// Package memory counts the memory of a plan's training step on its
// most loaded GPU: what each pipeline stage holds (Stage, StageOf: its
// parameters on one GPU), its weights, gradients and optimizer state as
// the plan's stack and sharding keep them, the activations of its
// micro-batches in flight, and the peak (Step.Peak: a sum of named
// parts; where the stack's step is written tensor by tensor, a plain
// PyTorch loop on one GPU or torchtitan over FSDP2, that trace's
// highest instant) against the GPU's usable memory (Step.Fits); and
// what PyTorch's caching allocator reserves for it (Step.Allocator:
// evaluate/alloc's simulator replaying each stage's allocation trace).
// It reads the plan (planner/plan) and the model alone, no time:
// the cost model (planner) weighs its stages with StageOf, and
// names the eager code base its stack traces (Step.Eager). What a
// family keeps in place of the block's own attention, and its
// prediction modules on the last stage, are the family's traits',
// handed in as method sets of its own (traits.go: Step.Attention,
// Step.Prediction, which planner decides by the traits' declarations):
// it names no family.
//
// May import: graph/..., decision, evaluate/alloc, planner/eager, planner/plan,
// planner/plan/adapters
package memory
