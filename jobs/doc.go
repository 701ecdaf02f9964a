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
// The CLI's side of each job is here too (files cli*.go): its raw flag
// values parsed and checked into the options (ParseFlags, Check: usage
// errors, exit 2), the names and defaults its flags and completions offer,
// and the types its options need from lower packages, so that cmd/placer
// imports jobs, jobs/inputs, report and internal packages only.
//
// May import: graph/..., decision, evaluate/..., workloads/..., optimize,
// nn/..., methods/..., jobs/..., report, internal/...
package jobs
