package main

import (
	"fmt"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/jobs/reports"
	"github.com/placer/placer/report/placements"
	"github.com/spf13/cobra"
)

type learnedOptions struct {
	reports.LearnedOptions
	flags       opflags.LearnedFlags
	plotDir     string
	JSON, quiet bool
}

func newReportLearnedCmd(s *streams) *cobra.Command {
	o := &learnedOptions{}
	cmd := &cobra.Command{
		Use:   "learned [--graphs LIST] [--methods LIST] [--budgets LIST] [--dir DIR] [--plot-dir DIR]",
		Short: "The learned placers (rl17, hdp, go) at the same time on each graph: step time, time to beat the expert, learning curves",
		Long: `The comparison the learned-placement papers make: on each graph (by
default rnnlm2, rnnlm4, gnmt2, gnmt4, trxl2, inception_b32 and amoebanet, each
on GO table 2's GPU count), every method gets the same wall time (or CPU time,
--cpu) per graph, for each budget: rl17 (the 2017 RL placer) and hdp (its
hierarchical successor) start from nothing, as their papers do; go is anchored
on the graph's reference, the best quick baseline (computed once per graph,
outside the budgets, as in equal-time).

One table per budget, a row per graph and method: the step time reached, its
ratio to the expert placement's (the expert row of 'placer baselines'; graphs
without one say so), the time to beat the expert (the first point of the
method's learning curve below the expert's step time, in the budget's kind of
time; "never" if none), the evaluations and the CPU seconds. Then the papers'
claims as measured: on how many graphs go is ahead of hdp and the geometric
mean of go's step over hdp's, and whether go reaches hdp's final step time in
a fifteenth of the budget.

--plot-dir writes one plot per graph and budget: the best step time so far of
every method against time, the expert and the reference as dashed lines.

A full run takes budgets x methods x graphs of time: with --dir every
finished cell (curve included) is kept and a rerun with the same --dir and
--seed skips it (Ctrl-C keeps what finished); the plots are redrawn from them.
Several processes may share one --dir, each with its own --graphs (each
graph's cells are files of their own): a last run with --no-run over all
the graphs then reads every kept cell, runs none, and prints the whole
table, the claims and the plots.`,
		Example: `  # A few minutes: one graph, one short CPU-time budget.
  placer report learned --graphs rnnlm2 --budgets 30s --cpu --dir learned-quick --plot-dir learned-quick/plots

  # The issue's measurement (7 graphs x 3 methods x 50 minutes):
  placer report learned --budgets 5m,15m,30m --dir out/learned --plot-dir out/learned/plots

  # The same, one process per graph at once, then the summary of them all:
  for g in rnnlm2 rnnlm4 gnmt2 gnmt4 trxl2 inception_b32 amoebanet; do
    GOMAXPROCS=2 placer report learned --graphs $g --budgets 5m,15m,30m --cpu --dir out/learned -q > out/learned-$g.txt &
  done; wait
  placer report learned --budgets 5m,15m,30m --cpu --dir out/learned --no-run --plot-dir out/learned/plots`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opflags.ParseLearned(&o.LearnedOptions, o.flags); err != nil {
				return err
			}
			if !o.quiet {
				o.Progress = s.Err
			}
			rep, err := reports.Learned(cmd.Context(), o.LearnedOptions)
			if o.Work.Listing() {
				return err
			}
			if o.plotDir != "" {
				files, perr := placements.WriteLearnedPlots(o.plotDir, o.flags.PlotFormat, rep)
				if perr != nil && err == nil {
					err = perr
				}
				if len(files) > 0 && !o.quiet {
					fmt.Fprintf(s.Err, "%d plots written to %s\n", len(files), o.plotDir)
				}
			}
			return emit(s, o.JSON, rep, func() error { return placements.WriteLearned(s.Out, rep) }, err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.flags.Graphs, "graphs", "", "`LIST` of workloads or graph files, comma-separated (default: "+strings.Join(reports.LearnedGraphs, ", ")+")")
	f.StringVar(&o.flags.Methods, "methods", "", "`LIST` of methods, comma-separated (default: "+strings.Join(reports.LearnedMethods(), ", ")+")")
	f.StringVar(&o.flags.Budgets, "budgets", "5m,15m,30m", "wall-time budgets per method and graph, comma-separated")
	f.BoolVar(&o.CPU, "cpu", false, "the budgets are CPU time of placer's process (all threads), not wall time: the fair budget on a machine shared with other work")
	opflags.Cluster(cmd.Flags(), &o.Cluster)
	f.Lookup("gpus").Usage = "number of GPUs (default: each workload's GO table-2 count)"
	f.Uint64Var(&o.Seed, "seed", 0, "random seed: same seed, same decisions (time budgets make step counts vary)")
	f.BoolVar(&o.Sync, "sync-transfers", false, "REGAL's model: a transfer blocks its sender and receiver")
	f.StringVar(&o.Dir, "dir", "", "keep every finished cell in `DIR`; a rerun skips them")
	f.BoolVar(&o.NoRun, "no-run", false, "run no cell: report the cells kept in --dir (missing ones are counted), e.g. after one process per graph")
	f.StringVar(&o.plotDir, "plot-dir", "", "write one learning-curve plot per graph and budget to `DIR` (<graph>@<GPUs>-<budget>s.<format>)")
	f.StringVar(&o.flags.PlotFormat, "plot-format", "svg", "format of the plots: png, svg or pdf")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON (cells with their curves)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	addCellFlags(cmd, &o.flags.Cells, s)
	return cmd
}
