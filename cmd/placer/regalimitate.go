package main

import (
	"fmt"

	"github.com/placer/placer/jobs/regaltrain"
	"github.com/placer/placer/methods/regal"
	"github.com/placer/placer/report"
	"github.com/spf13/cobra"
)

type regalImitateOptions struct {
	regaltrain.ImitateJob
	flags regalImitateFlags
	JSON  bool
	quiet bool
}

func newRegalImitateCmd(s *streams) *cobra.Command {
	o := &regalImitateOptions{}
	cmd := &cobra.Command{
		Use:   "imitate (--graphs DIR | --workloads LIST) --out MODEL",
		Short: "Fit REGAL's network to the genes of long BRKGA runs (a supervised warm start)",
		Long: `Fit REGAL's graph network to good decisions instead of learning from one
reward per draw (docs/regal.md, "Imitation"): on every training graph,
uniform BRKGA runs --teachers times at --teacher-evaluations evaluations;
each teacher's best decision becomes per-node bucket targets (the device
affinities of the op's device high, the others low, devices renamed by the
mean topological index of their ops; the priority bucket nearest the op's
place in the teacher's order; the variance bucket --spread), and the
network is fitted to them by cross-entropy for --epochs passes.

The training set is built as 'placer regal train' builds it. The model file
(--out) is an ordinary REGAL model: 'placer baselines --methods regal
--regal-model MODEL' uses it, and 'placer regal train --init MODEL' continues
it with REINFORCE.`,
		Example: `  placer workloads synth --family all --count 120 --seed 1 -o synth/
  placer regal imitate --graphs synth/train --workloads wavenet2x18 --copies 2 --gpus 2 --sync-transfers \
      --objective peak-memory --seed 1 --out peak-memory.regal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := parseRegalImitateFlags(&o.ImitateJob, o.flags); err != nil {
				return err
			}
			if !o.quiet {
				o.Set.Progress = s.Err
				bar := &lazyBar{w: s.Err, what: "regal imitate"}
				o.Imitation.OnEpoch = func(pt regal.ImitationPoint) {
					bar.step(o.Imitation.Epochs, pt.Epoch, fmt.Sprintf("loss %.4f, agreement %.1f%%", pt.Loss, 100*pt.Agreement))
				}
				defer bar.finish()
			}
			rep, err := o.Run(cmd.Context())
			s.kept = "nothing fitted yet, no model written"
			if rep == nil {
				return err
			}
			s.kept = fmt.Sprintf("model so far written to %s", rep.Model)
			return emit(s, o.JSON, *rep, func() error { return writeRegalImitate(s, *rep) }, err)
		},
	}
	f := cmd.Flags()
	bindRegalSet(cmd, &o.Set, &o.flags.Set, "what the teachers optimize")
	f.Uint64Var(&o.Imitation.Seed, "seed", 0, "random seed: same seed, same model")
	f.IntVar(&o.Imitation.Teachers, "teachers", 2, "BRKGA runs per graph whose best decisions are the targets")
	f.IntVar(&o.Imitation.TeacherEvaluations, "teacher-evaluations", 50000, "each teacher's evaluation budget")
	f.IntVar(&o.Imitation.Epochs, "epochs", 60, "passes over the graphs")
	f.Float64Var(&o.Imitation.LearningRate, "lr", 3e-3, "Adam's step size")
	f.IntVar(&o.Imitation.Targets.Spread, "spread", 0, "the variance bucket of every imitated target (0 = the narrowest)")
	f.StringVar(&o.flags.Genes, "genes", "placement,priority", "the gene groups imitated (the others are fitted to the uniform buckets): placement, priority or both")
	f.StringVar(&o.Imitation.TeacherFile, "teacher-file", "", "keep the teachers' decisions in `FILE` and read them back when the graphs, objective, seed and budget match")
	f.IntVar(&o.Imitation.Config.Devices, "devices", 2, "device-affinity gene groups of the network (= --gpus)")
	f.IntVar(&o.Imitation.Config.Layers, "layers", 2, "GraphSAGE layers (message-passing rounds)")
	f.IntVar(&o.Imitation.Config.Dim, "dim", 32, "node embedding width")
	f.IntVar(&o.Imitation.Config.MeanBuckets, "mean-buckets", 5, "quantization levels of the Beta means")
	f.IntVar(&o.Imitation.Config.VarBuckets, "var-buckets", 5, "quantization levels of the Beta variances")
	f.StringVarP(&o.Out, "out", "o", "", "the model `FILE` to write")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}

func writeRegalImitate(s *streams, rep regaltrain.ImitateReport) error {
	var rows [][]string
	n := len(rep.Curve)
	parts := min(n, 12)
	for i := 0; i < parts; i++ {
		p := rep.Curve[(i+1)*n/parts-1]
		rows = append(rows, []string{fmt.Sprint(p.Epoch), fmt.Sprintf("%.4f", p.Loss), fmt.Sprintf("%.1f%%", 100*p.Agreement), report.Seconds(p.Elapsed)})
	}
	if len(rows) > 0 {
		if err := report.Table(s.Out, []string{"epoch", "loss", "agreement", "elapsed"}, rows); err != nil {
			return err
		}
		fmt.Fprintln(s.Out, "loss: cross-entropy per categorical against the teachers' buckets; agreement: gene groups whose most likely mean bucket is the teachers'")
	}
	fmt.Fprintf(s.Out, "regal imitate: %d graphs, %s, %d teachers x %d evaluations in %s, fit in %s, seed %d (%s)\n", len(rep.Teacher), rep.Objective,
		rep.Teachers, rep.TeacherEvaluations, report.Seconds(rep.TeacherSeconds), report.Seconds(rep.FitSeconds), rep.Seed, rep.Status)
	if rep.Teachers > 1 {
		fmt.Fprintf(s.Out, "the teachers of a graph put %.1f%% of its ops on the same device (devices renamed by their ops' topological order; chance on 2 GPUs is about 50%%)\n", 100*rep.TeacherAgreement)
	}
	fmt.Fprintf(s.Out, "model written to %s\n", rep.Model)
	return nil
}
