package reports

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/grid"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/placements"
	"github.com/placer/placer/workloads"
)

// GeneralizationTestGraphs are the default graph of each workload family
// for `placer report generalization`: the family's smallest built-in
// workload (fewest ops; of the three 19,750-op Inception graphs, the one
// with the smallest batch). Each is the family's test graph when the
// family is held out, and one of the training graphs otherwise.
var GeneralizationTestGraphs = map[string]string{
	"rnnlm": "rnnlm2", "gnmt": "gnmt2", "trxl": "trxl2",
	"inception": "inception_b32", "amoebanet": "amoebanet", "wavenet": "wavenet2x18",
}

// GeneralizationFamilies are the families held out by default: the six
// workload families, in the registry's order.
func GeneralizationFamilies() []string {
	var out []string
	for _, f := range workloads.Families() {
		out = append(out, string(f))
	}
	return out
}

// GeneralizationTrain is the default pre-training set: every family's
// graph of GeneralizationTestGraphs (each run holds one family's out).
func GeneralizationTrain() []string {
	var out []string
	for _, f := range GeneralizationFamilies() {
		out = append(out, GeneralizationTestGraphs[f])
	}
	return out
}

// GeneralizationFamilyFormat and GeneralizationFamilyVersion identify a
// per-family result file of --dir.
const (
	GeneralizationFamilyFormat  = "placer-generalization-family"
	GeneralizationFamilyVersion = 1
)

// GeneralizationOptions are the inputs of `placer report generalization`.
type GeneralizationOptions struct {
	// Families are held out in turn (nil = GeneralizationFamilies()); each
	// must be a family pretrain --hold-out accepts.
	Families []string
	// Train are the built-in workloads pre-training draws from (nil =
	// GeneralizationTrain(); "none" = no workload, only GraphsDir); the
	// held-out family's are left out of its run.
	Train []string
	// GraphsDir adds every native JSON graph under it to every
	// pre-training set (as pretrain --graphs; a file named "FAMILY-..."
	// belongs to FAMILY and is left out when FAMILY is held out).
	GraphsDir string
	// Test maps a family to its test graph: a built-in workload name or a
	// graph file. A held-out family not in it takes
	// GeneralizationTestGraphs'; families not held out are ignored.
	Test map[string]string
	// Cluster is every graph's cluster (GPUs 0 = 2).
	Cluster inputs.ClusterSpec
	Tasks   string // "" = placement,scheduling,fusion
	Sync    bool
	Seed    uint64
	Samples int // rollout size K and zero-shot samples (0 = 16)
	// Policy is the network of every policy, pre-trained and GO-one
	// alike (nil = policy defaults); PolicyName names it in the report.
	Policy     *policy.Config
	PolicyName string

	PretrainSteps int           // pre-training steps per family, warm-up included (0 = 200 unless PretrainTime is set)
	PretrainTime  time.Duration // pre-training wall time per family (0 = none)
	Warmup        int           // pre-training imitation steps (0 = 30 per graph; negative = none)
	SearchSteps   int           // GO-one PPO steps (0 = 100 unless SearchTime is set)
	SearchTime    time.Duration // GO-one wall time (0 = none)
	FinetuneSteps int           // fine-tuning PPO steps (0 = 50)

	// Dir keeps each family's pre-trained model (FAMILY.policy and its
	// state file), its result file (FAMILY.json) and the learned methods'
	// result files (FAMILY-go-one.json, FAMILY-zero-shot.json,
	// FAMILY-fine-tuned.json); a rerun skips the families whose result
	// file is there. "" = a temporary folder, removed at the end.
	Dir string
	// Plot, if set, is the grouped bar chart's file (.png, .svg, .pdf).
	Plot string

	// Progress receives one line per phase (and pretrain's and the
	// baselines' lines); OnPretrainStep each pre-training step and
	// OnSearchStep each GO-one ("go-one") and fine-tuning ("fine-tune")
	// step.
	Progress       io.Writer
	OnPretrainStep func(family string, pt gdp.PretrainPoint, steps int)
	OnSearchStep   func(family, phase string, pt gdp.Point, refStep float64, steps int)
	// Work, if set, spreads the families (one cell each) over processes
	// sharing Dir (--list-cells, --cell, --worker; grid.Work).
	Work *grid.Work
}

// GeneralizationReport is what `placer report generalization` prints.
type GeneralizationReport struct {
	placements.Generalization
	Dir string `json:"dir,omitempty"`
	// Resumed are the families read back from Dir instead of run.
	Resumed []string `json:"resumed,omitempty"`
	Plot    string   `json:"plot,omitempty"`
}

// generalizationSettings is what a family's result depends on, kept in
// its file so that a rerun with other settings does not mix results.
type generalizationSettings struct {
	Test          string         `json:"test_graph"`
	Train         []string       `json:"train_graphs"`
	Devices       int            `json:"devices"`
	Hardware      string         `json:"hardware"`
	Topology      string         `json:"topology"`
	Memory        int64          `json:"memory"`
	Tasks         string         `json:"tasks"`
	Sync          bool           `json:"sync_transfers"`
	Seed          uint64         `json:"seed"`
	Samples       int            `json:"samples"`
	Policy        *policy.Config `json:"policy"`
	PretrainSteps int            `json:"pretrain_steps"`
	PretrainTime  float64        `json:"pretrain_time_s"`
	Warmup        int            `json:"warmup"`
	SearchSteps   int            `json:"search_steps"`
	SearchTime    float64        `json:"search_time_s"`
	FinetuneSteps int            `json:"finetune_steps"`
}

// generalizationFile is a finished family's file in Dir.
type generalizationFile struct {
	Format   string                       `json:"format"`
	Version  int                          `json:"version"`
	Settings generalizationSettings       `json:"settings"`
	Row      placements.GeneralizationRow `json:"row"`
}

// Generalization runs GDP's and GO's transfer experiment: each family
// held out in turn, a policy pre-trained (Pretrain) on the other
// families' graphs, then on the held-out family's test graph the quick
// baselines, GO-one (Search, from scratch), zero-shot (Infer) and
// fine-tuning (Finetune) with the pre-trained model. Every family runs
// with the same seed; the same seed and options give the same rows, wall
// times aside. With o.Dir a finished family's result is written there
// atomically and a rerun skips it. When ctx is cancelled (Ctrl-C) the
// families finished so far are returned with ctx's error; the unfinished
// family's model checkpoint stays in o.Dir and its pre-training resumes
// from it.
func Generalization(ctx context.Context, o GeneralizationOptions) (GeneralizationReport, error) {
	var rep GeneralizationReport
	tasks, err := jobs.ParseTasks(o.Tasks)
	if err != nil {
		return rep, err
	}
	if o.Cluster.GPUs == 0 {
		o.Cluster.GPUs = 2
	}
	cl, err := inputs.Cluster(o.Cluster, inputs.Meta{})
	if err != nil {
		return rep, fmt.Errorf("generalization: %w", err)
	}
	fams, err := generalizationFamilies(o.Families)
	if err != nil {
		return rep, err
	}
	if o.Plot != "" {
		if err := report.CheckPlotPath(o.Plot); err != nil {
			return rep, fmt.Errorf("generalization: %w", err)
		}
	}
	train := o.Train
	if train == nil {
		train = GeneralizationTrain()
	}
	if slices.Equal(train, []string{"none"}) {
		train = nil
	}
	o.Train = train
	tests := map[string]string{}
	for _, f := range fams {
		t, ok := o.Test[f]
		if !ok {
			if t, ok = GeneralizationTestGraphs[f]; !ok {
				return rep, fmt.Errorf("generalization: family %s has no built-in workload; give its test graph (--test %s=FILE)", f, f)
			}
		}
		tests[f] = t
	}
	for f := range o.Test {
		if !slices.Contains(jobs.HoldOutFamilies(), f) {
			return rep, fmt.Errorf("generalization: test graph for unknown family %q (want one of %s)", f, strings.Join(jobs.HoldOutFamilies(), ", "))
		}
	}
	// The training sets resolve before anything runs: an unknown workload
	// or a family that leaves nothing to train on fails first.
	trainSets := map[string][]string{}
	for _, f := range fams {
		names, err := jobs.PretrainGraphs(train, o.GraphsDir, f)
		if err != nil {
			return rep, fmt.Errorf("generalization: holding out %s: %w", f, err)
		}
		trainSets[f] = names
	}
	dir := o.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "placer-generalization-*"); err != nil {
			return rep, fmt.Errorf("generalization: %w", err)
		}
		defer os.RemoveAll(dir)
	} else {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return rep, fmt.Errorf("generalization: %w", err)
		}
		rep.Dir = dir
	}
	samples := o.Samples
	if samples <= 0 {
		samples = 16
	}
	pretrainSteps, searchSteps, finetuneSteps := o.PretrainSteps, o.SearchSteps, o.FinetuneSteps
	if pretrainSteps == 0 && o.PretrainTime == 0 {
		pretrainSteps = 200
	}
	if searchSteps == 0 && o.SearchTime == 0 {
		searchSteps = 100
	}
	if finetuneSteps == 0 {
		finetuneSteps = 50
	}
	g := &rep.Generalization
	g.Hardware, g.Topology, g.Transfers = cl.Hardware.Name, cl.Topology, "async"
	if o.Sync {
		g.Transfers = "sync"
	}
	g.Devices, g.Tasks, g.Seed, g.Samples, g.Policy = o.Cluster.GPUs, tasks.String(), o.Seed, samples, o.PolicyName
	g.PretrainSteps, g.PretrainTime, g.SearchSteps, g.SearchTime, g.FinetuneSteps = pretrainSteps, o.PretrainTime.Seconds(), searchSteps, o.SearchTime.Seconds(), finetuneSteps
	if g.Policy == "" {
		g.Policy = "default"
	}

	pf := func(format string, a ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "generalization: "+format+"\n", a...)
		}
	}
	interrupted := ""
	if o.Dir != "" {
		interrupted = "interrupted; a rerun with --dir " + o.Dir + " resumes it"
	}
	var cells []grid.Cell[generalizationFile]
	for i, f := range fams {
		set := generalizationSettings{
			Test: tests[f], Train: trainSets[f], Devices: cl.Devices, Hardware: cl.Hardware.Name, Topology: cl.Topology,
			Memory: cl.Hardware.Memory, Tasks: tasks.String(), Sync: o.Sync, Seed: o.Seed, Samples: samples, Policy: o.Policy,
			PretrainSteps: pretrainSteps, PretrainTime: o.PretrainTime.Seconds(), Warmup: o.Warmup,
			SearchSteps: searchSteps, SearchTime: o.SearchTime.Seconds(), FinetuneSteps: finetuneSteps,
		}
		tag := fmt.Sprintf("[%d/%d] %s", i+1, len(fams), f)
		path := filepath.Join(dir, f+".json")
		cells = append(cells, grid.Cell[generalizationFile]{
			Key:  grid.Key{Graph: fmt.Sprintf("%s@%d", tests[f], cl.Devices), Method: "held-out " + f, Budget: generalizationBudget(set), Seed: o.Seed},
			File: f + ".json", Label: tag, Interrupted: interrupted,
			Strict: func(file string, err error) error {
				return fmt.Errorf("generalization: %s is not a family result (%v); remove it to run the family again", file, err)
			},
			Match: func(gf *generalizationFile) error { return gf.check(path, set) },
			Run: func(ctx context.Context) (generalizationFile, error) {
				row, err := generalizationFamily(ctx, o, f, tag, set, dir, pf)
				return generalizationFile{Format: GeneralizationFamilyFormat, Version: GeneralizationFamilyVersion, Settings: set, Row: row}, err
			},
			Line: func(gf *generalizationFile, kept bool) string {
				if kept {
					return fmt.Sprintf("finished in an earlier run (%s), skipped", path)
				}
				return fmt.Sprintf("done in %s (%s)", report.Seconds(gf.Row.WallTime), path)
			},
		})
	}
	gg := grid.Grid{Name: "generalization", Dir: dir, Progress: o.Progress, Work: o.Work}
	res, err := grid.Loop(ctx, gg, func() (grid.Results[generalizationFile], error) { return grid.All(ctx, gg, cells) })
	if o.Work != nil && o.Work.Mode == grid.List {
		return rep, err
	}
	for i, f := range res.Cells {
		g.Rows = append(g.Rows, f.Row)
		if res.Kept[i] {
			rep.Resumed = append(rep.Resumed, fams[i])
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return rep, err
	}
	g.Summary = placements.SummarizeGeneralization(g.Rows)
	if o.Plot != "" && len(g.Rows) > 0 {
		if err := report.WriteBarPlot(o.Plot, placements.GeneralizationPlot(*g)); err != nil {
			return rep, err
		}
		rep.Plot = o.Plot
	}
	return rep, ctx.Err()
}

// generalizationBudget names a family's budgets in --list-cells.
func generalizationBudget(s generalizationSettings) string {
	b := fmt.Sprintf("%d pretrain, %d search, %d fine-tune steps", s.PretrainSteps, s.SearchSteps, s.FinetuneSteps)
	if s.PretrainTime > 0 || s.SearchTime > 0 {
		b += fmt.Sprintf(" (pretrain %gs, search %gs)", s.PretrainTime, s.SearchTime)
	}
	return b
}

// generalizationFamilies checks and de-duplicates the held-out families.
func generalizationFamilies(names []string) ([]string, error) {
	if len(names) == 0 {
		return GeneralizationFamilies(), nil
	}
	var out []string
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" || slices.Contains(out, n) {
			continue
		}
		if !slices.Contains(jobs.HoldOutFamilies(), n) {
			return nil, fmt.Errorf("generalization: unknown family %q (want one of %s)", n, strings.Join(jobs.HoldOutFamilies(), ", "))
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("generalization: no family to hold out")
	}
	return out, nil
}

// check says whether a family's file, kept at path, is a family result
// made with settings want: an error naming the file if not.
func (f *generalizationFile) check(path string, want generalizationSettings) error {
	if f.Format != GeneralizationFamilyFormat || f.Version != GeneralizationFamilyVersion {
		return fmt.Errorf("generalization: %s is not a family result of version %d (format %q, version %d); remove it to run the family again", path, GeneralizationFamilyVersion, f.Format, f.Version)
	}
	if d := grid.Diff(f.Settings, want); d != "" {
		return fmt.Errorf("generalization: %s was made with other settings (%s); remove it or use another --dir", path, d)
	}
	return nil
}

// generalizationFamily runs one held-out family: pre-training, then GO-one,
// zero-shot and fine-tuning on its test graph.
func generalizationFamily(ctx context.Context, o GeneralizationOptions, fam, tag string, set generalizationSettings, dir string, pf func(string, ...any)) (placements.GeneralizationRow, error) {
	start := time.Now()
	row := placements.GeneralizationRow{Family: fam, Train: set.Train}
	test := graphSpec(set.Test)
	model := filepath.Join(dir, fam+".policy")
	out := func(method string) string {
		if o.Dir == "" {
			return ""
		}
		return filepath.Join(dir, fam+"-"+method+".json")
	}

	// Pre-training, resumed from this family's checkpoint when an earlier
	// run was interrupted.
	po := jobs.PretrainOptions{
		Workloads: o.Train, GraphsDir: o.GraphsDir, HoldOut: fam, Cluster: o.Cluster, Tasks: o.Tasks, Sync: o.Sync,
		Steps: o.PretrainSteps, Time: o.PretrainTime, Seed: o.Seed, Samples: set.Samples, Warmup: o.Warmup, Policy: o.Policy,
		Out: model, Progress: o.Progress,
	}
	if _, err := os.Stat(model); err == nil {
		_, st, err := gdp.LoadCheckpoint(model)
		if err != nil {
			return row, fmt.Errorf("generalization: %s: %w", fam, err)
		}
		if st.Seed != o.Seed || (set.PretrainSteps > 0 && st.Step > set.PretrainSteps) {
			return row, fmt.Errorf("generalization: %s was pre-trained with seed %d for %d steps, this run asks for seed %d and %d steps; remove it or use another --dir", model, st.Seed, st.Step, o.Seed, set.PretrainSteps)
		}
		po.Resume = model
		if o.PretrainTime > 0 {
			left := o.PretrainTime - time.Duration(st.Elapsed*float64(time.Second))
			po.Time = max(left, time.Nanosecond)
		}
		pf("%s held out: resuming pre-training from %s (step %d)", tag, model, st.Step)
	} else {
		pf("%s held out: pre-training on %d graphs (%s) for %s", tag, len(set.Train), strings.Join(set.Train, ", "), placements.StepsOrTime(set.PretrainSteps, set.PretrainTime))
	}
	if o.OnPretrainStep != nil {
		po.OnStep = func(pt gdp.PretrainPoint, steps int) { o.OnPretrainStep(fam, pt, steps) }
	}
	pr, err := jobs.Pretrain(ctx, po)
	if err != nil {
		return row, err
	}
	row.PretrainSteps, row.PretrainTime, row.PretrainStatus = pr.Steps, pr.Elapsed, pr.Status

	onStep := func(phase string) func(gdp.Point, float64, int) {
		if o.OnSearchStep == nil {
			return nil
		}
		return func(pt gdp.Point, ref float64, steps int) { o.OnSearchStep(fam, phase, pt, ref, steps) }
	}
	// GO-one: the baselines and a policy trained from scratch (go).
	pf("%s: baselines and GO-one on %s (%s)", tag, set.Test, placements.StepsOrTime(set.SearchSteps, set.SearchTime))
	so, err := jobs.SearchGraph(ctx, jobs.GraphSearchOptions{
		Graph: test, Cluster: o.Cluster, Tasks: o.Tasks, Method: "go", Steps: o.SearchSteps, Time: o.SearchTime, Seed: o.Seed, Samples: set.Samples,
		Sync: o.Sync, Policy: o.Policy, Out: out("go-one"), Progress: o.Progress, OnStep: searchStepOf(onStep("go-one")),
	})
	if err != nil {
		return row, err
	}
	c := so.Comparison
	row.Graph, row.Ops, row.Devices = c.Graph, c.Ops, c.Devices
	row.Reference, row.RefStep = so.Result.Reference, so.Result.RefStep
	row.Expert, row.Best = expertAndBest(c.Rows[:len(c.Rows)-1])
	row.GOOne = learnedRun(so)

	to := jobs.TransferOptions{Graph: test, Cluster: o.Cluster, Model: model, Tasks: o.Tasks, Sync: o.Sync, Seed: o.Seed, Samples: set.Samples}
	pf("%s: zero-shot on %s", tag, set.Test)
	to.Out = out("zero-shot")
	zs, err := jobs.Infer(ctx, to)
	if err != nil {
		return row, err
	}
	row.ZeroShot = learnedRun(zs)

	pf("%s: fine-tuning on %s for %d steps", tag, set.Test, set.FinetuneSteps)
	to.Out, to.Steps, to.OnStep = out("fine-tuned"), set.FinetuneSteps, onStep("fine-tune")
	ft, err := jobs.Finetune(ctx, to)
	if err != nil {
		return row, err
	}
	row.FineTuned = learnedRun(ft)
	row.WallTime = time.Since(start).Seconds()
	row.SetRatios()
	return row, ctx.Err()
}

// graphSpec reads a --test value: a built-in workload name or a file.
func graphSpec(s string) inputs.GraphSpec {
	if w, ok := workloads.Lookup(s); ok {
		return inputs.GraphSpec{Workload: w.Name}
	}
	return inputs.GraphSpec{Path: s}
}

// genRun turns a comparison row into a run.
func genRun(r placements.BaselinesRow) placements.GeneralizationRun {
	return placements.GeneralizationRun{
		Method: r.Method, StepTime: r.StepTime, WallTime: r.SearchTime, Evaluations: r.Evaluations,
		Valid: r.Error == "" && r.StepTime > 0 && !r.OOM && r.ColocationViolations == 0,
	}
}

// learnedRun is a learned method's run: the comparison's last row, with
// the result's steps.
func learnedRun(rep jobs.SearchReport) placements.GeneralizationRun {
	r := genRun(rep.Comparison.Rows[len(rep.Comparison.Rows)-1])
	r.Steps = rep.Result.Steps
	return r
}

// expertAndBest picks the expert row ("single" when the graph has no
// expert placement, as the comparison's reference does) and the best
// valid baseline (first in table order on a tie, as pipeline.Best).
func expertAndBest(rows []placements.BaselinesRow) (expert, best placements.GeneralizationRun) {
	for _, want := range []string{"expert", "single"} {
		if i := slices.IndexFunc(rows, func(r placements.BaselinesRow) bool { return r.Method == want && r.Error == "" }); i >= 0 {
			expert = genRun(rows[i])
			break
		}
	}
	best.Method = "none valid"
	for _, r := range rows {
		if gr := genRun(r); gr.Valid && (!best.Valid || gr.StepTime < best.StepTime) {
			best = gr
		}
	}
	return expert, best
}

// searchStepOf is f as Search's OnStep (steps: the budget's total).
func searchStepOf(f func(gdp.Point, float64, int)) func(gdp.Point, float64, int, int, string) {
	if f == nil {
		return nil
	}
	return func(pt gdp.Point, ref float64, _, total int, _ string) { f(pt, ref, total) }
}
