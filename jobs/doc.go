// Package jobs holds the end-to-end jobs the placer CLI runs (eval,
// baselines, search, pretrain, infer, finetune, the generalization report,
// workloads): each is a function from an options struct to a report,
// composed from inputs -> problem (cost model and evaluator, from a
// Backend: the roofline model by default, real GPUs with GPUs) -> methods
// (from the methods registry) -> report, so that cmd/placer only binds
// flags and prints. Traces come from the problem's evaluator. The report
// grids (equal-time, learned, regal, generalization) are table
// definitions on one runner, jobs/grid: their cells, how one runs, and
// how the finished cells become the report's rows.
//
// The CLI's side of each job (its flags, their parsing and the usage
// errors that name them) is cmd/placer's: the options here take values,
// and an error here says what is wrong with a value, not which flag gave
// it. Where the CLI must tell one error from another (a cluster job's
// cells without a time limit, a report's unknown graph) jobs returns a
// typed or sentinel error (NoTimeError, ErrUnknownGraph, ErrNoDir).
//
// May import: graph/..., decision, evaluate/..., workloads/..., optimize,
// nn/..., methods/..., jobs/inputs, jobs/grid, report, internal/...
package jobs
