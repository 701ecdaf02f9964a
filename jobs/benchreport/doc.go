// Package benchreport is placer report bench: every MLPerf submission of
// the bench (planner/bench) read as placer eval reads its
// workload, cluster and strategy and predicted, beside the published
// sweeps placer carries (jobs.SweepsOf, as placer report sweeps predicts
// them), each in its part: the development part's and the validation
// part's figures apart, the validation part's rows left out unless asked
// for. cmd/placer's report bench is options, flags and one call here.
//
// May import: graph/..., planner, planner/..., jobs, report/plans
package benchreport
