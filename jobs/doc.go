// Package jobs holds the end-to-end jobs the placer CLI runs (eval,
// baselines, search, pretrain, infer, finetune, the generalization report,
// workloads): each is a function from an options struct to a report,
// composed from inputs -> problem (cost model and evaluator, from a
// Backend: the roofline model by default, real GPUs with GPUs) -> methods
// (from the methods registry) -> report, so that cmd/placer only binds
// flags and prints. Traces come from the problem's evaluator.
//
// May import: graph/..., decision, evaluate/..., workloads/..., optimize,
// nn/..., methods/..., jobs/..., report, internal/...
package jobs
