package main

import (
	"fmt"

	"github.com/placer/placer/cmd/placer/internal/opflags"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/placements"
	"github.com/spf13/cobra"
)

type transferOptions struct {
	jobs.TransferOptions
	ppo   opflags.PPO // finetune's
	JSON  bool
	quiet bool
}

func init() { register(newInferCmd) }

func newInferCmd(s *streams) *cobra.Command {
	o := &transferOptions{}
	cmd := &cobra.Command{
		Use:   "infer [--model MODEL] (--workload NAME | --graph FILE) [--gpus N]",
		Short: "Place a graph zero-shot with a pre-trained GO policy (one forward pass)",
		Long: `Place a graph the model has never seen without training (GDP §4.3's
zero-shot inference). The quick baselines run first; the best valid one is
the reference. One low-memory forward pass of the model, conditioned on the
reference decision (GO's refinement input), gives every node's action
distributions; the most likely decision and --samples decisions drawn from
them are evaluated and the best is kept (row go-zero-shot, with the
one-pass decision's step time). Then, for --refine-evals evaluations (300
by default: the same seed gives the same answer; --refine adds a wall-time
limit), go-scored-prior refines the better of the reference and that
decision: anchored local search whose moves the pre-trained move head
(--head, default the built-in one) picks as a prior, with a new head
learning as it goes what the prior gets wrong on this graph (row
go-zero-shot+refined, the result). --out writes
a result file as 'placer search' does.

Without --model the default model built into placer is used ('make
default-model' trains it).`,
		Example: `  placer infer --model m.policy --workload trxl4 --gpus 4
  placer infer --model m.policy --graph g.json --gpus 2 --samples 64 --out g-zero-shot.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opflags.CheckInfer(&o.TransferOptions); err != nil {
				return err
			}
			o.progress(s, nil)
			rep, err := jobs.Infer(cmd.Context(), o.TransferOptions)
			method := "go-zero-shot"
			if rep.Result.Method != "" && rep.Result.Method != method {
				method = "go-zero-shot+refined"
			}
			return o.write(s, rep, err, method)
		},
	}
	o.flags(cmd, false)
	cmd.Flags().IntVar(&o.RefineEvals, "refine-evals", 300, "evaluations go-scored-prior spends refining the better of the reference and the zero-shot decision (row go-zero-shot+refined); the same seed gives the same answer; 0 = none")
	cmd.Flags().DurationVar(&o.Refine, "refine", 0, "also stop the refinement when the learned part has taken this wall time in all (e.g. 3s; default: no time limit)")
	cmd.Flags().StringVar(&o.Head, "head", "", "the pre-trained move head `FILE` the refinement reads as its prior (placer pretrain --scored; default: the built-in head)")
	return cmd
}

// progress puts the baselines' lines and, for finetune, a bar on stderr.
func (o *transferOptions) progress(s *streams, bar **lazyBar) {
	if o.quiet {
		return
	}
	o.Progress = s.Err
	if bar == nil || *bar == nil {
		return
	}
	o.OnStep = func(pt gdp.Point, ref float64, steps int) { (*bar).step(steps, pt.Step, searchStep(pt, ref)) }
}

// write prints the report (table or JSON) and passes on a run's error;
// a cancelled run still prints what it has.
func (o *transferOptions) write(s *streams, rep jobs.SearchReport, err error, method string) error {
	have := rep.Result.Method != ""
	s.kept = keptResult("best result", rep.Out, have)
	err = emit(s, o.JSON, rep, func() error {
		if werr := placements.WriteBaselines(s.Out, rep.Comparison); werr != nil {
			return werr
		}
		r := rep.Result
		warnOOM(s, r.OOM)
		model := o.Model
		if model == "" {
			model = "the default model"
		}
		if method == "go-zero-shot" { // one forward pass: no steps, nothing converged
			fmt.Fprintf(s.Out, "%s: %s, one forward pass, %s in %s; reference %s (%s)\n",
				method, model, plural(r.Evaluations, "evaluation"), report.Seconds(r.SearchTime), r.Reference, report.Seconds(r.RefStep))
		} else {
			fmt.Fprintf(s.Out, "%s: %s, %s, %s in %s (%s); reference %s (%s)\n",
				method, model, plural(r.Steps, "step"), plural(r.Evaluations, "evaluation"), report.Seconds(r.SearchTime), r.Status, r.Reference, report.Seconds(r.RefStep))
		}
		if r.OnePass > 0 {
			fmt.Fprintf(s.Out, "%s: the policy's one-pass (most likely) decision %s%s; the best found %s\n",
				method, report.Seconds(r.OnePass), map[bool]string{true: "", false: " (invalid)"}[r.OnePassValid], report.Seconds(r.StepTime))
		}
		if rep.Out != "" {
			fmt.Fprintf(s.Out, "result written to %s\n", rep.Out)
		}
		return nil
	}, err, !have)
	return oomFails(err, rep.Result.OOM)
}

// flags binds the flags infer and finetune share (and finetune's own).
func (o *transferOptions) flags(cmd *cobra.Command, finetune bool) {
	f := cmd.Flags()
	f.StringVar(&o.Model, "model", "", "the pre-trained model `FILE` (placer pretrain --out; default: the built-in model)")
	opflags.Graph(cmd.Flags(), &o.Graph)
	opflags.Cluster(cmd.Flags(), &o.Cluster)
	f.StringVar(&o.Tasks, "tasks", "", "what to decide; must be the model's tasks (default: the model's)")
	f.BoolVar(&o.Sync, "sync-transfers", false, "REGAL's model: a transfer blocks its sender and receiver")
	f.Uint64Var(&o.Seed, "seed", 0, "random seed: same seed, same result")
	if finetune {
		f.IntVar(&o.Samples, "samples", 16, "decisions sampled per step (the rollout size K)")
		f.IntVar(&o.Steps, "steps", 50, "PPO steps (unlimited when only --time is given)")
		f.DurationVar(&o.Time, "time", 0, "stop fine-tuning after this wall time (e.g. 60s)")
		f.IntVar(&o.Warmup, "warmup", 0, "imitation steps on the reference before PPO (default none)")
		opflags.BindPPO(cmd.Flags(), &o.ppo)
	} else {
		f.IntVar(&o.Samples, "samples", 16, "decisions sampled besides the most likely one")
	}
	f.StringVarP(&o.Out, "out", "o", "", "write the result (decision, statistics) to `FILE`")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
}
