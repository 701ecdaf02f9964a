package reports

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/methods"
	"github.com/placer/placer/optimize"
)

// TestRegal runs the report end to end on two held-out synthetic graphs
// and the mlp example at small budgets, then again from the kept cells.
func TestRegal(t *testing.T) {
	dir := t.TempDir()
	o := RegalOptions{Graphs: []string{"synthetic:2", "../../examples/mlp.json", "msr-fiddle:" + t.TempDir()}, Methods: []string{"gp-dfs", "local-search", "brkga"}, CurveMethods: []string{"brkga"},
		Evaluations: 100, Budgets: []int{200, 100}, BestBudget: 400, Seed: 1, Dir: dir, Sync: true}
	rep, err := Regal(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Graphs) != 3 || len(rep.Summary) != 2 || len(rep.Curves) != 2 || rep.Transfers != "sync" || rep.Devices != 2 {
		t.Fatalf("report: %d graphs, %d summaries, %d curves, %s, %d GPUs", len(rep.Graphs), len(rep.Summary), len(rep.Curves), rep.Transfers, rep.Devices)
	}
	if g := rep.Graphs[0]; g.Set != "synthetic test" || g.Devices != 2 || g.Ops < 50 {
		t.Errorf("graph %s: set %q, %d GPUs, %d ops", g.Graph, g.Set, g.Devices, g.Ops)
	}
	for _, g := range rep.Graphs {
		// 3 methods at 100, brkga at 200 and at 400: 5 cells per objective.
		if len(g.Cells) != 10 {
			t.Errorf("%s: %d cells, want 10", g.Graph, len(g.Cells))
		}
		for _, obj := range rep.Objectives {
			best, ok := g.Best[obj]
			if !ok {
				t.Fatalf("%s %s: no best known", g.Graph, obj)
			}
			for _, c := range g.Cells {
				if c.Objective == obj && c.Valid && c.Error == "" && c.Value < best.Value {
					t.Errorf("%s %s: %s at %d (%g) beats the best known %g", g.Graph, obj, c.Method, c.Budget, c.Value, best.Value)
				}
				if c.Method == "brkga" && c.Evaluations != c.Budget {
					t.Errorf("%s %s: brkga used %d evaluations of %d", g.Graph, obj, c.Evaluations, c.Budget)
				}
			}
		}
	}
	for _, s := range rep.Summary {
		if s.Graphs != 3 || s.Improvement["brkga"] != 0 {
			t.Errorf("%s: %+v", s.Objective, s)
		}
		for m, gap := range s.Gap {
			if gap < 0 {
				t.Errorf("%s: %s's gap %g is negative", s.Objective, m, gap)
			}
		}
	}
	for _, cv := range rep.Curves {
		if len(cv.Budgets) != 2 || cv.Budgets[0] != 100 || cv.Improvement[0] != 0 {
			t.Errorf("curve %+v", cv)
		}
	}
	// The same run from the kept cells: identical, CPU times included.
	again, err := Regal(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep, again) {
		t.Error("the rerun from --dir differs")
	}
	// Only peak memory: the cells of step time are not needed.
	o.Objectives = []optimize.Objective{optimize.PeakMemory}
	one, err := Regal(context.Background(), o)
	if err != nil || len(one.Summary) != 1 || !reflect.DeepEqual(one.Summary[0], rep.Summary[1]) {
		t.Errorf("peak memory alone: %v, %+v", err, one.Summary)
	}
}

func TestRegalErrors(t *testing.T) {
	for _, o := range []RegalOptions{
		{Graphs: []string{"synthetic:1"}, Methods: []string{"brkga", "no-such-method"}},
		{Graphs: []string{"synthetic:1"}, CurveMethods: []string{"regal-x"}},
	} {
		if _, err := Regal(context.Background(), o); !errors.Is(err, methods.ErrUnknown) {
			t.Errorf("%v: error %v, want ErrUnknown", o.Methods, err)
		}
	}
	for _, g := range []string{"synthetic:0", "synthetic:x"} {
		if _, err := Regal(context.Background(), RegalOptions{Graphs: []string{g}, Methods: []string{"brkga"}}); err == nil {
			t.Errorf("%s: no error", g)
		}
	}
	if _, err := Regal(context.Background(), RegalOptions{Graphs: []string{"msr-fiddle:/nonexistent"}}); err == nil {
		t.Error("no test graphs: no error")
	}
}

// TestRegalGraphs2x: synthetic-2x:N is N held-out graphs of 100-400 nodes
// (twice the training range), seeded apart from the test set, and the
// kept cells of regal name the model they ran with.
func TestRegalGraphs2x(t *testing.T) {
	gs, err := regalGraphs([]string{"synthetic-2x:4", "synthetic:4"})
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 8 {
		t.Fatalf("%d graphs, want 8", len(gs))
	}
	for i, g := range gs[:4] {
		// Each synthetic graph has a source and a sink besides its nodes.
		if n := g.g.NumOps() - 2; n < 100 || n > 400 || g.set != "synthetic test, 2x nodes" {
			t.Errorf("2x graph %d: %d nodes, set %q", i, n, g.set)
		}
		if g.name == gs[4+i].name {
			t.Errorf("2x graph %d has the test graph's name %s", i, g.name)
		}
	}
	for _, s := range []string{"synthetic-2x:0", "synthetic-2x:x"} {
		if _, err := regalGraphs([]string{s}); err == nil {
			t.Errorf("%s: no error", s)
		}
	}
	if f := methodFingerprint("regal", optimize.PeakMemory); !strings.Contains(f, "model sha256") || f == methodFingerprint("regal", optimize.StepTime) {
		t.Errorf("regal fingerprints %q and %q: want each objective's model named", f, methodFingerprint("regal", optimize.StepTime))
	}
}
