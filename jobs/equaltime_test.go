package jobs

import (
	"context"
	"testing"
	"time"
)

// TestEqualTime runs two methods on a small graph at one short budget,
// then again from the kept cells.
func TestEqualTime(t *testing.T) {
	dir := t.TempDir()
	o := EqualTimeOptions{Graphs: []string{"../examples/mlp.json"}, Methods: []string{"local-search", "go-no-learning"},
		Budgets: []time.Duration{300 * time.Millisecond}, Seed: 1, Dir: dir}
	o.Cluster.GPUs = 4
	rep, err := EqualTime(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Graphs) != 1 || len(rep.Graphs[0].Cells) != 2 || len(rep.Summary) != 1 {
		t.Fatalf("report %+v", rep)
	}
	g := rep.Graphs[0]
	if g.Devices != 4 || g.RefStep <= 0 || g.Reference == "" {
		t.Fatalf("graph row %+v", g)
	}
	for _, c := range g.Cells {
		if c.Error != "" || !c.Valid || c.Ratio <= 0 || c.Evaluations < 1 || c.Wall <= 0 {
			t.Errorf("cell %+v", c)
		}
		if c.Wall > 5 {
			t.Errorf("cell %s ran %.1f s on a 0.3 s budget", c.Method, c.Wall)
		}
	}
	// The ablation is anchored on the reference and keeps it.
	if c := g.Cell("go-no-learning", 0.3); c == nil || c.Ratio > 1 {
		t.Errorf("go-no-learning %+v: worse than its reference", c)
	}
	if s := rep.Summary[0]; s.Graphs != 1 || s.GeoMean["local-search"] != g.Cell("local-search", 0.3).Ratio {
		t.Errorf("summary %+v", s)
	}
	// A rerun reads every cell back: the same numbers, wall times included.
	again, err := EqualTime(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range again.Graphs[0].Cells {
		if c != g.Cells[i] {
			t.Errorf("cell %d read back as %+v, was %+v", i, c, g.Cells[i])
		}
	}
	if again.Graphs[0].Reference != g.Reference || again.Graphs[0].RefStep != g.RefStep {
		t.Errorf("reference read back as %s %v, was %s %v", again.Graphs[0].Reference, again.Graphs[0].RefStep, g.Reference, g.RefStep)
	}
	// A bad graph or method is an error, not a row.
	if _, err := EqualTime(context.Background(), EqualTimeOptions{Graphs: []string{"no-such.json"}, Budgets: o.Budgets}); err == nil {
		t.Error("a missing graph was accepted")
	}
	if _, err := EqualTime(context.Background(), EqualTimeOptions{Methods: []string{"nope"}}); err == nil {
		t.Error("an unknown method was accepted")
	}
}
