// Package reports holds placer's experiment grids, the report tables
// defined on the grid runner (jobs/grid): `placer report equal-time`
// (equaltime.go: every method on every graph at equal wall or CPU time),
// learned (learned.go: the learned methods' curves), regal (regal.go:
// REGAL table 1 and figure 3), parallel (parallel.go: placer's search
// against the strategies users run) and generalization
// (generalization.go: a family held out, pre-training, zero-shot and
// fine-tuning). Each says which cells exist, how one runs and how the
// finished cells become its rows; the runner keeps, resumes, seeds,
// times and spreads them.
//
// A cell runs the jobs of package jobs (a Problem with its quick
// reference, Search, Pretrain, Infer, Finetune) and the methods; jobs
// imports nothing of this package, and cmd/placer's report commands are
// options, flags and one call here. Where the CLI must tell one error
// from another, report parallel returns a sentinel (ErrUnknownGraph,
// ErrNoDir).
//
// May import: graph, decision, evaluate/roofline, workloads, optimize,
// methods/..., jobs, jobs/grid, inputs, report, report/placements, internal/fail,
// internal/bounded
package reports
