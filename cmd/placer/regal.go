package main

import (
	"context"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/jobs/reports"
	"github.com/placer/placer/report/placements"
	"github.com/spf13/cobra"
)

type regalOptions struct {
	reports.RegalOptions
	flags       opflags.RegalFlags
	JSON, quiet bool
}

func newReportRegalCmd(s *streams) *cobra.Command {
	o := &regalOptions{}
	cmd := &cobra.Command{
		Use:   "regal [--graphs LIST] [--methods LIST] [--objectives LIST] [--dir DIR] [--plot FILE]",
		Short: "REGAL table 1 and figure 3: % gap from the best known and improvement over BRKGA-5K, per objective",
		Long: `REGAL's comparison (ICLR'20 table 1 and figure 3; the workshop paper's table 1
and figure 2) on placer's test sets: held-out synthetic graphs (a seed a million
away from brkga-tuned's training set), the small built-in workloads and the
msr-fiddle graphs, every graph on --gpus GPUs (REGAL's 2) with --memory per
GPU, placement and scheduling decided (REGAL's chromosome), REGAL's
synchronous transfers unless --sync-transfers=false.

For each objective (peak memory: the largest per-GPU peak; step time: under
the memory limit) every method runs with the same evaluation limit
(--evaluations, REGAL's 5,000): by default gp-dfs, local-search, brkga,
brkga-tuned, and regal and regal-zero-shot when the registry has them. BRKGA
also runs at a large limit (--best-budget); the best known solution of a
graph is the best valid result of any of these runs. The table gives per
method the mean % improvement over BRKGA at --evaluations and the mean % gap
from the best known, over the graphs where every method has a valid result;
the curve (--budgets) the improvement over BRKGA-5K of the --curve-methods
as the limit grows.

With --dir every finished cell is kept (one file each, written atomically)
and a rerun with the same --dir and settings skips it.`,
		Example: `  # A few minutes: four held-out synthetic graphs, a short curve.
  placer report regal --graphs synthetic:4 --budgets 5000,10000 --dir out/regal-quick

  # The default test sets and curve (hours on 2 cores):
  placer report regal --dir out/regal --plot out/regal/curve.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPlottedReport(cmd, s, plottedReport[placements.Regal]{
				parse:    func() error { return opflags.ParseRegal(&o.RegalOptions, o.flags) },
				progress: &o.Progress, quiet: o.quiet, json: o.JSON, work: &o.Work,
				run:  func(ctx context.Context) (placements.Regal, error) { return reports.Regal(ctx, o.RegalOptions) },
				plot: o.flags.Plot, writePlot: placements.WriteRegalPlot, write: placements.WriteRegal,
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.flags.Graphs, "graphs", "", "`LIST` of test graphs, comma-separated: workloads, graph files, synthetic:N (N held-out synthetic graphs), synthetic-train:N (the training set's first N), synthetic-2x:N (N held-out graphs of 100-400 nodes, twice the training graphs), msr-fiddle:DIR (default: "+strings.Join(reports.RegalGraphs, ", ")+")")
	f.StringVar(&o.flags.Methods, "methods", "", "`LIST` of the table's methods (default: "+strings.Join(reports.RegalMethods(), ", ")+"; brkga always runs)")
	f.StringVar(&o.flags.CurveMethods, "curve-methods", "", "`LIST` of the methods run at every --budgets limit (default: "+strings.Join(reports.RegalCurveMethods(), ", ")+")")
	f.StringVar(&o.flags.Objectives, "objectives", "peak-memory,step-time", "objectives, comma-separated")
	f.IntVar(&o.Evaluations, "evaluations", 5000, "the table's evaluation limit per method and graph")
	f.StringVar(&o.flags.Budgets, "budgets", "5000,10000,20000,50000", "the curve's evaluation limits, comma-separated")
	f.IntVar(&o.BestBudget, "best-budget", 0, "evaluation limit of the large BRKGA run in the best known (default: the largest of 50000 and --budgets)")
	opflags.Cluster(cmd.Flags(), &o.Cluster)
	f.Lookup("gpus").DefValue, o.Cluster.GPUs = "2", 2
	f.Lookup("memory").DefValue, o.Cluster.Memory = "17179869184", 16<<30
	f.Lookup("memory").Usage = "device memory capacity in bytes (REGAL's 16 GiB)"
	f.StringVar(&o.Tasks, "tasks", "placement,scheduling", "what the methods decide (REGAL: placement and scheduling)")
	f.BoolVar(&o.Sync, "sync-transfers", true, "REGAL's model: a transfer blocks its sender and receiver (--sync-transfers=false for placer's asynchronous copies)")
	f.Uint64Var(&o.Seed, "seed", 0, "random seed of every run")
	f.StringVar(&o.Dir, "dir", "", "keep every finished cell in `DIR`; a rerun skips them")
	f.StringVar(&o.flags.Plot, "plot", "", "plot the curve to `FILE` (.png, .svg or .pdf)")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	f.BoolVar(&o.NoRun, "no-run", false, "run nothing: the table of the cells --dir keeps (several processes' or machines' dirs merged into one), the others counted as missing")
	addCellFlags(cmd, &o.flags.Cells, s)
	return cmd
}
