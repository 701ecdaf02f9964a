package main

import (
	"context"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/jobs/reports"
	"github.com/placer/placer/report/placements"
	"github.com/spf13/cobra"
)

type equalTimeOptions struct {
	reports.EqualTimeOptions
	flags       opflags.EqualTimeFlags
	JSON, quiet bool
}

func newReportEqualTimeCmd(s *streams) *cobra.Command {
	o := &equalTimeOptions{}
	cmd := &cobra.Command{
		Use:   "equal-time [--graphs LIST] [--methods LIST] [--budgets LIST] [--dir DIR]",
		Short: "Every method at the same wall time on each graph, against the best quick baseline (the honest bar)",
		Long: `The equal-budget comparison a skeptical reader asks for (DESIGN §9): on each
graph (by default the 14 of GO's table 2, each on its table's GPU count), the
quick baselines run first (with their orders on TensorFlow's default placement
and their best decisions for N/2, N/4 ... GPUs, which are valid on N); the best
valid one is the graph's reference and the anchor of the methods that take one.
Then every method gets the same wall time per graph, for each budget: the
classical searches, BRKGA, go (the GO policy with PPO) and go-no-learning (the
ablation: the same sampling around the anchor with the network never updated;
an untrained network is its control). go-zero-shot and
go-scored-pretrained-network read a pre-trained network (--model, from
'placer pretrain'; default the embedded model).

One table per budget: a row per graph with each method's step time over the
reference (lower is better), the geometric mean over the graphs where every
method has a valid decision, the mean CPU seconds (all threads of this
process), and the claims measured: on how many graphs the lead method
(--lead, go-scored by default) is ahead of each method and by how much,
and whether learning beats no learning.

A full run takes budgets x methods x graphs of wall time (hours): with --dir
every finished cell is kept and a rerun with the same --dir and --seed skips
it (Ctrl-C keeps what finished).`,
		Example: `  # A few minutes: two graphs, one short budget.
  placer report equal-time --graphs trxl2,rnnlm2 --budgets 20s --dir eq-quick

  # The issue's full measurement (about 14 x 7 x 36 minutes):
  placer report equal-time --budgets 1m,5m,30m --dir out/equal-time --plot out/equal-time/curves.svg

  # Three draws of every cell (seeds 0, 1, 2): each cell their geometric mean, the
  # claims counted per graph and per run, and each method's seed-to-seed spread:
  placer report equal-time --cpu --graphs trxl4,gnmt4 --budgets 30s --seeds 0,1,2 --dir eq-seeds

  # One process per graph and method (CPU-time budgets), then the table of them all:
  placer report equal-time --cpu --graphs gnmt4 --methods go-scored --budgets 5m --dir cells/gnmt4.go-scored
  placer report equal-time --cpu --budgets 5m --dir merged --no-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPlottedReport(cmd, s, plottedReport[placements.EqualTime]{
				parse: func() error {
					o.flags.SeedGiven = cmd.Flags().Changed("seed")
					return opflags.ParseEqualTime(&o.EqualTimeOptions, o.flags)
				},
				progress: &o.Progress, quiet: o.quiet, json: o.JSON, work: &o.Work,
				run: func(ctx context.Context) (placements.EqualTime, error) {
					return reports.EqualTime(ctx, o.EqualTimeOptions)
				},
				plot: o.flags.Plot, writePlot: placements.WriteEqualTimePlot, write: placements.WriteEqualTime,
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.flags.Graphs, "graphs", "", "`LIST` of workloads or graph files, comma-separated (default: "+strings.Join(reports.EqualTimeGraphs, ", ")+")")
	f.StringVar(&o.flags.Methods, "methods", "", "`LIST` of methods, comma-separated (default: "+strings.Join(reports.EqualTimeMethods(), ", ")+")")
	f.StringVar(&o.flags.Budgets, "budgets", "1m,5m,30m", "wall-time budgets per method and graph, comma-separated")
	f.BoolVar(&o.CPU, "cpu", false, "the budgets are CPU time of placer's process (all threads), not wall time: the fair budget on a machine shared with other work")
	opflags.Cluster(cmd.Flags(), &o.Cluster)
	f.Lookup("gpus").Usage = "number of GPUs (default: each workload's GO table-2 count)"
	f.Uint64Var(&o.Seed, "seed", 0, "random seed: same seed, same decisions (wall-time budgets make step counts vary)")
	f.StringVar(&o.flags.Seeds, "seeds", "", "`LIST` of seeds, comma-separated: the whole report once per seed (kept in DIR/seed-N), each cell the geometric mean of its seeds, the claims counted per graph and per run")
	f.BoolVar(&o.Sync, "sync-transfers", false, "REGAL's model: a transfer blocks its sender and receiver")
	opflags.Objective(cmd.Flags(), &o.Objective)
	f.StringVar(&o.Model, "model", "", "the pre-trained model `FILE` of go-zero-shot and go-scored-pretrained-network (default: the embedded default model)")
	f.StringVar(&o.Head, "head", "", "go-scored's pre-trained move head `FILE` (placer pretrain --scored) for go-scored-pretrained and go-scored-zero-shot (default: the embedded default head)")
	f.StringVar(&o.Dir, "dir", "", "keep every finished cell in `DIR`; a rerun skips them")
	f.BoolVar(&o.NoRun, "no-run", false, "run nothing: the table of the cells --dir keeps (several processes' or machines' dirs merged into one), the others counted as missing")
	f.BoolVar(&o.Cascade, "cascade", false, "a graph also listed on fewer GPUs before it (gnmt4@2,gnmt4) starts each method from that method's result there: never worse with more GPUs (the fewer-GPU run's budget is not counted)")
	f.StringVar(&o.Lead, "lead", "", "the `METHOD` the claims are about (ahead of each other method, its margin; default go-scored when listed, else go)")
	f.StringVar(&o.flags.Plot, "plot", "", "plot to `FILE` (.png, .svg or .pdf): each method's geometric mean against the budget, or with one budget bars per graph")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	addCellFlags(cmd, &o.flags.Cells, s)
	return cmd
}
