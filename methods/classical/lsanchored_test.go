package classical_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/internal/timed"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// anchorStep is the best valid step time of the anchor methods on p.
func anchorStep(t *testing.T, p *optimize.Problem) float64 {
	t.Helper()
	best := 0.0
	for _, name := range methods.Quick() {
		r := solve(t, name, p, optimize.Budget{})
		if r.Eval.Valid() && (best == 0 || r.Eval.StepTime < best) {
			best = r.Eval.StepTime
		}
	}
	return best
}

// testAnchored checks an anchored search: never worse than its anchor on
// random graphs (ample and tight memory, all tasks and each task alone),
// strictly better with a few hundred evaluations on the first, the same
// result for the same seed, and its evaluation, step and time budgets
// kept.
func testAnchored(t *testing.T, name string) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 180, Width: 8, Seed: 21})
	roomy, err := methodstest.NewProblem(g, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	tight, err := methodstest.NewProblem(g, 4, g.Stats().ParamBytes*2/5)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		p     *optimize.Problem
		tasks optimize.Tasks
	}{
		{"all", roomy, optimize.AllTasks},
		{"tight", tight, optimize.AllTasks},
		{"placement", roomy, optimize.Tasks{Placement: true}},
		{"scheduling", roomy, optimize.Tasks{Scheduling: true}},
		{"fusion", roomy, optimize.Tasks{Fusion: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := *c.p
			q.Tasks = c.tasks
			anchor := anchorStep(t, &q)
			res := solve(t, name, &q, optimize.Budget{Evaluations: 300})
			if !res.Eval.Valid() || res.Eval.StepTime > anchor {
				t.Errorf("step %g (valid %v) worse than the anchor's %g", res.Eval.StepTime, res.Eval.Valid(), anchor)
			}
			if c.name == "all" && res.Eval.StepTime >= anchor*(1-1e-6) {
				t.Errorf("300 evaluations found nothing better than the anchor's %g", anchor)
			}
			again := solve(t, name, &q, optimize.Budget{Evaluations: 300})
			if !reflect.DeepEqual(res.Decision, again.Decision) {
				t.Errorf("same seed, different decisions (%g and %g)", res.Eval.StepTime, again.Eval.StepTime)
			}
		})
	}
	t.Run("budgets", func(t *testing.T) {
		o, err := methods.New(name, methods.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []optimize.Budget{{Evaluations: 17}, {Steps: 3}, {Time: 300 * time.Millisecond}} {
			res, err := o.Optimize(context.Background(), roomy, &optimize.Settings{Budget: b, Seed: 2})
			if err != nil {
				t.Fatal(err)
			}
			methodstest.Check(t, roomy, res, b)
			switch {
			case b.Evaluations > 0 && res.Stats.Evaluations != b.Evaluations,
				b.Steps > 0 && res.Stats.Steps != b.Steps:
				t.Errorf("budget %+v: stats %+v", b, res.Stats)
			case b.Time > 0 && (res.Stats.Status != optimize.TimeUp || res.Stats.Elapsed < b.Time):
				t.Errorf("budget %+v: status %v after %v: want time up, after the budget", b, res.Stats.Status, res.Stats.Elapsed)
			}
			if b.Time > 0 {
				timed.Bound(t, fmt.Sprintf("a %v budget", b.Time), res.Stats.Elapsed, b.Time+time.Second)
			}
		}
	})
}

func TestAnchoredLocalSearch(t *testing.T) { testAnchored(t, "local-search-anchored") }

// quickOptimizers are the registry's quick methods.
func quickOptimizers(t *testing.T) []optimize.Optimizer {
	var qs []optimize.Optimizer
	for _, name := range methods.Quick() {
		o, err := methods.New(name, methods.Options{})
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, o)
	}
	return qs
}

// TestAnchoredFromGivenAnchor: with a given anchor the quick methods do
// not run, and the result is never worse than the anchor.
func TestAnchoredFromGivenAnchor(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 120, Width: 8, Seed: 23})
	p, err := methodstest.NewProblem(g, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	from := solve(t, "round-robin", p, optimize.Budget{})
	for _, name := range []string{"local-search-anchored", "sa-anchored"} {
		o, err := methods.New(name, methods.Options{Reference: from})
		if err != nil {
			t.Fatal(err)
		}
		res, err := o.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 60}, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		methodstest.Check(t, p, res, optimize.Budget{Evaluations: 60})
		if res.Eval.StepTime > from.Eval.StepTime {
			t.Errorf("%s: %g worse than the given anchor's %g", name, res.Eval.StepTime, from.Eval.StepTime)
		}
	}
}

// TestAnchoredUnitsContracted: with fewer units allowed than co-location
// groups, the search still honours co-location and its anchor.
func TestAnchoredUnitsContracted(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 200, Width: 8, Seed: 22})
	p, err := methodstest.NewProblem(g, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	anchor := anchorStep(t, p)
	quick := quickOptimizers(t)
	for _, o := range []optimize.Optimizer{classical.AnchoredLocalSearch{MaxUnits: 20, Anchor: classical.Anchor{Quick: quick}}, classical.AnchoredAnnealing{MaxUnits: 20, Anchor: classical.Anchor{Quick: quick}}} {
		res, err := o.Optimize(context.Background(), withExpert(p), &optimize.Settings{Budget: optimize.Budget{Evaluations: 100}, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		methodstest.Check(t, p, res, optimize.Budget{Evaluations: 100})
		if res.Eval.StepTime > anchor {
			t.Errorf("%s: %g worse than the anchor's %g", o.Name(), res.Eval.StepTime, anchor)
		}
	}
}
