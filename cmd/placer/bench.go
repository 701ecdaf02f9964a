package main

import (
	"github.com/placer/placer/jobs/benchreport"
	"github.com/placer/placer/report/plans"
	"github.com/spf13/cobra"
)

func newReportBenchCmd(s *streams) *cobra.Command {
	var asJSON bool
	var opts benchreport.BenchOptions
	cmd := &cobra.Command{
		Use:   "bench [--json] [--show-validation]",
		Short: "The bench of real runs (MLPerf Training v3.0-v4.1 and the published sweeps): development and validation parts apart",
		Long: `Every MLPerf Training submission of GPT-3 175B pretraining and Llama 2 70B
LoRA fine-tuning on NVIDIA GPUs of rounds v3.0 to v4.1 (measurements/mlperf/
runs.csv: the plan and recipe of each from its config scripts, its step time
from its result logs), each read as placer eval's workload, cluster and
strategy and predicted, and the published sweeps placer report sweeps
predicts. The bench is split by a rule chosen before any prediction: the
validation part is MLPerf round v4.1 whole and torchao's float8 table; every
other row is the development part, on which mechanisms are chosen. The two
parts' figures are printed apart: the mean |error| of the step, Spearman's
rank correlation within each sweep of three plans or more (MLPerf: one round,
one benchmark, one GPU), and the plans that ran but are told over memory.
The validation part is printed as aggregates only, its rows with
--show-validation. A row placer cannot write says why, in one line, counted.`,
		Example: `  placer report bench
  placer report bench --json > bench.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := benchReport(cmd.Context(), opts)
			return emit(s, asJSON, rep, func() error { return plans.WriteBench(s.Out, rep) }, err, true)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (the validation part's rows only with --show-validation)")
	cmd.Flags().BoolVar(&opts.ShowValidation, "show-validation", false, "print the validation part's rows too (a mechanism is chosen on the development part only)")
	return cmd
}

// benchReport computes report bench's report (benchreport.Bench); a test
// that draws one report twice (with and without --wide) computes it once.
var benchReport = benchreport.Bench
