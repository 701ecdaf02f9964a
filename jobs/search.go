package jobs

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/learn"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/policy"
	"github.com/placer/placer/ppo"
	"github.com/placer/placer/report"
	"github.com/placer/placer/roofline"
)

// SearchReferenceMethods are the baselines a search runs first when none
// are named: the quick deterministic ones. The best valid one normalizes
// the reward and is the policy's warm-up target.
var SearchReferenceMethods = []string{"single", "expert", "metis", "gp-dfs", "m-topo", "m-etf", "tf-default"}

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
	Policy  *policy.Config // nil = defaults
	PPO     ppo.Settings
	Warmup  int // imitation steps (0 = learn's default; negative = none)

	Out   string // result file ("" = none)
	Trace string // Chrome trace of the best decision ("" = none)
	Plot  string // learning-curve plot, .png/.svg/.pdf ("" = none)

	// Progress receives one line per finished baseline; OnStep each
	// search step (with the reference step time).
	Progress io.Writer
	OnStep   func(pt learn.Point, refStep float64, steps int)
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
	p, b, err := newComparison(o.Graph, o.Cluster, tasks, o.Sync)
	if err != nil {
		return SearchReport{}, err
	}
	if p.Devices() > 8 {
		return SearchReport{}, fmt.Errorf("search: %d GPUs; the policy places on at most 8", p.Devices())
	}
	setBase(p)
	methods := o.Methods
	if len(methods) == 0 {
		methods = SearchReferenceMethods
	}
	names, rows, results, err := runMethods(ctx, p, methods, true, &optimize.Settings{Budget: optimize.Budget{Evaluations: o.Budget}, Seed: o.Seed}, o.Progress)
	if err != nil {
		return SearchReport{}, err
	}
	b.Rows = rows
	b.Reference, b.RefStep = reference(ctx, p, names, results)
	// The reward's reference: the best valid baseline.
	refName, ref := bestValid(names, results)
	s := &learn.Search{Config: o.Policy, PPO: o.PPO, Samples: o.Samples, Warmup: o.Warmup}
	start := time.Now()
	res, err := runSearch(ctx, s, p, ref, o.Steps, 100, o.Time, o.Seed, o.OnStep)
	if err != nil {
		return SearchReport{}, err
	}
	rep, err := learnedReport("go", p, b, res, refName, s.RefStep, time.Since(start), s.Curve, s.Settings(), o.Seed, o.Out)
	if err != nil {
		return rep, err
	}
	g := p.Graph
	if o.Trace != "" {
		_, tl, err := roofline.Simulate(p.Model, res.Decision)
		if err != nil {
			return rep, err
		}
		if err := atomicfile.Write(o.Trace, func(w io.Writer) error { return roofline.WriteTrace(w, p.Model, tl) }); err != nil {
			return rep, err
		}
		rep.Trace = o.Trace
	}
	if o.Plot != "" {
		if err := report.WritePlot(o.Plot, curvePlot(g.Name(), refName, s.Curve)); err != nil {
			return rep, err
		}
		rep.Plot = o.Plot
	}
	return rep, ctx.Err()
}

// curvePlot draws the mean and best reward of each rollout against the
// reference's reward (-1).
func curvePlot(graphName, refName string, curve []learn.Point) report.Plot {
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
		Title: fmt.Sprintf("GO search on %s: reward = -sqrt(step / %s step)", graphName, refName), XLabel: "PPO step", YLabel: "reward",
		Series: []report.Series{
			{Name: "mean of rollout", X: x, Y: mean},
			{Name: "best of rollout", X: x, Y: best},
			{Name: refName, X: refX, Y: []float64{-1, -1}, Dash: true},
		},
	}
}
