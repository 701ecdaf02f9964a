package classical_test

import (
	"context"
	"testing"

	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

func TestAnnealingImprovesOnItsStart(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 150, Width: 10, Seed: 14})
	p, err := methodstest.NewProblem(g, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	start := solve(t, "sa", p, optimize.Budget{Evaluations: 1})
	res := solve(t, "sa", p, optimize.Budget{Evaluations: 800})
	if res.Eval.StepTime >= start.Eval.StepTime {
		t.Errorf("800 evaluations reach %g, the start is %g", res.Eval.StepTime, start.Eval.StepTime)
	}
	// Steps bound the rounds.
	steps, err := classical.Annealing{}.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Steps: 5}})
	if err != nil {
		t.Fatal(err)
	}
	methodstest.Check(t, p, steps, optimize.Budget{Steps: 5})
	if steps.Stats.Steps != 5 || steps.Stats.Status != optimize.BudgetReached {
		t.Errorf("stats %+v", steps.Stats)
	}
}

func TestAnnealingFusionOnly(t *testing.T) {
	// GO's use: fusion priorities only, placement and schedule fixed.
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 200, Width: 10, Seed: 15})
	p, err := methodstest.NewProblem(g, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	p.Tasks = optimize.Tasks{Fusion: true}
	tf := solve(t, "tf-default", p, optimize.Budget{})
	sa := solve(t, "sa", p, optimize.Budget{Evaluations: 400})
	if sa.Eval.StepTime > tf.Eval.StepTime {
		t.Errorf("SA fusion %g worse than the default fusion %g it starts from", sa.Eval.StepTime, tf.Eval.StepTime)
	}
	if sa.Decision.Priority != nil {
		t.Error("priorities set though the task is fusion only")
	}
}
