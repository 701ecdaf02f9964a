package jobs

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/placer/placer/jobs/inputs"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/nn/ppo"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
)

// SearchReferenceMethods are the baselines a search runs first when none
// are named: the quick deterministic ones (methods.Quick). The best valid
// one normalizes the reward and is the policy's warm-up target.
var SearchReferenceMethods = methods.Quick()

// SearchOptions are the inputs of `placer search`.
type SearchOptions struct {
	Graph   inputs.GraphSpec
	Cluster inputs.ClusterSpec
	Tasks   string        // "" = placement,scheduling,fusion
	Steps   int           // PPO steps (0 = 100 unless Time is set)
	Time    time.Duration // wall-time limit of the search (0 = none)
	Seed    uint64
	Samples int      // rollout size K (0 = 16)
	Methods []string // baselines to compare with and take the reference from (nil = SearchReferenceMethods)
	Budget  int      // evaluation budget of the search baselines among Methods (0 = their default)
	Sync    bool
	// Objective is what the search and the baselines minimise (zero =
	// step time); the reward reads it (optimize.Objective.Of).
	Objective optimize.Objective
	Policy    *policy.Config // nil = defaults
	PPO       ppo.Settings
	Warmup    int // imitation steps (0 = learn's default; negative = none)
	// Backend makes the cost model and the evaluator (nil = Roofline).
	Backend Backend

	Out   string // result file ("" = none)
	Trace string // Chrome trace of the best decision ("" = none)
	Plot  string // learning-curve plot, .png/.svg/.pdf ("" = none)

	// Progress receives one line per finished baseline; OnStep each
	// search step (with the reference step time).
	Progress io.Writer
	OnStep   func(pt gdp.Point, refStep float64, steps int)
}

// SearchReport is what `placer search` prints: the comparison with the GO
// row added, and the search's own result.
type SearchReport struct {
	Comparison report.Baselines `json:"comparison"`
	Result     report.Result    `json:"result"`
	Out        string           `json:"out,omitempty"`
	Trace      string           `json:"trace,omitempty"`
	Plot       string           `json:"plot,omitempty"`
}

// Search trains the policy on one graph with PPO (GO-one) and compares its
// best decision with the baselines. When ctx is cancelled (Ctrl-C) it
// still returns, and writes, the best result found so far.
func Search(ctx context.Context, o SearchOptions) (SearchReport, error) {
	tasks, err := parseTasks(o.Tasks)
	if err != nil {
		return SearchReport{}, err
	}
	if err := methodsCheck(o.Methods); err != nil {
		return SearchReport{}, err
	}
	pp, b, err := newComparison(o.Graph, o.Cluster, tasks, o.Sync, o.Backend)
	if err != nil {
		return SearchReport{}, err
	}
	defer pp.Close()
	p := pp.Problem
	p.Objective, b.Objective = o.Objective, o.Objective.String()
	if p.Devices() > 8 {
		return SearchReport{}, fmt.Errorf("search: %d GPUs; the policy places on at most 8", p.Devices())
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
	// Stopped while the baselines ran: the search below, on a cancelled
	// context, still evaluates its reference (the best baseline finished,
	// else TensorFlow's defaults) and returns it, so a result is written.
	b.Rows = rows
	b.Reference, b.RefStep = reference(ctx, p, names, results)
	// The reward's reference: the best valid baseline.
	refName, ref := bestValid(p.Objective, names, results)
	mo := methods.Options{Policy: o.Policy, PPO: o.PPO, Samples: o.Samples, Warmup: o.Warmup, Reference: ref}
	steps := o.Steps
	if steps == 0 && o.Time == 0 {
		steps = 100
	}
	if o.OnStep != nil {
		mo.OnStep = func(pt gdp.Point, refStep float64) { o.OnStep(pt, refStep, steps) }
	}
	start := time.Now()
	res, err := runLearned(ctx, "go", mo, p, o.Steps, 100, o.Time, o.Seed)
	if err != nil {
		return SearchReport{}, err
	}
	refStep := res.Learning.RefStep
	if p.Objective != optimize.StepTime {
		// The reward's reference is then a value of the objective, not
		// a step time: the result file records the reference's step.
		refStep = 0
		if ref != nil {
			refStep = ref.Eval.StepTime
		}
	}
	rep, err := learnedReport(p, b, learned{method: "go", res: res, refName: refName, refStep: refStep, elapsed: time.Since(start)}, o.Seed, o.Out)
	if err != nil {
		return rep, err
	}
	if o.Trace != "" {
		if err := writeTrace(ctx, p, res.Decision, o.Trace); err != nil {
			return rep, err
		}
		rep.Trace = o.Trace
	}
	if o.Plot != "" {
		if err := report.WritePlot(o.Plot, curvePlot(p.Graph.Name(), refName, p.Objective, res.Learning.Curve)); err != nil {
			return rep, err
		}
		rep.Plot = o.Plot
	}
	return rep, ctx.Err()
}

// methodsCheck checks that every name is a registered method.
func methodsCheck(names []string) error {
	return methods.Check(names)
}

// curvePlot draws the mean and best reward of each rollout against the
// reference's reward (-1).
func curvePlot(graphName, refName string, obj optimize.Objective, curve []gdp.Point) report.Plot {
	var x, mean, best []float64
	for _, pt := range curve {
		x = append(x, float64(pt.Step))
		mean = append(mean, pt.MeanReward)
		best = append(best, pt.BestReward)
	}
	refX := []float64{0, 1}
	if len(x) > 0 {
		refX = []float64{x[0], x[len(x)-1]}
	}
	return report.Plot{
		Title: fmt.Sprintf("GO search on %s: reward = -sqrt(%s / %s's)", graphName, obj.Title(), refName), XLabel: "PPO step", YLabel: "reward",
		Series: []report.Series{
			{Name: "mean of rollout", X: x, Y: mean},
			{Name: "best of rollout", X: x, Y: best},
			{Name: refName, X: refX, Y: []float64{-1, -1}, Dash: true},
		},
	}
}
