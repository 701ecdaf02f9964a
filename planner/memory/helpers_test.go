package memory

import (
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

func mustSpec(t testing.TB, text string) transformer.Spec {
	t.Helper()
	m, err := transformer.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// counterAt is the counter of plan pl of m on p at tensor-parallel
// degree T with tokens a micro-batch on one GPU.
func counterAt(m transformer.Spec, pl plan.Plan, p *plan.Pod, T int, tokens float64) counter {
	c := counter{m: m, pl: pl, pod: p, tokens: tokens}
	c.pl.TP = T
	return c
}

// partsOf is plan pl of m on p's counters (one per tensor-parallel
// degree) and its stages' parameters, as Step.Peak reads them.
func partsOf(m transformer.Spec, pl plan.Plan, p *plan.Pod) ([]counter, []Stage) {
	step := Step{Model: m, Plan: pl, Pod: p}
	return step.counters(nil), step.stages(nil)
}
