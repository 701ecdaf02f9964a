package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
	"github.com/spf13/cobra"
)

type pretrainOptions struct {
	jobs.PretrainOptions
	workloads  string
	extraGPUs  []int
	visitEvals int
	train      trainFlags
	JSON       bool
	quiet      bool
}

func init() { register(newPretrainCmd) }

// smallPolicy is --policy small: about a tenth of the default network,
// for quick pre-training on a CPU (and the default model).
var smallPolicy = policy.Config{SageLayers: 2, SageDim: 32, DModel: 32, Heads: 2, HeadDim: 16, Inner: 64, CondDim: 32, HeadHidden: 32}

// policyConfig reads --policy: "default", "small" or a JSON file of
// policy.Config fields.
func policyConfig(s string) (*policy.Config, error) {
	switch s {
	case "", "default":
		return nil, nil
	case "small":
		c := smallPolicy
		return &c, nil
	}
	data, err := os.ReadFile(s)
	if err != nil {
		if os.IsNotExist(err) && !strings.ContainsAny(s, "./") {
			return nil, usagef("--policy %q: neither default, small nor a file", s)
		}
		return nil, fmt.Errorf("--policy: %w", err)
	}
	var c policy.Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("--policy: %w", graph.JSONError(s, data, err))
	}
	if err := graph.CheckEnd(s, data, dec); err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	// The configuration is checked before any network is built.
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("--policy: %s: %w", s, err)
	}
	return &c, nil
}

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

With --guided it trains go-guided's proposal model instead: each graph has
a local search walking from its reference, and every step is one round of
it on the step's graph: one forward pass conditioned on the walk's current
decision, proposals that each change one unit's action, evaluated in
parallel, REINFORCE on their gains, and the walk's move to the best if it
is no worse. 'placer report equal-time --methods go-guided-pretrained
--model MODEL' searches with the model on other graphs.

The model file (--out) is written every --checkpoint-every steps, on Ctrl-C
and at the end, with its state file MODEL.state.json (step, seed, graphs,
elapsed time); --resume MODEL continues from it (with the checkpoint's seed,
up to --steps in total). 'placer infer' and 'placer finetune' use the model.`,
		Example: `  placer workloads synth --family all --count 24 --seed 1 -o synth/
  placer pretrain --workloads trxl2,wavenet2x18,rnnlm2 --graphs synth/train --gpus 2 --policy small --steps 300 --out m.policy
  placer pretrain --workloads all --hold-out gnmt --gpus 4 --time 1h --out m.policy
  placer pretrain --workloads trxl2 --gpus 2 --resume m.policy --steps 600 --out m.policy
  placer pretrain --guided --workloads wavenet2x18,inception_b32 --graphs synth/train --gpus 4 --extra-gpus 2 --time 20m --out guided.policy`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.workloads != "" {
				o.Workloads = strings.Split(o.workloads, ",")
			}
			if len(o.Workloads) == 0 && o.GraphsDir == "" {
				return usagef("give --workloads LIST or --graphs DIR")
			}
			if o.Out == "" {
				return usagef("give --out MODEL (the model file to write)")
			}
			if o.Cluster.GPUs < 1 || o.Cluster.GPUs > 8 {
				return usagef("give --gpus N (1 to 8)")
			}
			if o.Steps < 0 || o.Samples < 0 || o.CheckpointEvery < 0 || o.Time < 0 {
				return usagef("--steps, --samples, --checkpoint-every and --time must not be negative")
			}
			if _, err := optimize.ParseTasks(o.Tasks); err != nil {
				return usagef("--tasks: %v", err)
			}
			if o.HoldOut != "" && !contains(jobs.HoldOutFamilies(), strings.ToLower(o.HoldOut)) {
				return usagef("--hold-out: unknown family %q (want one of %s)", o.HoldOut, strings.Join(jobs.HoldOutFamilies(), ", "))
			}
			o.ExtraGPUs = o.extraGPUs
			for _, n := range o.ExtraGPUs {
				if n < 1 || n > 8 || n == o.Cluster.GPUs {
					return usagef("--extra-gpus: %d; want counts of 1 to 8 other than --gpus", n)
				}
			}
			var err error
			if o.Policy, o.PPO, err = o.train.parse(); err != nil {
				return err
			}
			if o.Scored && o.Guided {
				return usagef("--scored and --guided train different models: give one")
			}
			if o.visitEvals < 1 {
				return usagef("--visit-evals %d: want at least 1", o.visitEvals)
			}
			o.PerVisit = optimize.Budget{Evaluations: o.visitEvals}
			if o.Scored && !cmd.Flags().Changed("lr") {
				o.PPO.LearningRate = 0 // go-scored's own
			}
			if o.Guided {
				// go-guided's own defaults unless the flags were given.
				if !cmd.Flags().Changed("samples") {
					o.Samples = 0
				}
				if !cmd.Flags().Changed("lr") {
					o.PPO.LearningRate = 0
				}
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
	f.StringVar(&o.workloads, "workloads", "", "built-in workloads to train on, comma-separated ('all' = every one; placer workloads list)")
	f.StringVar(&o.GraphsDir, "graphs", "", "also train on the graphs of `LIST`, comma-separated folders (searched recursively; e.g. from placer workloads synth) and files: native JSON graphs and imported formats (msr-fiddle's, say)")
	f.StringVar(&o.HoldOut, "hold-out", "", "leave out every graph of this `FAMILY` (a workload family, or er, ba, ws, sbm)")
	addClusterFlags(cmd, &o.Cluster)
	f.Lookup("gpus").Usage = "number of GPUs every graph is placed on (required, 1 to 8)"
	f.IntSliceVar(&o.extraGPUs, "extra-gpus", nil, "also train every graph on these GPU counts, comma-separated (as graph NAME@N)")
	f.StringVar(&o.Tasks, "tasks", "placement,scheduling,fusion", "what to learn: any of placement, scheduling, fusion")
	f.BoolVar(&o.Sync, "sync-transfers", false, "REGAL's model: a transfer blocks its sender and receiver")
	f.IntVar(&o.Steps, "steps", 0, "total steps, warm-up included and across --resume (default 200, or unlimited with --time)")
	f.DurationVar(&o.Time, "time", 0, "stop after this wall time (e.g. 5m)")
	f.Uint64Var(&o.Seed, "seed", 0, "random seed: same seed, same model (ignored with --resume: the checkpoint's)")
	f.IntVar(&o.Samples, "samples", 16, "decisions sampled per step (the rollout size K)")
	f.IntVar(&o.Warmup, "warmup", 0, "imitation steps on the references before PPO (default 30 per graph; -1 = none)")
	f.BoolVar(&o.Random, "random", false, "pick each step's graph at random (seeded) instead of in turn")
	f.BoolVar(&o.Scored, "scored", false, "train go-scored's move head: each step one visit, a go-scored run of --visit-evals evaluations on one graph from its reference, in turn; --out is the head's file")
	f.IntVar(&o.visitEvals, "visit-evals", 2000, "with --scored: evaluations per visit")
	f.BoolVar(&o.Guided, "guided", false, "train go-guided's proposal model: each step one round of single-unit proposals on a graph (default 128 proposals, Adam at 1e-3, no warm-up)")
	addTrainFlags(cmd, &o.train)
	f.IntVar(&o.CheckpointEvery, "checkpoint-every", 50, "write the model every `N` steps (and on Ctrl-C and at the end)")
	f.StringVar(&o.Resume, "resume", "", "continue from a checkpoint `FILE` (a model and its .state.json)")
	f.StringVarP(&o.Out, "out", "o", "", "the model `FILE` to write")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	return cmd
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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
