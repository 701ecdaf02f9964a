package jobs

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/jobs/inputs"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/nn/ppo"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
)

// SearchStrategyMethods are the strategies a search compares with when the
// graph has a batch (rows of its table, never its anchor).
var SearchStrategyMethods = methods.Splitting()

// SearchReferenceMethods are the baselines a search runs first when none
// are named: the quick deterministic ones (methods.Quick). The best valid
// one normalizes the reward and is the policy's warm-up target.
var SearchReferenceMethods = methods.Quick()

// DefaultSearchMethod is what `placer search` runs when no --method is
// named: the method that leads placer's own equal-CPU comparison on GO's
// 14 graphs (go-scored: anchored local search whose moves a learned head
// picks; docs/methods.md says how the methods were chosen and compared).
const DefaultSearchMethod = "go-scored"

// DefaultSearchEvaluations is the search's budget when none is named
// (for every method but go, which counts PPO steps: 100).
const DefaultSearchEvaluations = 10000

// SearchOptions are the inputs of `placer search`.
type SearchOptions struct {
	Graph   inputs.GraphSpec
	Cluster inputs.ClusterSpec
	Tasks   string // "" = placement,scheduling,fusion
	// Method is the search that runs after the quick baselines ("" =
	// DefaultSearchMethod): any of methods.Methods that searches.
	Method string
	// The search's budget, whichever is spent first; none named =
	// DefaultSearchEvaluations (go: 100 steps). Evals and Steps give the
	// same result for the same seed; Time (wall) and CPU (this process's
	// CPU time) stop where the clock says.
	Evals int
	Steps int // go's PPO steps, or another method's rounds
	Time  time.Duration
	CPU   time.Duration
	Seed  uint64
	// Samples is go's rollout size K (0 = 16).
	Samples int
	Methods []string // baselines to compare with and take the reference from (nil = SearchReferenceMethods)
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

	// Progress receives one line per finished baseline; OnStep the
	// search's progress: a point of its curve, the reference's value and
	// how much of the budget is spent (done of total, in the budget's unit:
	// steps, evaluations or seconds).
	Progress io.Writer
	OnStep   func(pt gdp.Point, refStep float64, done, total int)
}

// SearchReport is what `placer search` prints: the comparison with the
// search's row added, and the search's own result.
type SearchReport struct {
	Comparison report.Baselines `json:"comparison"`
	Result     report.Result    `json:"result"`
	Out        string           `json:"out,omitempty"`
	Trace      string           `json:"trace,omitempty"`
	Plot       string           `json:"plot,omitempty"`

	// rows are the table's rows' results by method name (nil for a
	// method that gave none; the search's own row is Result), and batch
	// the graph's batch: for the jobs built on a search (report parallel).
	rows  map[string]*optimize.Result
	batch int
}

// Search runs the quick baselines on one graph (with their compositions,
// their decisions on fewer GPUs and fusion variants), then the search
// method anchored on the best of them, and returns the comparison with
// the search's row. Its answer is never worse than a row of its own
// table: when the search does not improve on the best row, the result is
// that row's decision, and the report says so (Result.Source). When ctx
// is cancelled (Ctrl-C) it still returns, and writes, the best result
// found so far.
func Search(ctx context.Context, o SearchOptions) (SearchReport, error) {
	tasks, err := parseTasks(o.Tasks)
	if err != nil {
		return SearchReport{}, err
	}
	if err := methodsCheck(o.Methods); err != nil {
		return SearchReport{}, err
	}
	method := cmp.Or(o.Method, DefaultSearchMethod)
	if err := checkSearchMethod(method); err != nil {
		return SearchReport{}, err
	}
	pp, b, err := newComparisonWith(o.Graph, o.Cluster, tasks, roofline.Options{SyncTransfers: o.Sync, Host: o.Host}, o.Backend)
	if err != nil {
		return SearchReport{}, err
	}
	defer pp.Close()
	p := pp.Problem
	p.Objective, b.Objective = o.Objective, o.Objective.String()
	b.Host = hostNote(o.Host, o.Dispatch)
	if method == "go" && p.Devices() > 8 {
		return SearchReport{}, fmt.Errorf("search: %d GPUs; the GO policy places on at most 8", p.Devices())
	}
	setBase(p)
	refs := o.Methods
	if len(refs) == 0 {
		refs = SearchReferenceMethods
	}
	names, rows, results, err := runReferences(ctx, pp, refs, &optimize.Settings{Budget: optimize.Budget{Evaluations: o.Budget}, Seed: o.Seed}, o.Progress)
	if err != nil && !interrupted(ctx, err) {
		return SearchReport{}, err
	}
	// The strategies users run without placer (DDP) join the table when
	// the graph has a batch to split: the answer is never worse than them.
	if err == nil && p.Graph.Batch() > 0 && len(o.Methods) == 0 {
		var sn []string
		var sr []report.BaselinesRow
		var sres []*optimize.Result
		sn, sr, sres, err = runMethods(ctx, p, SearchStrategyMethods, methods.Options{}, false, &optimize.Settings{Seed: o.Seed}, o.Progress)
		names, rows, results = append(names, sn...), append(rows, sr...), append(results, sres...)
		if err != nil && !interrupted(ctx, err) {
			return SearchReport{}, err
		}
	}
	// Stopped while the baselines ran: the search below, on a cancelled
	// context, still evaluates its anchor (the best baseline finished,
	// else TensorFlow's defaults) and returns it, so a result is written.
	b.Rows = rows
	b.Reference, b.RefStep = reference(ctx, p, names, results)
	// The anchor, and the reward's reference: the best valid baseline.
	refName, ref := bestValid(p.Objective, names, results)
	mo := methods.Options{Policy: o.Policy, PPO: o.PPO, Samples: o.Samples, Warmup: o.Warmup, Reference: ref}
	budget := optimize.Budget{Evaluations: o.Evals, Steps: o.Steps, Time: o.Time, CPU: o.CPU}
	if budget == (optimize.Budget{}) {
		if method == "go" {
			budget.Steps = 100
		} else {
			budget.Evaluations = DefaultSearchEvaluations
		}
	}
	if o.OnStep != nil {
		cpu0 := optimize.ProcessCPU()
		mo.OnStep = func(pt gdp.Point, refStep float64) {
			done, total := spent(budget, pt, optimize.ProcessCPU()-cpu0)
			o.OnStep(pt, refStep, done, total)
		}
	}
	// The joint space: with a batch to split, part of the budget goes to
	// the joint search (strategies around searched placements:
	// jointSearch), as much as the strategies' rows promise
	// (jointShareOf).
	joint := jointApplies(p, method)
	main, jointShare := budget, jointShareOf(p.Objective, results)
	if joint {
		main = scaleBudget(budget, 1-jointShare)
	}
	start := time.Now()
	opt, err := methods.New(method, mo)
	if err != nil {
		return SearchReport{}, err
	}
	res, err := opt.Optimize(ctx, p, &optimize.Settings{Budget: main, Seed: o.Seed})
	if err != nil {
		return SearchReport{}, err
	}
	if joint && ctx.Err() == nil {
		byName := make(map[string]*optimize.Result, len(names))
		for i, n := range names {
			byName[n] = results[i]
		}
		jn, jr, jres, err := jointSearch(ctx, pp, method, byName, scaleBudget(budget, jointShare), o.Seed, o.Progress)
		if err != nil && !interrupted(ctx, err) {
			return SearchReport{}, err
		}
		names, results = append(names, jn...), append(results, jres...)
		b.Rows = append(b.Rows, jr...)
	}
	refStep := 0.0
	if res.Learning != nil {
		refStep = res.Learning.RefStep
	}
	if p.Objective != optimize.StepTime || refStep == 0 {
		// The reference's step time (the reward's reference may be a
		// value of another objective).
		refStep = 0
		if ref != nil {
			refStep = ref.Eval.StepTime
		}
	}
	l := learned{method: method, res: res, refName: refName, refStep: refStep, elapsed: time.Since(start)}
	// Never worse than a row of the table (a strategy's row included):
	// keep the best row's decision when the search did not beat it.
	if bestName, best := bestOf(p.Objective, names, results, true); best != nil && (!p.Objective.Valid(&res.Eval) || p.Objective.Of(&best.Eval) < p.Objective.Of(&res.Eval)) {
		kept := *res
		kept.Decision, kept.Eval = best.Decision, best.Eval
		l.res, l.source, l.own = &kept, bestName, res
	}
	rep, err := learnedReport(p, b, l, o.Seed, o.Out)
	rep.rows, rep.batch = make(map[string]*optimize.Result, len(names)), p.Graph.Batch()
	for i, n := range names {
		rep.rows[n] = results[i]
	}
	if err != nil {
		return rep, err
	}
	if o.Trace != "" {
		if err := writeTrace(ctx, p, l.res.Decision, o.Trace); err != nil {
			return rep, err
		}
		rep.Trace = o.Trace
	}
	if o.Plot != "" && res.Learning != nil && len(res.Learning.Curve) > 0 {
		if err := report.WritePlot(o.Plot, curvePlot(p.Graph.Name(), method, refName, refStep, res.Learning.Curve)); err != nil {
			return rep, err
		}
		rep.Plot = o.Plot
	}
	return rep, ctx.Err()
}

// spent is how much of budget a search has used at point pt, after cpu
// of CPU time: done of total in the unit of the budget that binds first
// (steps, evaluations, or seconds of wall or CPU time).
func spent(b optimize.Budget, pt gdp.Point, cpu time.Duration) (done, total int) {
	frac, d, t := -1.0, 0, 0
	try := func(x, of float64, dx, of2 int) {
		if of > 0 && x/of > frac {
			frac, d, t = x/of, dx, of2
		}
	}
	try(float64(pt.Step), float64(b.Steps), pt.Step, b.Steps)
	try(float64(pt.Evaluations), float64(b.Evaluations), pt.Evaluations, b.Evaluations)
	try(pt.Elapsed, b.Time.Seconds(), int(pt.Elapsed), int(b.Time.Seconds()))
	try(cpu.Seconds(), b.CPU.Seconds(), int(cpu.Seconds()), int(b.CPU.Seconds()))
	return d, t
}

// SearchMethods are the methods --method takes: the user's methods that
// search (not the fixed references and one-shot heuristics).
func SearchMethods() []string {
	var out []string
	for _, n := range methods.Methods() {
		if e, _ := methods.Lookup(n); e.Kind == methods.Search || e.Kind == methods.Learned {
			out = append(out, n)
		}
	}
	return out
}

func checkSearchMethod(name string) error {
	if slices.Contains(SearchMethods(), name) {
		return nil
	}
	return fmt.Errorf("%w %q for --method (searches: %s)", methods.ErrUnknown, name, strings.Join(SearchMethods(), ", "))
}

// methodsCheck checks that every name is a registered method.
func methodsCheck(names []string) error {
	return methods.Check(names)
}

// curvePlot draws the best step time found so far (milliseconds)
// against the evaluations spent, with the reference's step time.
func curvePlot(graphName, method, refName string, refStep float64, curve []gdp.Point) report.Plot {
	var x, best []float64
	for _, pt := range curve {
		if pt.BestStep > 0 {
			x = append(x, float64(pt.Evaluations))
			best = append(best, pt.BestStep*1e3)
		}
	}
	series := []report.Series{{Name: "best so far", X: x, Y: best}}
	if refStep > 0 && len(x) > 0 {
		series = append(series, report.Series{Name: refName, X: []float64{0, x[len(x)-1]}, Y: []float64{refStep * 1e3, refStep * 1e3}, Dash: true})
	}
	return report.Plot{
		Title: fmt.Sprintf("%s on %s", method, graphName), XLabel: "evaluations", YLabel: "step time (ms)",
		Series: series, LegendTop: true,
	}
}

// jointApplies says whether the search also searches the joint space of
// strategies and placements (jointSearch): the graph has a batch to
// split, the placement is the search's to choose and there are at least
// two GPUs. Every search method moves in it: an anchored one (go-scored,
// local-search-anchored, sa-anchored) from each point's decision, the
// others (brkga, local-search, sa, the GO policy) from their own start,
// every decision scored with the point's strategy.
func jointApplies(p *optimize.Problem, method string) bool {
	return slices.Contains(SearchMethods(), method) && p.Graph.Batch() > 0 && p.EffectiveTasks().Placement && p.Devices() >= 2
}

// jointShareOf is the share of the search's budget the joint space gets,
// from the table's rows so far: nine tenths when the best valid strategy
// row (a decision with a strategy) is at least 1.25x better than the best
// valid single-replica row (the single-replica search has little to win),
// three quarters when it is better, a quarter when it is not (the
// placement is where the step is won: GO's graphs at their GPU counts).
func jointShareOf(o optimize.Objective, results []*optimize.Result) float64 {
	plain, split := math.Inf(1), math.Inf(1)
	for _, r := range results {
		switch {
		case r == nil || !o.Valid(&r.Eval):
		case r.Decision.Strategy.IsZero():
			plain = min(plain, o.Of(&r.Eval))
		default:
			split = min(split, o.Of(&r.Eval))
		}
	}
	switch {
	case 1.25*split <= plain:
		return 0.9
	case split < plain:
		return 0.75
	}
	return 0.25
}

// scaleBudget is b with its evaluations, steps and times times f (each at
// least one when it was set).
func scaleBudget(b optimize.Budget, f float64) optimize.Budget {
	sc := func(v int) int {
		if v == 0 {
			return 0
		}
		return max(1, int(float64(v)*f))
	}
	return optimize.Budget{Evaluations: sc(b.Evaluations), Steps: sc(b.Steps),
		Time: time.Duration(float64(b.Time) * f), CPU: time.Duration(float64(b.CPU) * f)}
}
