package classical_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

func TestRandomBestOfK(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 100, Width: 10, Seed: 5})
	p, err := methodstest.NewProblem(g, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := &optimize.Settings{Budget: optimize.Budget{Evaluations: 37}, Seed: 9}
	a, err := classical.Random{Batch: 1}.Optimize(context.Background(), p, s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := classical.Random{Batch: 16}.Optimize(context.Background(), p, s)
	if err != nil {
		t.Fatal(err)
	}
	if a.Stats.Evaluations != 37 || b.Stats.Evaluations != 37 {
		t.Errorf("evaluations %d and %d, want k = 37", a.Stats.Evaluations, b.Stats.Evaluations)
	}
	if a.Stats.Status != optimize.BudgetReached {
		t.Errorf("status %v", a.Stats.Status)
	}
	if !reflect.DeepEqual(a.Decision, b.Decision) {
		t.Error("the batch size changed the result")
	}
	// The first 37 placements of a longer run are the same ones.
	more, err := classical.Random{}.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 400}, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	methodstest.Check(t, p, more, optimize.Budget{Evaluations: 400})
	if optimize.Better(&a.Eval, &more.Eval) {
		t.Errorf("best of 400 (%g) worse than best of 37 (%g)", more.Eval.StepTime, a.Eval.StepTime)
	}
}
