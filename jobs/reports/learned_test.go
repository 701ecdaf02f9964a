package reports

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/timed"
	"github.com/placer/placer/report/placements"
)

// TestLearned runs rl17, hdp and go on a small graph at one short budget,
// then again from the kept cells.
func TestLearned(t *testing.T) {
	dir := t.TempDir()
	o := LearnedOptions{Graphs: []string{"../../examples/mlp.json"}, Methods: []string{"rl17", "hdp", "go"},
		Budgets: []time.Duration{300 * time.Millisecond}, Seed: 1, Dir: dir}
	o.Cluster.GPUs = 2
	rep, err := Learned(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Graphs) != 1 || len(rep.Graphs[0].Cells) != 3 || len(rep.Summary) != 1 {
		t.Fatalf("report %+v", rep)
	}
	g := rep.Graphs[0]
	if g.Devices != 2 || g.RefStep <= 0 || g.Reference == "" {
		t.Fatalf("graph row %+v", g)
	}
	// A graph file has no expert placement: the row says so, and no
	// cell has a ratio or a time to beat it.
	if g.ExpertStep != 0 || g.ExpertNote != "no expert placement" {
		t.Errorf("expert %v %q", g.ExpertStep, g.ExpertNote)
	}
	for _, c := range g.Cells {
		if c.Error != "" || !c.Valid || c.StepTime <= 0 || c.Evaluations < 1 || c.Wall <= 0 || c.CPU <= 0 || c.Ratio != 0 || c.BeatExpert {
			t.Errorf("cell %+v", c)
		}
		timed.Bound(t, "cell "+c.Method+" on a 0.3 s budget", time.Duration(c.Wall*float64(time.Second)), 5*time.Second)
		// The curve improves, in time order, and ends at the cell's step
		// time at the run's end.
		if len(c.Curve) == 0 {
			t.Fatalf("%s: no curve", c.Method)
		}
		for i := 1; i < len(c.Curve); i++ {
			if c.Curve[i].Wall < c.Curve[i-1].Wall || c.Curve[i].BestStep > c.Curve[i-1].BestStep {
				t.Errorf("%s: curve %d %+v after %+v", c.Method, i, c.Curve[i], c.Curve[i-1])
			}
		}
		if last := c.Curve[len(c.Curve)-1]; last.BestStep != c.StepTime || last.Wall != c.Wall {
			t.Errorf("%s: curve ends at %+v, cell %v at %v s", c.Method, last, c.StepTime, c.Wall)
		}
	}
	// go is anchored on the reference and never returns worse; rl17 and
	// hdp start from nothing.
	if c := g.Cell("go", 0.3); c == nil || c.StepTime > g.RefStep {
		t.Errorf("go %+v: worse than its reference %v", c, g.RefStep)
	}
	if s := rep.Summary[0]; s.Pairs != 1 || len(s.Reach) != 1 || s.GoOverHDP <= 0 {
		t.Errorf("summary %+v", s)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "learned-*-0.3s.json"))
	if len(files) != 3 {
		t.Errorf("kept cells %v", files)
	}
	// A rerun reads every cell back, curves included.
	again, err := Learned(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Graphs[0], g) {
		t.Errorf("graph read back as %+v, was %+v", again.Graphs[0], g)
	}
	// CPU-time cells are kept apart: a CPU run does not read them.
	o.CPU, o.Methods = true, []string{"hdp"}
	cpu, err := Learned(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if c := cpu.Graphs[0].Cells[0]; reflect.DeepEqual(c, *g.Cell("hdp", 0.3)) {
		t.Error("a CPU-time run read the wall-time cell")
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*", "learned-hdp-0.3s-cpu.json")); len(files) != 1 {
		t.Errorf("CPU cell files %v", files)
	}
}

// TestLearnedErrors: bad inputs are errors, not rows; a cancelled run
// keeps no cell.
func TestLearnedErrors(t *testing.T) {
	short := []time.Duration{100 * time.Millisecond}
	for _, tc := range []struct {
		name string
		o    LearnedOptions
	}{
		{"missing graph", LearnedOptions{Graphs: []string{"no-such.json"}, Budgets: short}},
		{"unknown method", LearnedOptions{Methods: []string{"nope"}}},
		{"zero budget", LearnedOptions{Budgets: []time.Duration{0}}},
	} {
		if _, err := Learned(context.Background(), tc.o); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	o := LearnedOptions{Graphs: []string{"../../examples/mlp.json"}, Methods: []string{"hdp"}, Budgets: short, Dir: dir}
	o.Cluster.GPUs = 2
	if _, err := Learned(ctx, o); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*", "learned-*")); len(files) != 0 {
		t.Errorf("a cancelled run kept %v", files)
	}
}

// TestLearnedExpert: the expert row from the problem's expert placement,
// or why there is none.
func TestLearnedExpert(t *testing.T) {
	pp, err := table2Problem("../../examples/mlp.json", inputs.ClusterSpec{GPUs: 2}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pp.Close()
	p := pp.Problem
	n := p.Graph.NumOps()
	for _, tc := range []struct {
		name   string
		expert []int
		step   bool
		note   string
	}{
		{"none", nil, false, "no expert placement"},
		{"one GPU", make([]int, n), true, ""},
		{"wrong length", make([]int, n-1), false, "expert failed"},
	} {
		p.Expert = tc.expert
		var g placements.LearnedGraph
		if err := learnedExpert(context.Background(), p, &g); err != nil {
			t.Fatal(err)
		}
		if (g.ExpertStep > 0) != tc.step || !strings.HasPrefix(g.ExpertNote, tc.note) || (tc.note == "") != (g.ExpertNote == "") {
			t.Errorf("%s: expert %v %q", tc.name, g.ExpertStep, g.ExpertNote)
		}
	}
}

// TestLearnedSharedDir: two runs at once (as two processes, one per
// graph) keep their cells in one dir without touching each other's; a
// NoRun run over both graphs then reads every cell back as kept, runs
// none, and counts the cells of a budget nobody ran as missing.
func TestLearnedSharedDir(t *testing.T) {
	dir := t.TempDir()
	graphs := []string{"../../examples/mlp.json", "../../examples/tiny.json"}
	budget := []time.Duration{200 * time.Millisecond}
	runs := make([]placements.Learned, len(graphs))
	errs := make([]error, len(graphs))
	var wg sync.WaitGroup
	for i, g := range graphs {
		wg.Go(func() {
			o := LearnedOptions{Graphs: []string{g}, Methods: []string{"hdp", "go"}, Budgets: budget, Seed: 2, Dir: dir}
			o.Cluster.GPUs = 2
			runs[i], errs[i] = Learned(context.Background(), o)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", graphs[i], err)
		}
	}
	o := LearnedOptions{Graphs: graphs, Methods: []string{"hdp", "go"}, Budgets: append(budget, time.Hour), Seed: 2, Dir: dir, NoRun: true}
	o.Cluster.GPUs = 2
	before, start := dirState(t, dir), time.Now()
	sum, err := Learned(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	timed.Bound(t, "the no-run summary", time.Since(start), 10*time.Second)
	sameDir(t, "the no-run summary", dir, before)
	if len(sum.Graphs) != 2 || len(sum.Summary) != 2 {
		t.Fatalf("summary %+v", sum)
	}
	for i, g := range sum.Graphs {
		// The hour-long budget's cells were never run: missing.
		if g.Missing != 2 || len(g.Cells) != 2 {
			t.Errorf("%s: %d cells, %d missing; want 2 and 2", g.Graph, len(g.Cells), g.Missing)
		}
		want := runs[i].Graphs[0]
		if !reflect.DeepEqual(g.Cells, want.Cells) || g.Reference != want.Reference || g.RefStep != want.RefStep {
			t.Errorf("%s: the summary's cells differ from the run's", g.Graph)
		}
	}
	if sum.Summary[0].Pairs != 2 || sum.Summary[1].Pairs != 0 {
		t.Errorf("go-hdp pairs %d and %d, want 2 (the run budget) and 0", sum.Summary[0].Pairs, sum.Summary[1].Pairs)
	}
	// NoRun on an empty dir: every cell missing, no reference run.
	o.Dir = t.TempDir()
	empty, err := Learned(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if g := empty.Graphs[0]; g.Missing != 4 || len(g.Cells) != 0 || g.Reference != "" || g.Note != "reference not kept" {
		t.Errorf("empty dir: %+v", g)
	}
	o.Dir = ""
	if _, err := Learned(context.Background(), o); err == nil {
		t.Error("NoRun without a dir accepted")
	}
}
