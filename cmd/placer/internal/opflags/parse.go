package opflags

// The commands' raw flag values parsed and checked into the jobs'
// options, in the order the CLI has always checked them (the first
// mistake is the one reported): a mistake is a usage error (exit 2)
// naming the flag; jobs itself names no flags.

import (
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/placer/placer/cmd/placer/internal/cellflags"
	"github.com/placer/placer/cmd/placer/internal/worldflags"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/evaluate/roofline/convlayout"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/reports"
	"github.com/placer/placer/jobs/tunebrkga"
	"github.com/placer/placer/methods/brkga/tuned"
	"github.com/placer/placer/methods/gdp/defaultmodel"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
)

// CheckEval checks eval's options for an op graph as its flags give
// them.
func CheckEval(g *jobs.GraphEvalOptions) error {
	if err := CheckGraphOrProfile(g.Graph, g.Cluster); err != nil {
		return err
	}
	if g.Cluster.GPUs < 0 {
		return fail.Usagef("--gpus %d: must be at least 1", g.Cluster.GPUs)
	}
	if err := worldflags.CheckStrategy(inputs.OpGraph, g.Strategy); err != nil {
		return err
	}
	if _, err := roofline.ParseTF32(g.TF32); err != nil {
		return fail.Usagef("--%v", err)
	}
	if _, err := convlayout.Parse(g.MemoryFormat); err != nil {
		return fail.Usagef("--%v", err)
	}
	var err error
	g.Host, err = HostModel(g.HostOn, g.Dispatch, false)
	return err
}

// HostModel is the host-side model the --host and --dispatch flags ask
// for (jobs.HostModel; nil: none). measure says --measure was given: the
// GPUs then run their own host, and the flags are refused.
func HostModel(on bool, dispatch time.Duration, measure bool) (*roofline.Host, error) {
	if dispatch < 0 {
		return nil, fail.Usagef("--dispatch %v: must be 0 or more", dispatch)
	}
	if !on && dispatch == 0 {
		return nil, nil
	}
	if measure {
		return nil, fail.Usagef("--host and --dispatch model the host in the roofline model; --measure runs the real one: give one")
	}
	return jobs.HostModel(on, dispatch), nil
}

// Evaluation is the host model (--host, --dispatch) and the backend
// (--measure on this machine's GPUs, --repeats timed runs; nil = the
// roofline model) that score a comparison's decisions.
func Evaluation(host bool, dispatch time.Duration, measure bool, repeats int) (*roofline.Host, jobs.Backend, error) {
	h, err := HostModel(host, dispatch, measure)
	if err != nil || !measure {
		return h, nil, err
	}
	return h, jobs.GPUs(repeats), nil
}

// BaselinesFlags are the baselines command's flags besides
// jobs.BaselinesOptions' own: --measure and --repeats.
type BaselinesFlags struct {
	Measure bool
	Repeats int
	HostSet bool // --host was given (on or off)
}

// ParseBaselines checks o and fills its Backend from f.
func ParseBaselines(o *jobs.BaselinesOptions, f BaselinesFlags) error {
	if err := CheckGraphGiven(o.Graph); err != nil {
		return err
	}
	if o.Cluster.GPUs < 0 {
		return fail.Usagef("--gpus %d: must be at least 1", o.Cluster.GPUs)
	}
	if o.Budget < 0 {
		return fail.Usagef("--budget %d: must be positive (0 = each method's default)", o.Budget)
	}
	if o.Time < 0 || o.CPU < 0 {
		return fail.Usagef("--time and --cpu must be positive")
	}
	if err := methodsAndHost(o.Methods, o.HostOn, o.Dispatch, f.Measure, f.Repeats, f.HostSet, &o.Host, &o.Backend, &o.HostByGraph); err != nil {
		return err
	}
	if o.Tasks != "" {
		if t, err := optimize.ParseTasks(o.Tasks); err != nil || t == (optimize.Tasks{}) {
			return fail.Usagef("--tasks %q: want a comma-separated list of placement, scheduling, fusion", o.Tasks)
		}
	}
	return nil
}

// ParseSearch checks the search's options for an op graph and fills
// their methods, backend, policy and PPO settings from s.Flags.
func ParseSearch(s *Search) error {
	o, f := &s.GraphSearchOptions, s.Flags
	if err := CheckGraphOrProfile(o.Graph, o.Cluster); err != nil {
		return err
	}
	if o.Steps < 0 || o.Samples < 0 || o.Evals < 0 {
		return fail.Usagef("--steps, --evals and --samples must not be negative")
	}
	if o.Time < 0 || o.CPU < 0 {
		return fail.Usagef("--time and --cpu must not be negative")
	}
	if o.Method != "" {
		if err := CheckSearchMethod(o.Method); err != nil {
			return fail.Usagef("--method: %v", err)
		}
	}
	if err := CheckTaskList(o.Tasks); err != nil {
		return err
	}
	if f.Methods != "" {
		o.Methods = strings.Split(f.Methods, ",")
	}
	if err := methodsAndHost(o.Methods, o.HostOn, o.Dispatch, f.Measure, f.Repeats, f.HostSet, &o.Host, &o.Backend, &o.HostByGraph); err != nil {
		return err
	}
	var err error
	o.Policy, o.PPO, err = f.Train.Parse()
	return err
}

// methodsAndHost is what baselines and an op graph's search check and
// fill alike: the methods (--methods), then the host model and the
// backend (Evaluation: host and backend set even where it fails), and,
// where it does not, whether a graph's record decides the host: without
// --host (hostSet false) it does (jobs' HostByGraph); the GPUs of
// --measure run their own host.
func methodsAndHost(methods []string, hostOn bool, dispatch time.Duration, measure bool, repeats int, hostSet bool,
	host **roofline.Host, backend *jobs.Backend, byGraph *bool) error {
	if err := CheckUserMethodList("--methods", methods); err != nil {
		return err
	}
	var err error
	if *host, *backend, err = Evaluation(hostOn, dispatch, measure, repeats); err != nil {
		return err
	}
	*byGraph = !hostSet && !measure
	return nil
}

// PretrainFlags are the pretrain command's flags besides
// jobs.PretrainOptions' own.
type PretrainFlags struct {
	Workloads  string // --workloads, comma-separated
	VisitEvals int    // --visit-evals: PerVisit's evaluations
	Train      Train
	// LRGiven says whether --lr was given: go-scored has its own default
	// otherwise.
	LRGiven bool
	// ListCells (--list-cells) and Cell (--cell: an index, "all", or ""
	// = the array index of arrayIndexVars when one is set, else all) run
	// pre-training in rounds as cells; Out receives the list; Getenv
	// reads the environment (nil = os.Getenv).
	ListCells bool
	Cell      string
	Out       io.Writer
	Getenv    func(string) string
}

// ParsePretrain checks o and fills its workloads, policy, PPO
// settings and visits from f.
func ParsePretrain(o *jobs.PretrainOptions, f PretrainFlags) error {
	if f.Workloads != "" {
		o.Workloads = strings.Split(f.Workloads, ",")
	}
	if len(o.Workloads) == 0 && o.GraphsDir == "" {
		return fail.Usagef("give --workloads LIST or --graphs DIR")
	}
	if o.Out == "" {
		return fail.Usagef("give --out MODEL (the model file to write)")
	}
	if o.Cluster.GPUs < 1 || o.Cluster.GPUs > 8 {
		return fail.Usagef("give --gpus N (1 to 8)")
	}
	if o.Steps < 0 || o.Samples < 0 || o.CheckpointEvery < 0 || o.Time < 0 {
		return fail.Usagef("--steps, --samples, --checkpoint-every and --time must not be negative")
	}
	if err := CheckTaskList(o.Tasks); err != nil {
		return err
	}
	if o.HoldOut != "" && !slices.Contains(jobs.HoldOutFamilies(), strings.ToLower(o.HoldOut)) {
		return fail.Usagef("--hold-out: unknown family %q (want one of %s)", o.HoldOut, strings.Join(jobs.HoldOutFamilies(), ", "))
	}
	for _, n := range o.ExtraGPUs {
		if n < 1 || n > 8 || n == o.Cluster.GPUs {
			return fail.Usagef("--extra-gpus: %d; want counts of 1 to 8 other than --gpus", n)
		}
	}
	var err error
	if o.Policy, o.PPO, err = f.Train.Parse(); err != nil {
		return err
	}
	if f.VisitEvals < 1 {
		return fail.Usagef("--visit-evals %d: want at least 1", f.VisitEvals)
	}
	o.PerVisit = optimize.Budget{Evaluations: f.VisitEvals}
	if o.Workers != 0 || o.Rounds != "" {
		switch {
		case o.Workers < 1 || o.Rounds == "":
			return fail.Usagef("--workers K and --rounds DIR go together: K visits a round, in the folder DIR every worker shares")
		case o.Steps < 1 || o.Time > 0:
			return fail.Usagef("--workers: give --steps (the visits or steps in all) and no --time: the model must not depend on how fast a worker is")
		case o.Resume != "" && !o.Scored:
			return fail.Usagef("--workers: no --resume: the rounds folder is the checkpoint (a worker started again goes on from its last round)")
		}
	}
	if o.Scored && !f.LRGiven {
		o.PPO.LearningRate = 0 // go-scored's own
	}
	return parsePretrainCells(o, f)
}

// parsePretrainCells reads --list-cells and --cell (or the array index a
// cluster gives a task) for pre-training in rounds: its cells are the
// visits.
func parsePretrainCells(o *jobs.PretrainOptions, f PretrainFlags) error {
	cell := strings.TrimSpace(f.Cell)
	if f.ListCells && cell != "" {
		return fail.Usagef("--list-cells and --cell: give one")
	}
	if (f.ListCells || (cell != "" && cell != "all")) && o.Workers == 0 {
		return fail.Usagef("--list-cells and --cell: pre-training runs as cells in synchronous rounds: give --workers K --rounds DIR --steps N")
	}
	if o.Workers == 0 {
		return nil // the environment's array index is not ours to read
	}
	if f.ListCells {
		o.ListCells = f.Out
		return nil
	}
	unit := "step"
	if o.Scored {
		unit = "visit"
	}
	var err error
	o.OneCell, o.Cell, err = cellflags.RoundsCell(cell, f.Getenv, o.Steps, unit)
	return err
}

// CheckTransfer checks the flags infer and finetune share.
func CheckTransfer(o *jobs.TransferOptions) error {
	if err := CheckGraphGiven(o.Graph); err != nil {
		return err
	}
	if o.Samples < 0 || o.Steps < 0 || o.Time < 0 {
		return fail.Usagef("--samples, --steps and --time must not be negative")
	}
	if o.Tasks != "" {
		if err := CheckTaskList(o.Tasks); err != nil {
			return err
		}
	}
	if o.Model == "" && !defaultmodel.Available() {
		return fail.Usagef("%v", defaultmodel.ErrMissing)
	}
	return nil
}

// CheckInfer checks o as infer's flags give it.
func CheckInfer(o *jobs.TransferOptions) error {
	if err := CheckTransfer(o); err != nil {
		return err
	}
	if o.Refine < 0 {
		return fail.Usagef("--refine %v: want a duration of at least 0", o.Refine)
	}
	if o.RefineEvals < 0 {
		return fail.Usagef("--refine-evals %d: want at least 0", o.RefineEvals)
	}
	return nil
}

// FinetuneFlags are the finetune command's flags besides
// jobs.TransferOptions' own.
type FinetuneFlags struct {
	PPO PPO
	// StepsGiven says whether --steps was given: --time alone means no
	// step limit.
	StepsGiven bool
}

// ParseFinetune checks o as finetune's flags give it and fills its
// step limit and PPO settings from f.
func ParseFinetune(o *jobs.TransferOptions, f FinetuneFlags) error {
	if err := CheckTransfer(o); err != nil {
		return err
	}
	if o.Time > 0 && !f.StepsGiven {
		o.Steps = 0 // --time alone: no step limit
	}
	if o.Steps == 0 && o.Time == 0 {
		return fail.Usagef("--steps 0 needs --time")
	}
	var err error
	o.PPO, err = f.PPO.Settings()
	return err
}

// GeneralizationFlags are the generalization report's flags besides
// reports.GeneralizationOptions' own.
type GeneralizationFlags struct {
	Families, Train string // comma-separated lists
	Policy          string // --policy: see ParsePolicy
	// PretrainStepsGiven and SearchStepsGiven say whether
	// --pretrain-steps and --search-steps were given: a time alone means
	// no step limit.
	PretrainStepsGiven, SearchStepsGiven bool
	Cells                                cellflags.Flags
}

// ParseGeneralization checks o and fills its families, training
// workloads, step limits and policy from f.
func ParseGeneralization(o *reports.GeneralizationOptions, f GeneralizationFlags) error {
	if f.Families != "" {
		o.Families = strings.Split(f.Families, ",")
		for _, fam := range o.Families {
			if !slices.Contains(jobs.HoldOutFamilies(), strings.ToLower(strings.TrimSpace(fam))) {
				return fail.Usagef("--families: unknown family %q (want one of %s)", fam, strings.Join(jobs.HoldOutFamilies(), ", "))
			}
		}
	}
	if f.Train != "" {
		o.Train = strings.Split(f.Train, ",")
	}
	for fam := range o.Test {
		if !slices.Contains(jobs.HoldOutFamilies(), fam) {
			return fail.Usagef("--test: unknown family %q (want FAMILY=NAME|FILE, FAMILY one of %s)", fam, strings.Join(jobs.HoldOutFamilies(), ", "))
		}
	}
	if o.Cluster.GPUs < 1 || o.Cluster.GPUs > 8 {
		return fail.Usagef("--gpus %d: want 1 to 8 (the policy places on at most 8)", o.Cluster.GPUs)
	}
	if o.PretrainSteps < 0 || o.SearchSteps < 0 || o.FinetuneSteps < 1 || o.Samples < 0 || o.PretrainTime < 0 || o.SearchTime < 0 {
		return fail.Usagef("--pretrain-steps, --search-steps, --samples and the times must not be negative, --finetune-steps at least 1")
	}
	// A time alone means no step limit.
	if o.PretrainTime > 0 && !f.PretrainStepsGiven {
		o.PretrainSteps = 0
	}
	if o.SearchTime > 0 && !f.SearchStepsGiven {
		o.SearchSteps = 0
	}
	if o.PretrainSteps == 0 && o.PretrainTime == 0 {
		return fail.Usagef("--pretrain-steps 0 needs --pretrain-time")
	}
	if o.SearchSteps == 0 && o.SearchTime == 0 {
		return fail.Usagef("--search-steps 0 needs --search-time")
	}
	if err := CheckTaskList(o.Tasks); err != nil {
		return err
	}
	if o.Plot != "" {
		if err := report.CheckPlotPath(o.Plot); err != nil {
			return fail.Usagef("--plot: %v", err)
		}
	}
	cfg, err := ParsePolicy(f.Policy)
	if err != nil {
		return fail.Usagef("%v", err)
	}
	o.Policy, o.PolicyName = cfg, f.Policy
	o.Work, err = f.Cells.Work(&o.Dir, false)
	return err
}

// EqualTimeFlags are the equal-time report's flags besides
// reports.EqualTimeOptions' own.
type EqualTimeFlags struct {
	Graphs, Methods, Budgets string // comma-separated lists
	Seeds                    string // --seeds, comma-separated
	SeedGiven                bool   // whether --seed was given
	Plot                     string // --plot FILE, checked here, drawn by the CLI
	Cells                    cellflags.Flags
}

// ParseEqualTime checks o and fills its graphs, methods, budgets and
// seeds from f.
func ParseEqualTime(o *reports.EqualTimeOptions, f EqualTimeFlags) error {
	var err error
	if o.Graphs, o.Methods, o.Budgets, err = ComparisonLists(f.Graphs, f.Methods, f.Budgets, "1m,5m,30m"); err != nil {
		return err
	}
	if f.Seeds != "" {
		if f.SeedGiven {
			return fail.Usagef("--seed and --seeds: give one")
		}
		if o.Seeds, err = ParseSeeds(f.Seeds); err != nil {
			return err
		}
	}
	if o.Cluster.GPUs < 0 || o.Cluster.GPUs > 8 {
		return fail.Usagef("--gpus %d: want 1 to 8, or 0 for each workload's table-2 count", o.Cluster.GPUs)
	}
	if f.Plot != "" {
		if err := report.CheckPlotPath(f.Plot); err != nil {
			return fail.Usagef("--plot: %v", err)
		}
	}
	o.Work, err = f.Cells.Work(&o.Dir, o.NoRun)
	return err
}

// LearnedFlags are the learned report's flags besides
// reports.LearnedOptions' own.
type LearnedFlags struct {
	Graphs, Methods, Budgets string // comma-separated lists
	PlotFormat               string // --plot-format: png, svg or pdf
	Cells                    cellflags.Flags
}

// ParseLearned checks o and fills its graphs, methods and budgets
// from f.
func ParseLearned(o *reports.LearnedOptions, f LearnedFlags) error {
	var err error
	if o.Graphs, o.Methods, o.Budgets, err = ComparisonLists(f.Graphs, f.Methods, f.Budgets, "5m,15m,30m"); err != nil {
		return err
	}
	if o.Cluster.GPUs < 0 || o.Cluster.GPUs > 8 {
		return fail.Usagef("--gpus %d: want 1 to 8, or 0 for each workload's table-2 count", o.Cluster.GPUs)
	}
	if o.NoRun && o.Dir == "" {
		return fail.Usagef("--no-run reports the cells kept in --dir: give --dir")
	}
	if err := report.CheckPlotPath("plot." + f.PlotFormat); err != nil {
		return fail.Usagef("--plot-format: %v", err)
	}
	o.Work, err = f.Cells.Work(&o.Dir, o.NoRun)
	return err
}

// RegalFlags are the regal report's flags besides reports.RegalOptions' own.
type RegalFlags struct {
	Graphs, Methods, CurveMethods string // comma-separated lists
	Objectives                    string // comma-separated objectives
	Budgets                       string // comma-separated evaluation counts
	Plot                          string // --plot FILE, checked here, drawn by the CLI
	Cells                         cellflags.Flags
}

// ParseRegal checks o and fills its graphs, methods, objectives and
// budgets from f.
func ParseRegal(o *reports.RegalOptions, f RegalFlags) error {
	if f.Graphs != "" {
		o.Graphs = strings.Split(f.Graphs, ",")
	}
	for _, l := range []struct {
		s   string
		dst *[]string
		tag string
	}{{f.Methods, &o.Methods, "--methods"}, {f.CurveMethods, &o.CurveMethods, "--curve-methods"}} {
		if l.s == "" {
			continue
		}
		*l.dst = strings.Split(l.s, ",")
		if err := CheckMethodList(l.tag, *l.dst); err != nil {
			return err
		}
	}
	objs, err := ParseObjectiveList(f.Objectives)
	if err != nil {
		return err
	}
	o.Objectives = append(o.Objectives, objs...)
	for _, b := range strings.Split(f.Budgets, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(b))
		if err != nil || n < 1 {
			return fail.Usagef("--budgets %q: want positive evaluation counts, e.g. 5000,10000,50000", f.Budgets)
		}
		o.Budgets = append(o.Budgets, n)
	}
	if o.Evaluations < 1 || o.BestBudget < 0 {
		return fail.Usagef("--evaluations %d, --best-budget %d: want positive counts", o.Evaluations, o.BestBudget)
	}
	if o.Cluster.GPUs < 1 || o.Cluster.GPUs > 8 {
		return fail.Usagef("--gpus %d: want 1 to 8", o.Cluster.GPUs)
	}
	if f.Plot != "" {
		if err := report.CheckPlotPath(f.Plot); err != nil {
			return fail.Usagef("--plot: %v", err)
		}
	}
	if o.NoRun && o.Dir == "" {
		return fail.Usagef("--no-run reports the cells kept in --dir: give --dir")
	}
	o.Work, err = f.Cells.Work(&o.Dir, o.NoRun)
	return err
}

// BRKGATuneFlags are the tune-brkga command's flags besides
// tunebrkga.Options' own.
type BRKGATuneFlags struct {
	Objectives string // comma-separated objectives
	Beta       bool   // also try U-shaped Beta(0.5, 0.5) mutant genes
}

// ParseBRKGATune checks o and fills its objectives and grid from f.
func ParseBRKGATune(o *tunebrkga.Options, f BRKGATuneFlags) error {
	objs, err := ParseObjectiveList(f.Objectives)
	if err != nil {
		return err
	}
	o.Objectives = append(o.Objectives, objs...)
	if o.Graphs < 1 || o.Evaluations < 1 {
		return fail.Usagef("--train-graphs %d, --evaluations %d: want at least 1", o.Graphs, o.Evaluations)
	}
	if f.Beta {
		o.Grid = tuned.BetaGrid
	}
	return nil
}
