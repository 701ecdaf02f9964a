// Package plan is the language a plan of a uniform transformer
// (graph/transformer) at cluster scale is written and resolved in: the
// strategy (Strategy, read by ParseStrategy and ParseWritten: tensor,
// pipeline, context, data and expert parallelism, micro-batches,
// interleaved and uneven stages, recomputation, the distributed
// optimizer, FSDP, FP8), the software stack that runs it (Settings,
// Stacks: Megatron-Core, torchtitan, plain PyTorch, transformers), the
// pod of nodes it runs on (Pod, ParsePod, PodOf: planner/plan/pod's,
// named in podnames.go) with what its node measures beyond the roofline
// (Pod.Kernels, planner/kernels' data) or what a profile measured
// (WithProfile, ProfilePod), and
// the plan resolved against a model and a pod (Resolve: Plan, its mesh's
// groups and each stage's layers), with the memory a GPU has for it
// (Pod.Usable, the margin and the regime's error: pod's memory_fit.go).
// Nothing here costs a step: the cost model (planner) and the
// published tables and checks (planner/published) are its
// clients.
//
// May import: graph/..., decision, evaluate/roofline, evaluate/profile, planner/kernels, planner/plan/pod, internal/...
package plan
