// Package jobs holds the end-to-end jobs the placer CLI runs (eval,
// baselines, search, pretrain, infer, finetune, the cluster-scale plans,
// workloads): each a function from an options struct to a report, composed
// from inputs -> problem (cost model and evaluator, from a Backend: the
// roofline model by default, real GPUs with GPUs) -> methods (from the
// methods registry) -> report, so that cmd/placer only binds flags and
// prints. Traces come from the problem's evaluator. The report grids
// (equal-time, learned, regal, parallel, generalization) are table
// definitions on one runner, jobs/grid, in jobs/reports, which runs these
// jobs (Setup, QuickReference, Search, Pretrain, Infer, Finetune) in its
// cells; nothing here imports it. Running a report's cells as a cluster's
// array job (Slurm, Kubernetes) is jobs/launch's. placer profile's job,
// which measures what --profile reads, is jobs/profile's (it imports
// nothing of this package; the jobs here read the file it writes). placer
// export's job is jobs/export's, with the rules eval and search share with
// it (where a plan comes from, --gpus with a strategy's replicas, the
// train-mode line). placer tune-brkga's job is jobs/tunebrkga's, a client
// of the setup here; regal train's and imitate's are jobs/regaltrain's.
//
// The CLI's side of each job (its flags, their parsing and the usage errors
// that name them) is cmd/placer's: the options here take values, and an
// error here says what is wrong with a value, not which flag gave it. Where
// the CLI must tell one error from another, the package that makes it
// returns a typed error: a cluster job's cells without a time limit
// (launch.NoTimeError), report parallel's unknown graph or missing folder.
//
// May import: graph/..., decision, evaluate/..., planner/..., workloads/...,
// optimize, nn/..., methods/..., inputs, jobs/grid, jobs/export, report/..., internal/...
package jobs
