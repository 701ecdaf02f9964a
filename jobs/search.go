package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/placer/placer/evaluate/opcheck"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/fail"
	exportjob "github.com/placer/placer/jobs/export"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/anchored"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/nn/ppo"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/placements"
)

// GraphSearchOptions are the inputs of `placer search` for an op graph.
type GraphSearchOptions struct {
	Graph   inputs.GraphSpec
	Cluster inputs.ClusterSpec
	Tasks   string // "" = placement,scheduling,fusion
	// Method is the search that runs after the quick baselines ("" =
	// anchored.DefaultMethod): any of methods.Methods that searches.
	Method string
	// The search's budget, whichever is spent first; none named =
	// methods.DefaultSearchEvaluations (go: 100 steps). Evals and Steps give the
	// same result for the same seed; Time (wall) and CPU (this process's
	// CPU time) stop where the clock says.
	Evals int
	Steps int // go's PPO steps, or another method's rounds
	Time  time.Duration
	CPU   time.Duration
	Seed  uint64
	// Stages, for a graph from PyTorch, cuts every decision whose
	// replica has at least that many GPUs into exactly that many
	// contiguous stages (export.Realizer.Stages; 0 = as many as keep the
	// most work where the placement put it). An error for other graphs.
	Stages int
	// Samples is go's rollout size K (0 = 16).
	Samples int
	Methods []string // baselines to compare with and take the reference from (nil = methods.Quick())
	Budget  int      // evaluation budget of the search baselines among Methods (0 = their default)
	Sync    bool
	// Host models each GPU's host thread dispatching its kernels in
	// every evaluation, the baselines', the search's and the joint
	// space's (strategies, pipelines) alike (roofline.Options.Host; nil =
	// none, the default). ParseFlags makes it from HostOn and Dispatch,
	// the --host and --dispatch flags, as eval's Check does.
	Host     *roofline.Host
	HostOn   bool
	Dispatch time.Duration
	// HostByGraph gives a graph that records an eager PyTorch run (its
	// execution settings) the host model when Host is nil: the CLI's
	// default where --host is not given.
	HostByGraph bool
	// Objective is what the search and the baselines minimise (zero =
	// step time).
	Objective optimize.Objective
	Policy    *policy.Config // go's network; nil = defaults
	PPO       ppo.Settings
	Warmup    int // go's imitation steps (0 = its default; negative = none)
	// Backend makes the cost model and the evaluator (nil = Roofline).
	Backend Backend

	Out   string // result file ("" = none)
	Trace string // Chrome trace of the best decision ("" = none)
	Plot  string // the search's curve in milliseconds, .png/.svg/.pdf ("" = none)
	// Rows is a folder that gets every row's decision, the search's own
	// row's included: one result file per row and the index rows.json
	// (writeRows; "" = none).
	Rows string

	// Progress receives one line per finished baseline; OnStep the
	// search's progress: a point of its curve, the reference's value and
	// how much of the budget is spent (done of total in unit: "steps",
	// "evaluations", "s" or "CPU s"), and once more when the search
	// method ends, at the steps and evaluations its summary says.
	Progress io.Writer
	OnStep   func(pt gdp.Point, refStep float64, done, total int, unit string)
}

// SearchReport is what `placer search` prints: the comparison with the
// search's row added, and the search's own result.
type SearchReport struct {
	Comparison placements.Baselines `json:"comparison"`
	Result     placements.Result    `json:"result"`
	Out        string               `json:"out,omitempty"`
	Trace      string               `json:"trace,omitempty"`
	Plot       string               `json:"plot,omitempty"`
	// TrainMode is what the answer's plan changes in a PyTorch model's
	// train-mode step (a graph with the exporter's meta file beside it
	// that lists train_mode modules; nil when the plan changes none).
	TrainMode *exportjob.TrainMode `json:"train_mode,omitempty"`
	// Checked is what the graph's op kinds were checked against
	// (evaluate/opcheck; eval prints its table).
	Checked *opcheck.Report `json:"checked_against,omitempty"`
	// Costs says which of the answer's figures are measured and which
	// modelled, where an ops profile priced the graph (search --profile;
	// nil: none). Every row's ops are costed alike.
	Costs *placements.OpCosts `json:"costs,omitempty"`
	// Interrupted says, of a search stopped by a signal, so
	// ("interrupted by SIGINT"; "" for one that finished); NotRun are
	// the rows its table would have held and does not, Cut the rows
	// stopped part way (each its best so far).
	Interrupted string   `json:"interrupted,omitempty"`
	NotRun      []string `json:"not_run,omitempty"`
	Cut         []string `json:"cut_short,omitempty"`

	// rows are the table's rows' results by method name (nil for a
	// method that gave none; the search's own row is Result), and batch
	// the graph's batch: for the jobs built on a search (report parallel).
	rows  map[string]*optimize.Result
	batch int
}

// RowResult is the result of the table's row named method (nil for a
// method that gave none, or no such row; the search's own row is
// Result).
func (r *SearchReport) RowResult(method string) *optimize.Result { return r.rows[method] }

// Batch is the graph's batch (0 = no batch information).
func (r *SearchReport) Batch() int { return r.batch }

// SearchGraph runs placer's search (methods/anchored: the quick baselines
// with their compositions, their decisions on fewer GPUs and fusion
// variants, the strategies users run, the search method anchored on the
// best of them and the joint space) on one graph and returns the
// comparison with the search's row. Its answer is never worse than a row
// of its own table: when the search does not improve on the best row, the
// result is that row's decision, and the report says so (Result.Source).
// When ctx is cancelled (Ctrl-C) it still returns, and writes, the best
// result found so far.
func SearchGraph(ctx context.Context, o GraphSearchOptions) (SearchReport, error) {
	tasks, err := ParseTasks(o.Tasks)
	if err != nil {
		return SearchReport{}, err
	}
	method := cmp.Or(o.Method, anchored.DefaultMethod)
	pp, b, err := newComparisonWith(o.Graph, o.Cluster, tasks, roofline.Options{SyncTransfers: o.Sync, Host: o.Host}, o.Backend, o.HostByGraph)
	if err != nil {
		return SearchReport{}, err
	}
	defer pp.Close()
	pp.placementOnly()
	if o.Stages != 0 {
		if pp.realizer == nil || o.Stages < 0 {
			return SearchReport{}, fail.Usagef("--stages %d: for a graph from PyTorch (tools/dev/torchexport's X.meta.json beside X.json), at least 1", o.Stages)
		}
		pp.realizer.Stages = o.Stages
	}
	p := pp.Problem
	p.Objective, b.Objective = o.Objective, o.Objective.String()
	b.Host = setupHostNote(pp, o.Dispatch)
	setBase(p)
	s := &anchored.Search{Method: method, References: o.Methods, ReferenceBudget: o.Budget, Resize: pp.resize,
		Options: methods.Options{Policy: o.Policy, PPO: o.PPO, Samples: o.Samples, Warmup: o.Warmup}}
	budget := optimize.Budget{Evaluations: o.Evals, Steps: o.Steps, Time: o.Time, CPU: o.CPU}
	whole := s.Budget(budget, p.Graph.NumOps())
	b.SearchBudget = describeBudget(whole)
	if budget == (optimize.Budget{}) {
		b.SearchBudget += fmt.Sprintf(" (the default for %d ops)", p.Graph.NumOps())
	}
	rec, final := o.recorder(p, whole)
	out, err := s.Run(ctx, p, &optimize.Settings{Budget: budget, Seed: o.Seed, Recorder: rec})
	if out == nil {
		return SearchReport{}, err
	}
	final(out.Own)
	b.Rows = tableRows(out.Rows, p)
	b.Reference, b.RefStep = reference(ctx, p, out.Rows)
	b.Rows = append(b.Rows, tableRows(out.Joint, p)...)
	l := learned{method: method, res: out.Result, refName: out.Reference.Name, refStep: out.RefStep, elapsed: out.Elapsed, source: out.Source}
	if out.Source != "" {
		l.own = out.Own
	}
	rep, err := learnedReport(p, b, l, o.Seed, o.Out)
	if budget == (optimize.Budget{}) {
		rep.Result.BudgetNote = fmt.Sprintf("the default budget for %d ops, %s (%s's share and the joint space's rows); --evals N, --cpu T or --time T searches longer (docs/search.md)",
			p.Graph.NumOps(), describeBudget(whole), method)
	}
	rep.rows, rep.batch = anchored.Results(append(out.Rows, out.Joint...)), p.Graph.Batch()
	if ctx.Err() != nil {
		rep.Interrupted, rep.NotRun = interruptedBy(ctx), out.NotRun
		for _, r := range append(append(slices.Clone(out.Rows), out.Joint...), anchored.Row{Name: method, Result: out.Own}) {
			if r.Result != nil && r.Result.Stats.Status == optimize.Cancelled {
				rep.Cut = append(rep.Cut, r.Name)
			}
		}
	}
	if err != nil {
		return rep, err
	}
	if pp.in.Profile == nil { // as eval: the costs' lines stand for it
		if rep.Checked, err = checkedAgainst(p.Graph, pp.cluster(), pp.opts, rep.Result.Decision.Decision().Device); err != nil {
			return rep, err
		}
	}
	if pp.in.Profile != nil && len(rep.Result.Decision.Device) == p.Graph.NumOps() {
		d := rep.Result.Decision.Decision()
		if rep.Costs, err = opCosts(pp.in.Profile, pp.in.ProfilePath, p.Graph, pp.cluster(), pp.opts, d.Device, d.Strategy); err != nil {
			return rep, err
		}
		rep.Costs.Moved(rep.Result.BytesMoved)
		rep.Costs.Of = "the answer"
		if !d.Strategy.IsZero() {
			rep.Costs.Of += " (" + d.Strategy.String() + ")"
		}
	}
	if pp.realizer != nil {
		d := rep.Result.Decision.Decision() // realized: one stage a GPU used
		rep.TrainMode = exportjob.TrainModeOf(pp.realizer.Meta(), d.Strategy, usedDevices(d.Device), p.Graph.Batch())
	}
	if o.Rows != "" {
		// The table's rows in its order: the references, the strategies,
		// the joint space's, the search's own (learnedReport's last line).
		all := append(append(slices.Clone(out.Rows), out.Joint...), anchored.Row{Name: method, Result: out.Own, Elapsed: out.Elapsed})
		answer := cmp.Or(out.Source, method)
		if err := writeRows(o.Rows, p, &rep.Comparison, all, answer, o.Seed); err != nil {
			return rep, err
		}
	}
	if o.Trace != "" {
		if err := writeTrace(ctx, p, l.res.Decision, o.Trace); err != nil {
			return rep, err
		}
		rep.Trace = o.Trace
	}
	if o.Plot != "" {
		// Written whatever the search ran: a search too short for its
		// curve's first point still has its end and the answer to draw.
		answer := answerLine{name: cmp.Or(out.Source, method), step: out.Result.Eval.StepTime}
		if err := report.WritePlot(o.Plot, curvePlot(p.Graph.Name(), method, l.refName, l.refStep, curveOf(out.Own), answer)); err != nil {
			return rep, err
		}
		rep.Plot = o.Plot
	}
	return rep, ctx.Err()
}

// recorder is the search's progress as o asks for it: a line per row
// finished on o.Progress, and o.OnStep for each point of the search
// method's curve with how much of budget it has spent. final reports the
// search method's result, own, as the last point: a curve has a point
// every few rounds, and the progress ends where the summary does.
func (o *GraphSearchOptions) recorder(p *optimize.Problem, budget optimize.Budget) (rec optimize.Recorder, final func(own *optimize.Result)) {
	rows := rowPrinter(p, o.Progress)
	if o.OnStep == nil {
		return rows, func(*optimize.Result) {}
	}
	var once sync.Once
	var cpu0 time.Duration
	var mu sync.Mutex
	var last *gdp.Point
	var ref float64
	final = func(own *optimize.Result) {
		mu.Lock()
		b, pt := budget, last
		mu.Unlock()
		if own == nil || pt == nil {
			return
		}
		end := *pt
		end.Step, end.Evaluations, end.Elapsed = own.Stats.Steps, own.Stats.Evaluations, own.Stats.Elapsed.Seconds()
		if own.Stats.BestStep > 0 {
			end.BestStep, end.Best = own.Stats.BestStep, own.Stats.Best
		}
		done, total, unit := spent(b, end, optimize.ProcessCPU()-cpu0)
		o.OnStep(end, ref, done, total, unit)
	}
	return optimize.RecorderFunc(func(e optimize.Event) {
		switch e.Kind {
		case optimize.Share:
			// The search method's share: its progress counts against
			// what it will spend, not the joint space's rows' part.
			mu.Lock()
			budget = e.Budget
			mu.Unlock()
		case optimize.Done:
			if rows != nil {
				rows.Record(e)
			}
		case optimize.Point:
			once.Do(func() { cpu0 = optimize.ProcessCPU() })
			mu.Lock()
			b := budget
			pt := *e.Point
			last, ref = &pt, e.RefStep
			mu.Unlock()
			done, total, unit := spent(b, pt, optimize.ProcessCPU()-cpu0)
			o.OnStep(pt, e.RefStep, done, total, unit)
		}
	}), final
}

// spent is how much of budget a search has used at point pt, after cpu
// of CPU time: done of total in the unit of the budget that binds first
// (steps, evaluations, or seconds of wall or CPU time).
func spent(b optimize.Budget, pt gdp.Point, cpu time.Duration) (done, total int, unit string) {
	frac := -1.0
	try := func(x, of float64, dx, of2 int, u string) {
		if of > 0 && x/of > frac {
			frac, done, total, unit = x/of, dx, of2, u
		}
	}
	try(float64(pt.Step), float64(b.Steps), pt.Step, b.Steps, "steps")
	try(float64(pt.Evaluations), float64(b.Evaluations), pt.Evaluations, b.Evaluations, "evaluations")
	try(pt.Elapsed, b.Time.Seconds(), int(pt.Elapsed), int(b.Time.Seconds()), "s")
	try(cpu.Seconds(), b.CPU.Seconds(), int(cpu.Seconds()), int(b.CPU.Seconds()), "CPU s")
	return done, total, unit
}

// answerLine is the search's answer as its plot draws it: the row
// whose decision it is (the search method's own, or the best row's
// where the search did not improve on it) and its step time (seconds).
type answerLine struct {
	name string
	step float64
}

// curveOf is the search method's curve as its plot draws it: its
// points, and its result's end (the evaluations it spent and its best
// step) where the last point falls short of it, so that a search of a
// few evaluations, which records no point, still has one.
func curveOf(own *optimize.Result) []gdp.Point {
	if own == nil {
		return nil
	}
	var curve []gdp.Point
	if own.Learning != nil {
		curve = slices.Clone(own.Learning.Curve)
	}
	end := gdp.Point{Step: own.Stats.Steps, Evaluations: own.Stats.Evaluations, BestStep: own.Stats.BestStep}
	if end.BestStep > 0 && (len(curve) == 0 || curve[len(curve)-1].Evaluations < end.Evaluations) {
		curve = append(curve, end)
	}
	return curve
}

// curvePlot draws the best step time found so far (milliseconds)
// against the evaluations spent, with the reference's step time and
// the answer returned (the search's own best, or the row it did not
// improve on), each a level line across the curve's evaluations. A
// curve of one point is drawn as its mark.
func curvePlot(graphName, method, refName string, refStep float64, curve []gdp.Point, answer answerLine) report.Plot {
	var x, best []float64
	for _, pt := range curve {
		if pt.BestStep > 0 {
			x = append(x, float64(pt.Evaluations))
			best = append(best, pt.BestStep*1e3)
		}
	}
	series := []report.Series{{Name: "best so far (" + method + ")", X: x, Y: best, Marks: len(x) == 1}}
	last := 1.0
	if len(x) > 0 {
		last = max(x[len(x)-1], 1)
	}
	if refStep > 0 {
		series = append(series, report.Series{Name: fmt.Sprintf("reference: %s (%s)", refName, report.Seconds(refStep)),
			X: []float64{0, last}, Y: []float64{refStep * 1e3, refStep * 1e3}, Dash: true})
	}
	if answer.step > 0 {
		series = append(series, report.Series{Name: fmt.Sprintf("answer returned: %s (%s)", answer.name, report.Seconds(answer.step)),
			X: []float64{0, last}, Y: []float64{answer.step * 1e3, answer.step * 1e3}, Dot: true})
	}
	return report.Plot{
		Title: fmt.Sprintf("%s on %s", method, graphName), XLabel: "evaluations", YLabel: "step time (ms)",
		Series: series, LegendTop: true,
	}
}

// usedDevices is how many distinct devices a placement uses.
func usedDevices(dev []int) int {
	seen := map[int]bool{}
	for _, k := range dev {
		seen[k] = true
	}
	return len(seen)
}

// describeBudget says a budget in words: "3271 evaluations", "10 steps or
// 1m0s CPU".
func describeBudget(b optimize.Budget) string {
	var parts []string
	if b.Evaluations > 0 {
		parts = append(parts, fmt.Sprintf("%d evaluations", b.Evaluations))
	}
	if b.Steps > 0 {
		parts = append(parts, fmt.Sprintf("%d steps", b.Steps))
	}
	if b.Time > 0 {
		parts = append(parts, b.Time.String()+" wall")
	}
	if b.CPU > 0 {
		parts = append(parts, b.CPU.String()+" CPU")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " or ")
}

// interruptedBy is what stopped ctx: "interrupted by SIGINT" where a
// signal did (fail.Interrupted, its cause), else "interrupted".
func interruptedBy(ctx context.Context) string {
	var in fail.Interrupted
	if errors.As(context.Cause(ctx), &in) {
		return in.Error()
	}
	return "interrupted"
}
