package classical_test

import (
	"context"
	"testing"
	"time"

	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/internal/timed"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

func TestLocalSearchImproves(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 150, Width: 10, Seed: 12, Measured: true})
	p, err := methodstest.NewProblem(g, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	short := solve(t, "local-search", p, optimize.Budget{Evaluations: 1})
	long := solve(t, "local-search", p, optimize.Budget{Evaluations: 1500})
	if long.Eval.StepTime >= short.Eval.StepTime {
		t.Errorf("1,500 evaluations reach %g, the random start is %g", long.Eval.StepTime, short.Eval.StepTime)
	}
	if long.Stats.Steps == 0 || long.Stats.Status != optimize.BudgetReached {
		t.Errorf("stats %+v", long.Stats)
	}
	// Starting from m-etf (placement and schedule), it can only get better.
	p.Tasks = optimize.Tasks{Placement: true, Scheduling: true}
	etf := solve(t, "m-etf", p, optimize.Budget{})
	ls, err := classical.LocalSearch{Start: "m-etf"}.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 300}})
	if err != nil {
		t.Fatal(err)
	}
	if ls.Eval.StepTime > etf.Eval.StepTime {
		t.Errorf("from m-etf's %g to %g", etf.Eval.StepTime, ls.Eval.StepTime)
	}
}

func TestLocalSearchTimeBudget(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 300, Width: 10, Seed: 13})
	p, err := methodstest.NewProblem(g, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := classical.LocalSearch{}.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Time: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	timed.Bound(t, "a 100 ms budget", time.Since(start), time.Second)
	if res.Stats.Status != optimize.TimeUp || res.Stats.Elapsed < 100*time.Millisecond {
		t.Errorf("status %v after %v: want time up, after the budget", res.Stats.Status, res.Stats.Elapsed)
	}
	if _, err := (classical.LocalSearch{Start: "bogus"}).Optimize(context.Background(), p, nil); err == nil {
		t.Error("unknown start accepted")
	}
}
