package main

import (
	"fmt"

	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/jobs/regaltrain"
	"github.com/placer/placer/methods/regal"
	"github.com/placer/placer/report"
	"github.com/spf13/cobra"
)

func init() { register(newRegalCmd) }

// newRegalCmd is the parent of REGAL's commands.
func newRegalCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "regal",
		Short: "REGAL: train the graph network that steers BRKGA's mutants (docs/regal.md)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRegalTrainCmd(s), newRegalImitateCmd(s))
	return cmd
}

// bindRegalSet binds the training-set flags of regal train and regal
// imitate to job and f: the graphs, the cluster they are placed on, the
// tasks and the objective; objective says what the objective drives.
func bindRegalSet(cmd *cobra.Command, job *regaltrain.Job, f *regalSetFlags, objective string) {
	fs := cmd.Flags()
	fs.StringVar(&job.GraphsDir, "graphs", "", "train on every native JSON graph under `DIR` (e.g. placer workloads synth's train folder)")
	fs.StringVar(&f.Workloads, "workloads", "", "also train on augmented copies of these built-in workloads, comma-separated")
	fs.IntVar(&job.Copies, "copies", 4, "augmented copies per workload (each tensor size and op time times U(0.5, 1.5))")
	opflags.Cluster(cmd.Flags(), &job.Cluster)
	fs.Lookup("gpus").Usage = "number of GPUs every graph is placed on (default 2, REGAL's; the network's device groups)"
	fs.BoolVar(&job.SyncTransfers, "sync-transfers", false, "REGAL's model: a transfer blocks its sender and receiver")
	fs.StringVar(&f.Tasks, "tasks", "placement,scheduling", "the problems' tasks: any of placement, scheduling, fusion")
	fs.StringVar(&f.Objective, "objective", "step-time", objective+": step-time or peak-memory")
}

type regalTrainOptions struct {
	regaltrain.Job
	flags regalTrainFlags
	JSON  bool
	quiet bool
}

func newRegalTrainCmd(s *streams) *cobra.Command {
	o := &regalTrainOptions{}
	cmd := &cobra.Command{
		Use:   "train (--graphs DIR | --workloads LIST) --out MODEL",
		Short: "Train REGAL's policy as a contextual bandit with REINFORCE",
		Long: `Train REGAL's graph network (docs/regal.md): per step, --batch graphs in
turn; for each, --samples draws of the per-node Beta buckets, BRKGA run
with each draw's mutant distributions for --evaluations evaluations, and the
reward -(objective / uniform BRKGA's objective at the same budget). The
training set is every native JSON graph under --graphs (REGAL's synthetic
graphs: placer workloads synth) and --copies augmented copies of each
built-in workload of --workloads (each tensor size and op time times
U(0.5, 1.5)).

The model file (--out) is written atomically every --checkpoint-every steps,
on Ctrl-C and at the end, with the training state (weights, Adam, curve);
--resume MODEL continues exactly where it stopped. 'placer baselines
--methods regal,regal-zero-shot --regal-model MODEL' uses it.

With --workers K --rounds DIR the steps run in synchronous rounds that any
number of processes (on one machine, or a cluster's nodes sharing DIR)
started with the same command share: round r's K steps all start from
round r's model (weights and Adam's moments), the next round's model is
their mean (docs/cluster.md). Same seed and K, same model, however many
processes; K = 1 is the model of one plain process. The cells are the
steps: --list-cells prints them (JSON lines) and runs nothing; --cell I
runs step I only (what a Slurm array task or a Kubernetes Indexed Job
does without --cell: SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX); the
cell that ends the last round writes --out.`,
		Example: `  placer workloads synth --family all --count 120 --seed 1 -o synth/
  placer regal train --graphs synth/train --gpus 2 --sync-transfers --steps 300 --out regal.model
  placer regal train --graphs synth/train --workloads wavenet2x18 --copies 2 --gpus 2 --sync-transfers --time 10m --out regal.model`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.flags.Stdout = s.Out
			if err := parseRegalTrainFlags(&o.Job, o.flags); err != nil {
				return err
			}
			if o.ListCells != nil {
				_, err := o.RunReport(cmd.Context())
				return err
			}
			if !o.quiet {
				o.Progress = s.Err
				bar := &lazyBar{w: s.Err, what: "regal train"}
				o.Train.OnStep = func(pt regal.Point) {
					bar.step(o.Train.Steps, pt.Step, fmt.Sprintf("reward %.4f (best %.4f), entropy %.3f", pt.MeanReward, pt.BestReward, pt.Entropy))
				}
				defer bar.finish()
			}
			rep, err := o.RunReport(cmd.Context())
			s.kept = "nothing trained yet, no model written"
			if rep == nil {
				return err
			}
			if rep.Model != "" {
				s.kept = fmt.Sprintf("model so far written to %s (continue with --resume %s)", rep.Model, rep.Model)
			}
			return emit(s, o.JSON, *rep, func() error { return writeRegalTrain(s, *rep) }, err)
		},
	}
	f := cmd.Flags()
	bindRegalSet(cmd, &o.Job, &o.flags.Set, "what the reward measures")
	f.IntVar(&o.Train.Steps, "steps", 0, "total steps across --resume (default 100, or unlimited with --time)")
	f.DurationVar(&o.Train.Time, "time", 0, "stop after this wall time (e.g. 5m)")
	f.Uint64Var(&o.Train.Seed, "seed", 0, "random seed: same seed, same model (ignored with --resume: the checkpoint's)")
	f.IntVar(&o.Train.Samples, "samples", 4, "actions drawn per graph and step (at least 2)")
	f.IntVar(&o.Train.Batch, "batch", 2, "graphs per step")
	f.IntVar(&o.Train.Evaluations, "evaluations", 1000, "BRKGA's evaluation budget during training (REGAL trains at 1,000)")
	f.Float64Var(&o.Train.LearningRate, "lr", 3e-3, "Adam's step size")
	f.Float64Var(&o.Train.Entropy, "entropy", 0.01, "entropy bonus per gene group (0 = none)")
	f.Float64Var(&o.Train.SelfImitation, "self-imitation", 0, "self-imitation weight: each graph's best action so far is replayed when it beats the step's samples, with this times its margin as advantage (0 = off, REGAL's training)")
	f.IntVar(&o.Train.Config.Layers, "layers", 2, "GraphSAGE layers (message-passing rounds)")
	f.IntVar(&o.Train.Config.Dim, "dim", 32, "node embedding width")
	f.IntVar(&o.Train.Config.MeanBuckets, "mean-buckets", 5, "quantization levels of the Beta means")
	f.IntVar(&o.Train.Config.VarBuckets, "var-buckets", 5, "quantization levels of the Beta variances")
	f.IntVar(&o.Train.CheckpointEvery, "checkpoint-every", 20, "write the model every `N` steps (and on Ctrl-C and at the end)")
	f.StringVar(&o.Train.Resume, "resume", "", "continue from a checkpoint `FILE`")
	f.StringVar(&o.flags.Init, "init", "", "start from the weights of model `FILE` (e.g. one of 'placer regal imitate') instead of a new network")
	f.IntVar(&o.Workers, "workers", 0, "synchronous rounds of `K` steps, each from the round's model, the next model their mean; any number of processes started with the same command share the rounds through --rounds (same seed and K, same model; 1 = the model of one process)")
	f.StringVar(&o.Rounds, "rounds", "", "with --workers: the `DIR` every worker shares (the rounds, each step's claim; the checkpoint to go on from)")
	f.BoolVar(&o.flags.ListCells, "list-cells", false, "with --workers: list the cells (one per step) as JSON lines (index, round, method, budget, seed, file) and run nothing")
	f.StringVar(&o.flags.Cell, "cell", "", "with --workers: run cell `I` (step I) only; default: SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX when set, else every step left ('all': every step whatever the environment says)")
	f.DurationVar(&o.Lease, "lease", 0, "with --workers: a step's claim lasts this long unless renewed; a dead worker's step is taken over after it (default 1m)")
	f.StringVarP(&o.flags.Out, "out", "o", "", "the model `FILE` to write")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}

func writeRegalTrain(s *streams, rep regaltrain.Report) error {
	// The curve in up to 20 rows, each the mean over its stretch of steps.
	var rows [][]string
	n := len(rep.Curve)
	parts := min(n, 20)
	for i := 0; i < parts; i++ {
		lo, hi := i*n/parts, (i+1)*n/parts
		var mean, best, ent, uni float64
		for _, p := range rep.Curve[lo:hi] {
			k := float64(hi - lo)
			mean += p.MeanReward / k
			best += p.BestReward / k
			ent += p.Entropy / k
			uni += p.Uniform / k
		}
		rows = append(rows, []string{fmt.Sprintf("%d-%d", rep.Curve[lo].Step, rep.Curve[hi-1].Step), fmt.Sprintf("%.4f", mean), fmt.Sprintf("%.4f", best),
			fmt.Sprintf("%.3f", ent), fmt.Sprintf("%.1f%%", 100*uni)})
	}
	if len(rows) > 0 {
		if err := report.Table(s.Out, []string{"steps", "mean reward", "best reward", "entropy", "uniform buckets"}, rows); err != nil {
			return err
		}
		fmt.Fprintln(s.Out, "reward: -(objective / uniform BRKGA's objective at the same budget); above -1 beats uniform BRKGA")
	}
	fmt.Fprintf(s.Out, "regal train: %d graphs, %s, %d steps in %s, seed %d (%s)\n", len(rep.Uniform), rep.Objective, rep.Steps, report.Seconds(rep.Elapsed), rep.Seed, rep.Status)
	if rep.Model != "" {
		fmt.Fprintf(s.Out, "model written to %s\n", rep.Model)
	}
	return nil
}
