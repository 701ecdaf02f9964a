package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/placements"
	"github.com/spf13/cobra"
)

type baselinesOptions struct {
	jobs.BaselinesOptions
	JSON  bool
	quiet bool
	out   string
	flags opflags.BaselinesFlags
}

func init() { register(newBaselinesCmd) }

func newBaselinesCmd(s *streams) *cobra.Command {
	o := &baselinesOptions{}
	cmd := &cobra.Command{
		Use:   "baselines (--graph FILE | --workload NAME) [--gpus N]",
		Short: "Compare the classical placement, scheduling and fusion methods in one table",
		Long: `Run the methods the papers measured against - single device, human expert,
round-robin, random search, METIS partitioning, GP+DFS, m-TOPO, m-ETF, local
search, simulated annealing, BRKGA and TensorFlow's defaults - on one graph and
cluster with the roofline model, and print one table: step time, speed-up over
the expert placement (over one device when no expert placement is available),
efficiency against the lower bound, peak memory, out-of-memory, search time and
evaluations (--rows DIR: every row's decision, a file each, and an index).
Search methods stop at --budget evaluations, --time (wall) or
--cpu, whichever is named and spent first (none named: 5,000 evaluations each,
REGAL's). docs/methods.md describes each method and how to choose.

Methods: ` + strings.Join(methods.Methods(), ", "),
		Example: `  placer baselines --graph examples/mlp.json --gpus 2
  placer baselines --workload gnmt8 --gpus 8 --budget 1000 --methods metis,m-etf,brkga
  placer baselines --graph g.json --gpus 4 --tasks fusion --methods tf-default,sa --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.flags.HostSet = cmd.Flags().Changed("host")
			if err := opflags.ParseBaselines(&o.BaselinesOptions, o.flags); err != nil {
				return err
			}
			if !o.quiet {
				o.Progress = s.Err
			}
			b, err := jobs.Baselines(cmd.Context(), o.BaselinesOptions)
			s.kept = "no method finished yet, nothing printed"
			if len(b.Rows) > 0 {
				s.kept = fmt.Sprintf("the %d methods finished are in the table", len(b.Rows))
			}
			if len(b.Rows) > 0 {
				var werr error
				if o.JSON {
					werr = report.JSON(s.Out, b)
				} else if werr = placements.WriteBaselines(s.Out, b); werr == nil {
					werr = placements.WriteRowsNote(s.Out, b)
				}
				if o.out != "" && werr == nil {
					werr = atomicfile.Write(o.out, func(w io.Writer) error { return report.JSON(w, b) })
				}
				if err == nil {
					err = werr
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	opflags.Graph(cmd.Flags(), &o.Graph)
	opflags.Cluster(cmd.Flags(), &o.Cluster)
	f.StringSliceVar(&o.Methods, "methods", nil, "comma-separated methods to compare (default: "+strings.Join(jobs.DefaultBaselines, ", ")+")")
	f.IntVar(&o.Budget, "budget", 0, "evaluations per search method (default: each method's, 5000 for the searches)")
	f.DurationVar(&o.Time, "time", 0, "wall-time limit per method, e.g. 30s (default: none)")
	f.DurationVar(&o.CPU, "cpu", 0, "CPU-time limit per method (this process's; the methods run one at a time), e.g. 30s (default: none)")
	f.StringVar(&o.Start, "start", "", "where local-search and sa start: random, base, m-topo, m-etf, metis, or anchored (from the best quick baseline, with the policy's moves: the anchored searches) (default: each one's)")
	f.Uint64Var(&o.Seed, "seed", 0, "random seed: same seed, same table")
	f.StringVar(&o.Tasks, "tasks", "", "what the methods may change: placement,scheduling,fusion (default: all)")
	f.BoolVar(&o.Sync, "sync-transfers", false, "REGAL's model: a transfer blocks its sender and receiver")
	opflags.Host(cmd.Flags(), &o.HostOn, &o.Dispatch)
	opflags.Objective(cmd.Flags(), &o.Objective)
	f.BoolVar(&o.JSON, "json", false, "print the report as one JSON object")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	addOut(cmd, &o.out, "also write the report as JSON to `FILE`")
	f.StringVar(&o.Rows, "rows", "", "write every row's decision to folder `DIR`: DIR/METHOD.json for each row (the format of search --out, which eval and export read) and the index DIR/rows.json")
	f.BoolVar(&o.flags.Measure, "measure", false, "score every decision on this machine's GPUs instead of the roofline model (bin/placer-cuda)")
	f.IntVar(&o.flags.Repeats, "repeats", 5, "timed runs per measured decision, with --measure")
	return cmd
}
