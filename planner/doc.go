// Package planner evaluates a plan of a uniform transformer
// (graph/transformer) on a pod of nodes, both written in the plan
// language of planner/plan (plan.Strategy, plan.Pod, resolved
// by plan.Resolve): tensor, pipeline and data parallelism with sequence
// parallelism (a tensor-parallel degree per pipeline stage where
// stage-tp says so), micro-batches, interleaved and uneven stages,
// activation recomputation (selective, full, or full on a block of
// layers) and the distributed optimizer, costed per layer, stage and
// schedule rather than per op of every GPU (DESIGN §12; an op graph's
// strategy is decision.Strategy). Data-parallel replicas and the tensor
// ranks of a layer are identical and are costed once; a stage's
// identical layers cost one layer times their number; the kernels of a
// layer are costed by the roofline's hardware (evaluate/roofline) and
// what the pod's node measures beyond it (plan.Kernels: fused
// attention's rate, the SMs an overlapped collective takes, NCCL's bus
// bandwidths), the collectives by the pod's two-level network; each
// stack's layers by the layer costs registered under its name
// (LayerCoster). What a model family's trait or a mechanism changes of a
// layer is a plug-in of planner/families or
// planner/mechanisms, registered by name behind an extension point
// of planner/cost (whose Kernel, Phase and Shard are the
// vocabulary every cost is written in); the coster decides once, when it
// makes a shard, which registered plug-ins price its step (decide:
// cost.Shard.Priced), asks each extension point's plug-ins by its rule
// (cost.Rules) and that record, and Result.PricedBy names the record
// (eval --json's priced_by). A plan's memory (what each stage holds, the most
// loaded GPU's peak and its verdict, the caching allocator's reserve)
// is planner/memory's, which reads the plan and no time. The
// search over such plans for a model and a pod is
// planner/search, a client of EvaluateCached and FitsTight. OneGPU costs parts of a step on one GPU, their kernels
// alone, as a measurement on one GPU times them. The published tables
// and sweeps the model is checked against, and the checks, are
// planner/published, a client of this package.
//
// May import: graph/..., decision, evaluate/profile, evaluate/roofline,
// planner/..., internal/...
package planner
