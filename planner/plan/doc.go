// Package plan is the language a plan of a uniform transformer
// (graph/transformer) at cluster scale is written and resolved in. Its
// files use one another one way, from the words up: the parts of a
// strategy (finetune.go, recipe.go, stack.go: Settings, Stacks) and the
// pod (podnames.go: planner/plan/pod's Pod, ParsePod, PodOf, its node's
// Kernels, WithProfile, Usable and the margin of memory_fit.go); the
// Strategy (strategy.go: tensor, pipeline, context, data and expert
// parallelism, micro-batches, stages, recomputation, FSDP, FP8) and the
// Plan it resolves to (plan.go: its mesh's groups, each stage's layers);
// a key's declaration (key.go); what a mechanism declares and checks
// (rowwise.go, blockscaled.go, float8gather.go, hybrid.go,
// rankcapacity.go); the keys (keys.go: Keys, AddKey, String, Plan.String);
// a strategy read and checked (written.go: ParseStrategy, Check,
// ParseWritten, what fits a model and a pod); Resolve (resolve.go).
// Nothing here costs a step: the cost model (planner) and the published
// tables and checks (planner/published) are its clients.
//
// May import: graph/..., decision, evaluate/roofline, evaluate/profile, planner/kernels, planner/plan/pod, internal/...
package plan
