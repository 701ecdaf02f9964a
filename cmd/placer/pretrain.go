package main

import (
	"fmt"
	"strings"

	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/report"
	"github.com/spf13/cobra"
)

type pretrainOptions struct {
	jobs.PretrainOptions
	flags opflags.PretrainFlags
	JSON  bool
	quiet bool
}

func init() { register(newPretrainCmd) }

func newPretrainCmd(s *streams) *cobra.Command {
	o := &pretrainOptions{}
	cmd := &cobra.Command{
		Use:   "pretrain (--workloads LIST | --graphs DIR) --gpus N --out MODEL",
		Short: "Pre-train one GO policy over many graphs, for zero-shot inference and fine-tuning",
		Long: `Pre-train one GO/GDP policy over several graphs (GDP §4.3). Each graph's
quick baselines run first and the best valid one is its reference. Every
step then picks one graph (in turn, or at random with --random), draws a
rollout of --samples decisions from one forward pass conditioned on that
graph's reference decision, evaluates them in parallel with the roofline
model, rewards each with -sqrt(step / reference step) (-10 when it does not
fit) and runs a per-node PPO update; one Adam optimizer serves every graph.
The first --warmup steps imitate the references instead.

The model file (--out) is written every --checkpoint-every steps, on Ctrl-C
and at the end, with its state file MODEL.state.json (step, seed, graphs,
elapsed time); --resume MODEL continues from it (with the checkpoint's seed,
up to --steps in total). 'placer infer' and 'placer finetune' use the model.

With --workers K --rounds DIR the steps (with --scored, the visits) run in
synchronous rounds that any number of processes (on one machine, or a
cluster's array tasks) share through DIR: each round's K steps start from
the same model (the GO policy with its Adam state, or the head), the next
model is their mean (docs/cluster.md). The cells are the steps:
--list-cells prints them (JSON lines: index, round, file) and runs
nothing; --cell I runs step I only (helping with the rounds before its
own while they are not done), and so does a task of a Slurm job array or
a Kubernetes Indexed Job without --cell (SLURM_ARRAY_TASK_ID,
JOB_COMPLETION_INDEX); the cell that ends the last round writes --out.
'placer cluster slurm -- pretrain ...' writes the array.`,
		Example: `  placer workloads synth --family all --count 24 --seed 1 -o synth/
  placer pretrain --workloads trxl2,wavenet2x18,rnnlm2 --graphs synth/train --gpus 2 --policy small --steps 300 --out m.policy
  placer pretrain --workloads all --hold-out gnmt --gpus 4 --time 1h --out m.policy
  placer pretrain --workloads trxl2 --gpus 2 --resume m.policy --steps 600 --out m.policy`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.flags.LRGiven = cmd.Flags().Changed("lr")
			o.flags.Out = s.Out
			if err := opflags.ParsePretrain(&o.PretrainOptions, o.flags); err != nil {
				return err
			}
			if o.ListCells != nil {
				_, err := jobs.Pretrain(cmd.Context(), o.PretrainOptions)
				return err
			}
			if !o.quiet {
				o.Progress = s.Err
				bar := &lazyBar{w: s.Err, what: "pretrain"}
				o.OnStep = func(pt gdp.PretrainPoint, steps int) { bar.step(steps, pt.Step, pretrainStep(pt)) }
				defer bar.finish()
			}
			rep, err := jobs.Pretrain(cmd.Context(), o.PretrainOptions)
			s.kept = "nothing trained yet, no model written"
			if rep.Model != "" {
				s.kept = fmt.Sprintf("model so far written to %s (continue with --resume %s)", rep.Model, rep.Model)
			}
			return emit(s, o.JSON, rep, func() error { return writePretrain(s, rep) }, err, rep.Model == "")
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.flags.Workloads, "workloads", "", "built-in workloads to train on, comma-separated ('all' = every one; placer workloads list)")
	f.StringVar(&o.GraphsDir, "graphs", "", "also train on the graphs of `LIST`, comma-separated folders (searched recursively; e.g. from placer workloads synth) and files: native JSON graphs and imported formats (msr-fiddle's, say)")
	f.StringVar(&o.HoldOut, "hold-out", "", "leave out every graph of this `FAMILY` (a workload family, or er, ba, ws, sbm)")
	opflags.Cluster(cmd.Flags(), &o.Cluster)
	f.Lookup("gpus").Usage = "number of GPUs every graph is placed on (required, 1 to 8)"
	f.IntSliceVar(&o.ExtraGPUs, "extra-gpus", nil, "also train every graph on these GPU counts, comma-separated (as graph NAME@N)")
	f.StringVar(&o.Tasks, "tasks", "placement,scheduling,fusion", "what to learn: any of placement, scheduling, fusion")
	f.BoolVar(&o.Sync, "sync-transfers", false, "REGAL's model: a transfer blocks its sender and receiver")
	f.IntVar(&o.Steps, "steps", 0, "total steps, warm-up included and across --resume (default 200, or unlimited with --time)")
	f.DurationVar(&o.Time, "time", 0, "stop after this wall time (e.g. 5m)")
	f.Uint64Var(&o.Seed, "seed", 0, "random seed: same seed, same model (ignored with --resume: the checkpoint's)")
	f.IntVar(&o.Samples, "samples", 16, "decisions sampled per step (the rollout size K)")
	f.IntVar(&o.Warmup, "warmup", 0, "imitation steps on the references before PPO (default 30 per graph; -1 = none)")
	f.BoolVar(&o.Random, "random", false, "pick each step's graph at random (seeded) instead of in turn")
	f.BoolVar(&o.Scored, "scored", false, "train go-scored's move head: each step one visit, a go-scored run of --visit-evals evaluations on one graph from its reference, in turn; --out is the head's file")
	f.IntVar(&o.flags.VisitEvals, "visit-evals", 2000, "with --scored: evaluations per visit")
	f.IntVar(&o.Workers, "workers", 0, "synchronous rounds of `K` steps (visits with --scored), each from the round's model, the next model their mean; any number of processes started with the same command share the rounds through --rounds (same seed and K, same model; 1 = the model of one process)")
	f.StringVar(&o.Rounds, "rounds", "", "with --workers: the `DIR` every worker shares (the rounds, each step's claim; the checkpoint to go on from)")
	f.BoolVar(&o.flags.ListCells, "list-cells", false, "with --workers: list the cells (one per visit) as JSON lines (index, round, method, budget, seed, file) and run nothing")
	f.StringVar(&o.flags.Cell, "cell", "", "with --workers: run cell `I` (visit I) only; default: SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX when set, else every visit left ('all': every visit whatever the environment says)")
	f.DurationVar(&o.Lease, "lease", 0, "with --workers: a step's claim lasts this long unless renewed; a dead worker's step is taken over after it (default 1m)")
	opflags.BindTrain(cmd.Flags(), &o.flags.Train)
	f.IntVar(&o.CheckpointEvery, "checkpoint-every", 50, "write the model every `N` steps (and on Ctrl-C and at the end)")
	f.StringVar(&o.Resume, "resume", "", "continue from a checkpoint `FILE` (a model and its .state.json)")
	f.StringVarP(&o.Out, "out", "o", "", "the model `FILE` to write")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}

func writePretrain(s *streams, rep jobs.PretrainReport) error {
	var rows [][]string
	for _, g := range rep.Graphs {
		ref, step := g.Reference, report.Seconds(g.RefStep)
		switch {
		case g.Skipped != "":
			ref, step = "skipped: "+g.Skipped, "-"
		case ref == "":
			ref, step = "none valid", "-"
		}
		rows = append(rows, []string{g.Name, g.Family, fmt.Sprint(g.Ops), fmt.Sprint(g.Devices), ref, step})
	}
	if err := report.Table(s.Out, []string{"graph", "family", "ops", "GPUs", "reference", "reference step"}, rows); err != nil {
		return err
	}
	if len(rep.HeldOut) > 0 {
		fmt.Fprintf(s.Out, "held out: %s\n", strings.Join(rep.HeldOut, ", "))
	}
	fmt.Fprintf(s.Out, "pretrain: %d steps in %s, seed %d (%s)\n", rep.Steps, report.Seconds(rep.Elapsed), rep.Seed, rep.Status)
	if rep.Model != "" {
		fmt.Fprintf(s.Out, "model written to %s (state %s)\n", rep.Model, rep.State)
	}
	return nil
}
