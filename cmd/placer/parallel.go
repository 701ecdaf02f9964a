package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/cellflags"
	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs/reports"
	"github.com/placer/placer/methods/anchored"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/placements"
	"github.com/spf13/cobra"
)

type parallelOptions struct {
	reports.ParallelOptions
	flags       parallelFlags
	JSON, quiet bool
}

func newReportParallelCmd(s *streams) *cobra.Command {
	o := &parallelOptions{}
	cmd := &cobra.Command{
		Use:   "parallel [--graphs LIST] [--gpus-list LIST] [--topologies LIST] [--evals N | --cpu DURATION] [--dir DIR]",
		Short: "The strategies users run (ddp, fsdp, gpipe, 1f1b, pipedream) against placer's answer, per model, GPU count and topology",
		Long: `For each model, GPU count and topology (one cell each), the comparison of
strategies a user would run, at the same global batch, in placer's roofline
model: one GPU (single), the best single-replica placement of the quick
baselines, ddp, fsdp, gpipe, 1f1b, pipedream and placer's answer, what
'placer search' returns with the cell's budget (--evals N or --cpu T): it
searches the joint space of strategies and placements (replicas, micro-
batches, schedule, sharding and DDP's bucket around a searched placement,
order and fusion of one replica).

One row per cell and strategy: step time, its ratio to the fastest user
strategy that fits, the largest peak memory per GPU, whether it fits,
what it chose (the decision's strategy and the GPUs one replica uses)
and, for placer, which row its answer is. Then per GPU count and topology
the geometric mean of placer's ratio and the cells where it is not at
least 5% faster.

Graphs default to the zoo (out/zoo/NAME.json, make zoo); --graphs takes
workload names, graph files or zoo names. With --dir every finished cell
is kept and a rerun skips it; --no-run prints the table of the cells one
or several processes kept there.`,
		Example: `  # The zoo at 2, 4 and 8 V100s over NVSwitch and PCIe (make zoo first),
  # a minute of CPU per cell's search:
  placer report parallel --cpu 60s --dir out/parallel --plot out/parallel/ratio.svg

  # Two small built-in graphs, a short search:
  placer report parallel --graphs wavenet2x18 --gpus-list 2,4 --topologies pcie --evals 200`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPlottedReport(cmd, s, plottedReport[placements.Parallel]{
				parse:    func() error { return parseParallelFlags(&o.ParallelOptions, o.flags) },
				progress: &o.Progress, quiet: o.quiet, json: o.JSON, work: &o.Work,
				run: func(ctx context.Context) (placements.Parallel, error) {
					return reports.Parallel(ctx, o.ParallelOptions)
				},
				plot: o.flags.Plot, writePlot: placements.WriteParallelPlot, write: placements.WriteParallel,
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.flags.Graphs, "graphs", "", "`LIST` of workloads, graph files or zoo models, comma-separated (default: "+reports.ParallelZooDir+"/{"+strings.Join(reports.ParallelZoo, ", ")+"}.json)")
	f.StringVar(&o.flags.GPUs, "gpus-list", "2,4,8", "`LIST` of GPU counts, comma-separated (2 to 64)")
	f.StringVar(&o.flags.Topologies, "topologies", "nvswitch,pcie", "`LIST` of topologies, comma-separated: "+strings.Join(roofline.Topologies, ", "))
	f.StringVar(&o.Hardware, "hardware", roofline.DefaultHardware, fmt.Sprintf("hardware `PRESET|FILE`: one of %s, or a profile file", strings.Join(roofline.Presets(), ", ")))
	f.IntVar(&o.Evals, "evals", 0, fmt.Sprintf("placer's search budget per cell, in evaluations (default %d; none with --cpu alone)", reports.DefaultParallelEvaluations))
	f.DurationVar(&o.CPU, "cpu", 0, "placer's search budget per cell, in CPU time of its process (e.g. 60s); with --evals, whichever is spent first")
	f.Uint64Var(&o.Seed, "seed", 0, "random seed: same seed, same table")
	f.StringVar(&o.Dir, "dir", "", "keep every finished cell in `DIR`; a rerun skips them")
	f.BoolVar(&o.NoRun, "no-run", false, "run nothing: the table of the cells --dir keeps (several processes' dirs merged into one)")
	f.StringVar(&o.flags.Plot, "plot", "", "plot placer's step / the best user strategy's per model, GPU count and topology to `FILE` (.png, .svg or .pdf)")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	addCellFlags(cmd, &o.flags.Cells, s)
	return cmd
}

// parallelFlags are the parallel report's flags besides
// reports.ParallelOptions' own.
type parallelFlags struct {
	Graphs, GPUs, Topologies string // comma-separated lists
	Plot                     string // --plot FILE, checked here, drawn by the CLI
	Cells                    cellflags.Flags
}

// parseParallelFlags fills o's lists from f and checks every input (the
// values reports.ParallelOptions.Check checks, as usage errors naming their
// flags, in its order).
func parseParallelFlags(o *reports.ParallelOptions, f parallelFlags) error {
	o.Graphs = opflags.SplitList(f.Graphs)
	for _, s := range opflags.SplitList(f.GPUs) {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(s), "%d", &n); err != nil || fmt.Sprint(n) != strings.TrimSpace(s) {
			return fail.Usagef("--gpus-list %q: want GPU counts, comma-separated, e.g. 2,4,8", f.GPUs)
		}
		o.GPUs = append(o.GPUs, n)
	}
	for _, t := range opflags.SplitList(f.Topologies) {
		o.Topologies = append(o.Topologies, strings.ToLower(strings.TrimSpace(t)))
	}
	if f.Plot != "" {
		if err := report.CheckPlotPath(f.Plot); err != nil {
			return fail.Usagef("--plot: %v", err)
		}
	}
	if slices.Contains(o.Topologies, "") {
		return fail.Usagef("--topologies %q: an empty name", f.Topologies)
	}
	if o.Evals < 0 {
		return fail.Usagef("--evals %d: want at least 1", o.Evals)
	}
	if o.CPU < 0 {
		return fail.Usagef("--cpu %v: want a positive duration", o.CPU)
	}
	if err := opflags.CheckSearchMethod(cmp.Or(o.Method, anchored.DefaultMethod)); err != nil {
		return fail.Usagef("%v", err)
	}
	for _, n := range o.GPUs {
		if n < 2 || n > inputs.MaxGPUs {
			return fail.Usagef("--gpus-list: %d GPUs: want 2 to %d", n, inputs.MaxGPUs)
		}
	}
	switch err := o.Check(); {
	case errors.Is(err, reports.ErrNoDir):
		return fail.Usagef("--no-run reports the cells kept in --dir: give --dir")
	case errors.Is(err, reports.ErrUnknownGraph):
		return fail.Usagef("--graphs: %v", err)
	case err != nil:
		return err
	}
	var err error
	o.Work, err = f.Cells.Work(&o.Dir, o.NoRun)
	return err
}
