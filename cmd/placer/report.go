package main

import (
	"fmt"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/jobs/reports"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/report/placements"
	"github.com/spf13/cobra"
)

func init() { register(newReportCmd) }

// newReportCmd is the parent of the experiment reports.
func newReportCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Experiments of the papers, run end to end as one table and plot",
		Args:  cobra.NoArgs,
		// Runnable, so that an unknown report is a usage error (exit 2)
		// rather than the help.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newReportGeneralizationCmd(s))
	cmd.AddCommand(newReportEqualTimeCmd(s))
	cmd.AddCommand(newReportParallelCmd(s))
	cmd.AddCommand(newReportMegatronCmd(s))
	cmd.AddCommand(newReportSweepsCmd(s))
	cmd.AddCommand(newReportBenchCmd(s))
	cmd.AddCommand(newReportLayersCmd(s))
	cmd.AddCommand(newReportLearnedCmd(s))
	cmd.AddCommand(newReportRegalCmd(s))
	return cmd
}

type generalizationOptions struct {
	reports.GeneralizationOptions
	flags opflags.GeneralizationFlags
	JSON  bool
	quiet bool
}

func newReportGeneralizationCmd(s *streams) *cobra.Command {
	o := &generalizationOptions{}
	cmd := &cobra.Command{
		Use:   "generalization [--families LIST] [--gpus N] [--dir DIR] [--plot FILE]",
		Short: "Each family held out in turn: expert, best baseline, GO-one, zero-shot and fine-tuned (GDP fig. 2)",
		Long: `The transfer experiment of GDP (fig. 2) and GO (fig. 5). Each family is held
out in turn: one policy is pre-trained (as 'placer pretrain') on the
training graphs of the other families, by default the smallest built-in
workload of each (` + strings.Join(reports.GeneralizationTrain(), ", ") + `).
Then on the held-out family's test graph (by default that smallest
workload; --test FAMILY=NAME|FILE changes it) on --gpus GPUs: the quick
baselines (the expert placement and the best baseline), GO-one ('placer
search': a policy trained from scratch on that graph alone), zero-shot
('placer infer' with the pre-trained model) and fine-tuning ('placer
finetune', --finetune-steps from the pre-trained model). Every policy has
the --policy network.

The table has one row per family with the step times, the speed-ups over
the expert placement, fine-tuned / GO-one and the wall times; a last row
of geometric means; and the two claims of the papers (zero-shot beats the
expert on average; fine-tuned lands within 5% of GO-one on average) as
measured, true or false. --plot draws the speed-ups as grouped bars.

A run takes long: with --dir every finished family's result, pre-trained
model and result files are kept there, and a rerun with the same --dir
skips the finished families (Ctrl-C keeps them; an interrupted family's
pre-training resumes from its checkpoint). Same seed, same table, wall
times aside.`,
		Example: `  # Under a minute: two families, small budgets.
  placer report generalization --families trxl,wavenet --train trxl2,wavenet2x18,rnnlm2 \
      --pretrain-steps 40 --search-steps 8 --finetune-steps 8 --samples 8 --dir gen-quick

  # The full recipe (make generalization; about 20 minutes on 2 cores):
  placer report generalization --gpus 2 --seed 1 --pretrain-steps 300 --search-steps 100 \
      --finetune-steps 50 --dir out/generalization --plot out/generalization/generalization.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.flags.PretrainStepsGiven, o.flags.SearchStepsGiven = cmd.Flags().Changed("pretrain-steps"), cmd.Flags().Changed("search-steps")
			if err := opflags.ParseGeneralization(&o.GeneralizationOptions, o.flags); err != nil {
				return err
			}
			bars := &phaseBars{w: s.Err}
			if !o.quiet {
				o.Progress = bars
				o.OnPretrainStep = func(fam string, pt gdp.PretrainPoint, steps int) {
					bars.step(fam+" pretrain", steps, pt.Step, pretrainStep(pt))
				}
				o.OnSearchStep = func(fam, phase string, pt gdp.Point, ref float64, steps int) {
					bars.step(fam+" "+phase, steps, pt.Step, searchStep(pt, ref))
				}
			}
			rep, err := reports.Generalization(cmd.Context(), o.GeneralizationOptions)
			if o.Work.Listing() {
				return err
			}
			bars.finish() // before the table
			s.kept = fmt.Sprintf("the %d families finished are in the table", len(rep.Rows))
			if len(rep.Rows) == 0 {
				s.kept = "no family finished yet, nothing printed"
			}
			if o.Dir != "" {
				s.kept += "; a rerun with --dir " + o.Dir + " skips the families finished there"
			}
			return emit(s, o.JSON, rep, func() error { return writeGeneralization(s, rep) }, err, len(rep.Rows) == 0)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.flags.Families, "families", "", "`LIST` of families to hold out in turn, comma-separated (default: "+strings.Join(reports.GeneralizationFamilies(), ", ")+")")
	f.StringVar(&o.flags.Train, "train", "", "`LIST` of built-in workloads to pre-train on, comma-separated; each run leaves out the held-out family's ('none' = only --graphs; default: "+strings.Join(reports.GeneralizationTrain(), ",")+")")
	f.StringVar(&o.GraphsDir, "graphs", "", "also pre-train on every native JSON graph under `DIR` (a file named FAMILY-... is left out when FAMILY is held out)")
	f.StringToStringVar(&o.Test, "test", nil, "test graph of a held-out family, `FAMILY=GRAPH` with GRAPH a workload name or a graph file, e.g. gnmt=gnmt4 (default: the family's smallest workload; repeat or comma-separate for more)")
	f.Lookup("test").DefValue = ""
	opflags.Cluster(cmd.Flags(), &o.Cluster)
	f.Lookup("gpus").Usage = "number of GPUs every graph is placed on (1 to 8)"
	f.Lookup("gpus").DefValue = "2"
	o.Cluster.GPUs = 2
	f.StringVar(&o.Tasks, "tasks", "placement,scheduling,fusion", "what to learn: any of placement, scheduling, fusion")
	f.BoolVar(&o.Sync, "sync-transfers", false, "REGAL's model: a transfer blocks its sender and receiver")
	f.Uint64Var(&o.Seed, "seed", 0, "random seed of every phase: same seed, same table")
	f.IntVar(&o.Samples, "samples", 16, "decisions sampled per step (the rollout size K), and by zero-shot besides its most likely one")
	f.StringVar(&o.flags.Policy, "policy", "small", "network of every policy: default, small, or a JSON `FILE` of policy.Config fields")
	f.IntVar(&o.PretrainSteps, "pretrain-steps", 300, "pre-training steps per family, warm-up included (unlimited when only --pretrain-time is given)")
	f.DurationVar(&o.PretrainTime, "pretrain-time", 0, "pre-training wall time per family (e.g. 5m)")
	f.IntVar(&o.Warmup, "warmup", 0, "pre-training imitation steps (default 30 per training graph; -1 = none)")
	f.IntVar(&o.SearchSteps, "search-steps", 100, "GO-one PPO steps (unlimited when only --search-time is given)")
	f.DurationVar(&o.SearchTime, "search-time", 0, "GO-one wall time (e.g. 2m)")
	f.IntVar(&o.FinetuneSteps, "finetune-steps", 50, "fine-tuning PPO steps")
	f.StringVar(&o.Dir, "dir", "", "keep each family's model and results in `DIR`; a rerun skips the families finished there")
	f.StringVar(&o.Plot, "plot", "", "plot the speed-ups over expert as grouped bars to `FILE` (.png, .svg or .pdf)")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	addCellFlags(cmd, &o.flags.Cells, s)
	return cmd
}

func writeGeneralization(s *streams, rep reports.GeneralizationReport) error {
	if err := placements.WriteGeneralization(s.Out, rep.Generalization); err != nil {
		return err
	}
	if len(rep.Resumed) > 0 {
		fmt.Fprintf(s.Out, "read back from %s: %s\n", rep.Dir, strings.Join(rep.Resumed, ", "))
	}
	if rep.Dir != "" {
		fmt.Fprintf(s.Out, "models and results in %s\n", rep.Dir)
	}
	if rep.Plot != "" {
		fmt.Fprintf(s.Out, "plot written to %s\n", rep.Plot)
	}
	return nil
}
