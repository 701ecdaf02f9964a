package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/tunebrkga"
	"github.com/placer/placer/methods/brkga/tuned"
	"github.com/placer/placer/report"
	"github.com/spf13/cobra"
)

func init() { register(newTuneBRKGACmd) }

type tuneBRKGAOptions struct {
	tunebrkga.Options
	flags       opflags.BRKGATuneFlags
	JSON, quiet bool
}

func newTuneBRKGACmd(s *streams) *cobra.Command {
	o := &tuneBRKGAOptions{}
	cmd := &cobra.Command{
		Use:   "tune-brkga [--train-graphs N] [--evaluations N] [--out FILE]",
		Short: "Grid-search BRKGA's hyperparameters on REGAL's synthetic training set (the brkga-tuned method's settings)",
		Long: `REGAL's tuned-BRKGA baseline (ICLR'20 §5.2, A.10): every setting of the grid
(population size, elite and mutant fractions, crossover elite bias, the Beta
distribution of mutant genes) runs BRKGA once on each of the synthetic
training graphs (--train-graphs; placer workloads synth's generator, every family in turn,
seed ` + fmt.Sprint(jobs.RegalTrainSeed) + `; the held-out test set of 'placer report regal' takes seed
` + fmt.Sprint(jobs.RegalTestSeed) + `) at --evaluations evaluations, for each objective. A setting scores
the mean over the graphs of its objective over default BRKGA's; the lowest
wins, the default on ties. --out writes the file the brkga-tuned method embeds
(` + tuned.Path + `; make brkga-tune, then rebuild).`,
		Example: `  # The committed file (make brkga-tune):
  placer tune-brkga --train-graphs 4 --evaluations 5000 --sync-transfers --seed 0 --out methods/brkga/tuned/params.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opflags.ParseBRKGATune(&o.Options, o.flags); err != nil {
				return err
			}
			o.Command = "placer " + strings.Join(os.Args[1:], " ")
			if !o.quiet {
				o.Progress = s.Err
			}
			f, err := tunebrkga.Run(cmd.Context(), o.Options)
			if err != nil {
				return err
			}
			if o.Out != "" {
				fmt.Fprintf(s.Err, "written to %s\n", o.Out)
			}
			if o.JSON {
				return report.JSON(s.Out, f)
			}
			var rows [][]string
			for _, obj := range o.Objectives {
				t := f.Objectives[obj.String()]
				q := t.Params
				rows = append(rows, []string{obj.String(), fmt.Sprint(q.Population), fmt.Sprint(q.Elites), fmt.Sprint(q.Mutants), fmt.Sprint(q.EliteBias),
					fmt.Sprintf("Beta(%g, %g)", q.BetaAlpha, q.BetaBeta), fmt.Sprintf("%.4f", t.Score), fmt.Sprint(t.Settings)})
			}
			fmt.Fprintf(s.Out, "BRKGA tuned on %d synthetic training graphs, %d evaluations per run, %d GPUs; %s wall, %.0f CPU s\n",
				f.Graphs, f.Evaluations, f.Devices, report.Seconds(f.WallSeconds), f.CPUSeconds)
			return report.Table(s.Out, []string{"objective", "population", "elites", "mutants", "elite bias", "mutant genes", "score (default = 1)", "settings"}, rows)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Graphs, "train-graphs", 4, "number of synthetic training graphs")
	f.IntVar(&o.Evaluations, "evaluations", 5000, "evaluations per BRKGA run (the budget the tuned method is compared at)")
	f.StringVar(&o.flags.Objectives, "objectives", "step-time,peak-memory", "objectives to tune for, comma-separated")
	f.BoolVar(&o.flags.Beta, "beta", false, "also try U-shaped Beta(0.5, 0.5) mutant genes (162 settings instead of 81)")
	opflags.Cluster(cmd.Flags(), &o.Cluster)
	f.Lookup("gpus").DefValue, o.Cluster.GPUs = "2", 2
	f.Lookup("memory").DefValue, o.Cluster.Memory = "17179869184", 16<<30
	f.Lookup("memory").Usage = "device memory capacity in bytes (REGAL's 16 GiB, as placer report regal)"
	f.StringVar(&o.Tasks, "tasks", "placement,scheduling", "what BRKGA decides (as placer report regal: REGAL's placement and scheduling)")
	f.BoolVar(&o.Sync, "sync-transfers", false, "REGAL's model: a transfer blocks its sender and receiver")
	f.Uint64Var(&o.Seed, "seed", 0, "seed of every BRKGA run")
	addOut(cmd, &o.Out, "write the tuned-parameters file to `FILE`")
	f.BoolVar(&o.JSON, "json", false, "print the file as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}
