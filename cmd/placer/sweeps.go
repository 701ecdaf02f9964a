package main

import (
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/report/plans"
	"github.com/spf13/cobra"
)

func newReportSweepsCmd(s *streams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sweeps [--json]",
		Short: "Published sweeps (one model, several plans, measured side by side): placer's prediction of each plan and its order",
		Long: `Each published sweep placer is checked on: one model run under several plans
on one cluster and one software stack, measured side by side (torchtitan's
H100 benchmarks of December 2024, tables 1 to 6, and its A100 tables of
2024; Megatron-Core's MoE model zoo's Qwen3-235B-A22B runs on 256 H100s;
Korthikanti et al.'s full against selective recomputation, 22B to 1T on
A100s; Megatron-Core's MoE README's order of two Mixtral 8x7B mappings,
published as an order only; Megatron-Bridge's DGX-H100 rows across its
releases 25.09 to 26.06). For every row: the figure as
published, placer's reading of the plan (--workload, --cluster, --strategy:
placer eval of them prints the row's prediction), the prediction in the
sweep's unit and its error, or why placer cannot write the plan; for every
sweep, Spearman's rank correlation of measured and predicted, the mean
|error|, and whether placer orders every pair as measured. What a user acts
on is the order: a sweep is a test of it (docs/cluster-scale.md, "Sweeps").`,
		Example: `  placer report sweeps
  placer report sweeps --json > sweeps.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := sweepsReport(cmd.Context())
			return emit(s, asJSON, rep, func() error { return plans.WriteSweeps(s.Out, rep) }, err, true)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON: every sweep, every row")
	return cmd
}

// sweepsReport computes report sweeps' report (jobs.Sweeps); a test that
// draws one report twice (with and without --wide) computes it once.
var sweepsReport = jobs.Sweeps
