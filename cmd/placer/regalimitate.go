package main

import (
	"fmt"
	"strings"

	"github.com/placer/placer/jobs"
	"github.com/placer/placer/methods/regal"
	"github.com/placer/placer/report"
	"github.com/spf13/cobra"
)

type regalImitateOptions struct {
	job   jobs.RegalTrainJob // the training set (its Train is unused but for the seed)
	im    regal.Imitation
	set   regalSet
	genes string
	out   string
	JSON  bool
	quiet bool
}

// regalImitateReport is what `placer regal imitate` prints.
type regalImitateReport struct {
	Model              string                 `json:"model"`
	Objective          string                 `json:"objective"`
	Seed               uint64                 `json:"seed"`
	Teachers           int                    `json:"teachers"`
	TeacherEvaluations int                    `json:"teacher_evaluations"`
	TeacherSeconds     float64                `json:"teacher_s"`
	TeacherAgreement   float64                `json:"teacher_agreement"`
	FitSeconds         float64                `json:"fit_s"`
	Status             string                 `json:"status"`
	Teacher            map[string]float64     `json:"teacher_objective"`
	Curve              []regal.ImitationPoint `json:"curve"`
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
			var err error
			if o.im.Objective, err = o.set.resolve(&o.job); err != nil {
				return err
			}
			if o.out == "" {
				return usagef("give --out MODEL (the model file to write)")
			}
			if o.im.Teachers < 1 || o.im.TeacherEvaluations < 1 || o.im.Epochs < 1 || o.im.Targets.Spread < 0 || !(o.im.LearningRate > 0) {
				return usagef("--teachers, --teacher-evaluations, --epochs and --lr must be positive, --spread not negative")
			}
			o.im.Targets.SkipPlacement, o.im.Targets.SkipPriority = true, true
			for _, g := range strings.Split(o.genes, ",") {
				switch strings.TrimSpace(g) {
				case "placement":
					o.im.Targets.SkipPlacement = false
				case "priority":
					o.im.Targets.SkipPriority = false
				default:
					return usagef("--genes: %q is not a gene group (placement, priority)", g)
				}
			}
			if err := o.im.Config.Check(); err != nil {
				return usagef("%v", err)
			}
			o.job.Train.Seed = o.im.Seed // the augmented copies draw from it
			if !o.quiet {
				o.job.Progress = s.Err
			}
			gs, err := o.job.Graphs()
			if err != nil {
				return err
			}
			o.im.Graphs = gs
			if !o.quiet {
				fmt.Fprintf(s.Err, "regal imitate: %d graphs x %d teachers at %d evaluations\n", len(gs), o.im.Teachers, o.im.TeacherEvaluations)
				bar := &lazyBar{w: s.Err, what: "regal imitate"}
				o.im.OnEpoch = func(pt regal.ImitationPoint) {
					bar.step(o.im.Epochs, pt.Epoch, fmt.Sprintf("loss %.4f, agreement %.1f%%", pt.Loss, 100*pt.Agreement))
				}
				defer bar.finish()
			}
			r, err := o.im.Run(cmd.Context())
			s.kept = "nothing fitted yet, no model written"
			if r == nil {
				return err
			}
			if len(r.Curve) == 0 { // stopped during the teachers: nothing fitted
				return cmd.Context().Err()
			}
			if err := r.Model.Save(o.out); err != nil {
				return err
			}
			s.kept = fmt.Sprintf("model so far written to %s", o.out)
			rep := regalImitateReport{Model: o.out, Objective: o.im.Objective.String(), Seed: o.im.Seed, Teachers: o.im.Teachers,
				TeacherEvaluations: o.im.TeacherEvaluations, TeacherSeconds: r.TeacherTime.Seconds(), TeacherAgreement: r.Agreement, FitSeconds: r.FitTime.Seconds(),
				Status: r.Status.String(), Teacher: r.Teacher, Curve: r.Curve}
			if err == nil {
				err = cmd.Context().Err()
			}
			return emit(s, o.JSON, rep, func() error { return writeRegalImitate(s, rep) }, err)
		},
	}
	f := cmd.Flags()
	o.set.bind(cmd, &o.job, "what the teachers optimize")
	f.Uint64Var(&o.im.Seed, "seed", 0, "random seed: same seed, same model")
	f.IntVar(&o.im.Teachers, "teachers", 2, "BRKGA runs per graph whose best decisions are the targets")
	f.IntVar(&o.im.TeacherEvaluations, "teacher-evaluations", 50000, "each teacher's evaluation budget")
	f.IntVar(&o.im.Epochs, "epochs", 60, "passes over the graphs")
	f.Float64Var(&o.im.LearningRate, "lr", 3e-3, "Adam's step size")
	f.IntVar(&o.im.Targets.Spread, "spread", 0, "the variance bucket of every imitated target (0 = the narrowest)")
	f.StringVar(&o.genes, "genes", "placement,priority", "the gene groups imitated (the others are fitted to the uniform buckets): placement, priority or both")
	f.StringVar(&o.im.TeacherFile, "teacher-file", "", "keep the teachers' decisions in `FILE` and read them back when the graphs, objective, seed and budget match")
	f.IntVar(&o.im.Config.Devices, "devices", 2, "device-affinity gene groups of the network (= --gpus)")
	f.IntVar(&o.im.Config.Layers, "layers", 2, "GraphSAGE layers (message-passing rounds)")
	f.IntVar(&o.im.Config.Dim, "dim", 32, "node embedding width")
	f.IntVar(&o.im.Config.MeanBuckets, "mean-buckets", 5, "quantization levels of the Beta means")
	f.IntVar(&o.im.Config.VarBuckets, "var-buckets", 5, "quantization levels of the Beta variances")
	f.StringVarP(&o.out, "out", "o", "", "the model `FILE` to write")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}

func writeRegalImitate(s *streams, rep regalImitateReport) error {
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
