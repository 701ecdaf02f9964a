package reports

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/timed"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report/placements"
)

// TestEqualTime runs two methods on a small graph at one short budget,
// then again from the kept cells.
func TestEqualTime(t *testing.T) {
	dir := t.TempDir()
	o := EqualTimeOptions{Graphs: []string{"../../examples/mlp.json"}, Methods: []string{"local-search", "go-no-learning"},
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
		timed.Bound(t, "cell "+c.Method+" on a 0.3 s budget", time.Duration(c.Wall*float64(time.Second)), 5*time.Second)
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
		if !reflect.DeepEqual(c, g.Cells[i]) {
			t.Errorf("cell %d read back as %+v, was %+v", i, c, g.Cells[i])
		}
	}
	if again.Graphs[0].Reference != g.Reference || again.Graphs[0].RefStep != g.RefStep {
		t.Errorf("reference read back as %s %v, was %s %v", again.Graphs[0].Reference, again.Graphs[0].RefStep, g.Reference, g.RefStep)
	}
	// No-run reads what the dir keeps and runs nothing: a method not
	// kept there is a missing cell, not a run one.
	nr := o
	nr.NoRun, nr.Methods = true, []string{"local-search", "sa", "go-no-learning"}
	before, start := dirState(t, dir), time.Now()
	kept, err := EqualTime(context.Background(), nr)
	if err != nil {
		t.Fatal(err)
	}
	if kg := kept.Graphs[0]; len(kg.Cells) != 2 || kg.Missing != 1 || kg.Cell("sa", 0.3) != nil || kg.RefStep != g.RefStep {
		t.Errorf("no-run row %+v: want the 2 kept cells, sa missing", kg)
	}
	timed.Bound(t, "no-run", time.Since(start), 2*time.Second)
	sameDir(t, "no-run", dir, before)
	// No-run on a dir that keeps nothing: no reference, every cell missing.
	nr.Dir = t.TempDir()
	empty, err := EqualTime(context.Background(), nr)
	if err != nil {
		t.Fatal(err)
	}
	if eg := empty.Graphs[0]; len(eg.Cells) != 0 || eg.Missing != 3 || eg.Note != "reference not kept" || eg.Reference != "" {
		t.Errorf("no-run on an empty dir: %+v", eg)
	}
	nr.Dir = ""
	if _, err := EqualTime(context.Background(), nr); err == nil {
		t.Error("no-run without a dir accepted")
	}
	// The claims' lead must be one of the methods; by default it is go
	// (not run here: no claims).
	if rep.Lead != "go" {
		t.Errorf("lead %q, want go", rep.Lead)
	}
	bad := o
	bad.Lead = "sa"
	if _, err := EqualTime(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "lead") {
		t.Errorf("a lead not among the methods: %v", err)
	}
	// A bad graph or method is an error, not a row.
	if _, err := EqualTime(context.Background(), EqualTimeOptions{Graphs: []string{"no-such.json"}, Budgets: o.Budgets}); err == nil {
		t.Error("a missing graph was accepted")
	}
	if _, err := EqualTime(context.Background(), EqualTimeOptions{Methods: []string{"nope"}}); err == nil {
		t.Error("an unknown method was accepted")
	}
}

// TestEqualTimeModel: the methods that place with a pre-trained model get
// --model's, the report names it, a kept cell records its sha256 and a
// rerun with another model runs the cell again; a corrupt model is an
// error before anything runs.
func TestEqualTimeModel(t *testing.T) {
	dir := t.TempDir()
	small := &policy.Config{SageLayers: 1, SageDim: 16, DModel: 16, Heads: 1, HeadDim: 16, Inner: 16, CondDim: 16, HeadHidden: 16, SegmentLen: 16}
	model := func(name string, seed uint64) string {
		pol, err := gdp.NewPolicy(small, optimize.AllTasks, seed)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := pol.Save(path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b := model("a.policy", 1), model("b.policy", 2)
	o := EqualTimeOptions{Graphs: []string{"../../examples/mlp.json"}, Methods: []string{"go-scored-pretrained-network"},
		Budgets: []time.Duration{200 * time.Millisecond}, Seed: 1, Dir: filepath.Join(dir, "cells"), Model: a}
	o.Cluster.GPUs = 2
	cellSHA := func() string {
		t.Helper()
		paths, _ := filepath.Glob(filepath.Join(o.Dir, "*", "go-scored-pretrained-network-*.json"))
		if len(paths) != 1 {
			t.Fatalf("cell files %v", paths)
		}
		data, err := os.ReadFile(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		var f equalTimeCellFile
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatal(err)
		}
		return f.Model
	}
	rep, err := EqualTime(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Graphs[0].Cell("go-scored-pretrained-network", 0.2); c == nil || c.Error != "" || c.Ratio <= 0 || c.Ratio > 1 {
		t.Fatalf("cell %+v", c)
	}
	if !strings.HasPrefix(rep.Model, a+" (sha256 ") {
		t.Errorf("report's model %q", rep.Model)
	}
	shaA := cellSHA()
	if len(shaA) != 64 {
		t.Fatalf("kept cell's model %q, want a sha256", shaA)
	}
	o.Model = b
	if _, err := EqualTime(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if shaB := cellSHA(); shaB == shaA || len(shaB) != 64 {
		t.Errorf("after a rerun with another model the cell's model is %q (was %q)", shaB, shaA)
	}
	bad := filepath.Join(dir, "bad.policy")
	os.WriteFile(bad, []byte("not a policy"), 0o644)
	o.Model = bad
	if _, err := EqualTime(context.Background(), o); err == nil || !strings.Contains(err.Error(), "bad.policy") {
		t.Errorf("a corrupt model: %v", err)
	}
}

// TestEqualTimeCPU: with CPU budgets every cell stops on its CPU time
// (about the budget, whatever the wall time), the report says its budgets
// are CPU time, and the cells are kept apart from wall-time cells.
func TestEqualTimeCPU(t *testing.T) {
	dir := t.TempDir()
	o := EqualTimeOptions{Graphs: []string{"../../examples/mlp.json"}, Methods: []string{"local-search"},
		Budgets: []time.Duration{300 * time.Millisecond}, Seed: 1, Dir: dir, CPU: true}
	o.Cluster.GPUs = 2
	rep, err := EqualTime(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.CPU {
		t.Error("report does not say its budgets are CPU time")
	}
	c := rep.Graphs[0].Cells[0]
	if c.Error != "" || c.Status != optimize.TimeUp.String() || c.CPU < 0.3 || c.CPU > 3 {
		t.Errorf("cell %+v: want stopped on 0.3 CPU seconds", c)
	}
	if paths, _ := filepath.Glob(filepath.Join(dir, "*", "local-search-0.3s-cpu.json")); len(paths) != 1 {
		t.Errorf("kept cells %v, want one local-search-0.3s-cpu.json", paths)
	}
	var b strings.Builder
	if err := placements.WriteEqualTime(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "CPU time per method") {
		t.Errorf("table does not name its budgets CPU time:\n%s", b.String())
	}
}

// TestTable2ProblemAt: NAME@N opens NAME on N GPUs whatever the cluster
// says; a count out of range is an error naming the entry.
func TestTable2ProblemAt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gpus    int
		devices int
		err     string
	}{
		{"../../examples/mlp.json", 2, 2, ""},
		{"../../examples/mlp.json@4", 2, 4, ""},
		{"../../examples/mlp.json@1", 0, 1, ""},
		{"../../examples/mlp.json@9", 2, 0, "1 to 8"},
		{"../../examples/mlp.json@0", 2, 0, "1 to 8"},
	} {
		pp, err := table2Problem(tc.name, inputs.ClusterSpec{GPUs: tc.gpus}, false)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.name) {
				t.Errorf("%s: error %v, want one naming it and %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if d := pp.Problem.Devices(); d != tc.devices {
			t.Errorf("%s: %d devices, want %d", tc.name, d, tc.devices)
		}
		pp.Close()
	}
}

// TestEqualTimeCascade: with cascade, a graph on 4 GPUs listed after the
// same graph on 2 starts every method from that method's 2-GPU result, so
// no method is worse with more GPUs; the cells keep their decisions and
// read back, decisions included, on a rerun.
func TestEqualTimeCascade(t *testing.T) {
	dir := t.TempDir()
	o := EqualTimeOptions{Graphs: []string{"../../examples/mlp.json@2", "../../examples/mlp.json@4"},
		Methods: []string{"dp", "local-search-anchored"}, Budgets: []time.Duration{200 * time.Millisecond}, Seed: 3, Dir: dir, Cascade: true}
	rep, err := EqualTime(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := rep.Graphs[0], rep.Graphs[1]
	if lo.Devices != 2 || hi.Devices != 4 || lo.CascadeFrom != "" || hi.CascadeFrom != lo.Graph+"@2" {
		t.Fatalf("rows %s@%d from %q, %s@%d from %q", lo.Graph, lo.Devices, lo.CascadeFrom, hi.Graph, hi.Devices, hi.CascadeFrom)
	}
	for _, m := range o.Methods {
		cl, ch := lo.Cell(m, 0.2), hi.Cell(m, 0.2)
		if cl == nil || ch == nil || !cl.Valid || !ch.Valid {
			t.Fatalf("%s: cells %+v %+v", m, cl, ch)
		}
		if ch.Objective > cl.Objective {
			t.Errorf("%s: %v on 4 GPUs, worse than %v on 2", m, ch.Objective, cl.Objective)
		}
		if ch.From != lo.Graph+"@2" || cl.From != "" {
			t.Errorf("%s: cascade from %q and %q", m, cl.From, ch.From)
		}
	}
	if s := rep.Summary[0].MoreGPUs; s["dp"].Pairs != 1 || len(s["dp"].Worse) != 0 {
		t.Errorf("more-GPUs check %+v", s)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*@4", "*-from-*.decision.json"))
	if len(files) != 2 {
		t.Errorf("kept decisions on 4 GPUs: %v", files)
	}
	// The rerun reads both rows back, the 2-GPU decisions with them, so
	// the 4-GPU cells are found under the same cascade name.
	before, start := dirState(t, dir), time.Now()
	again, err := EqualTime(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rep.Graphs {
		for j, c := range again.Graphs[i].Cells {
			if !reflect.DeepEqual(c, rep.Graphs[i].Cells[j]) {
				t.Errorf("row %d cell %d read back as %+v, was %+v", i, j, c, rep.Graphs[i].Cells[j])
			}
		}
	}
	timed.Bound(t, "the rerun", time.Since(start), 2*time.Second)
	sameDir(t, "the rerun", dir, before)
	// A dir whose 2-GPU cells were kept without the cascade (no
	// decisions) runs them again with it, so the 4-GPU row still starts
	// from them.
	dir2 := t.TempDir()
	plain := o
	plain.Dir, plain.Cascade = dir2, false
	if _, err := EqualTime(context.Background(), plain); err != nil {
		t.Fatal(err)
	}
	o.Dir = dir2
	third, err := EqualTime(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if h := third.Graphs[1]; h.CascadeFrom == "" || h.Cell("dp", 0.2) == nil || h.Cell("dp", 0.2).From == "" {
		t.Errorf("after a plain run the cascade row is %+v", h)
	}
}

// TestEqualTimeHead: --head gives go-scored-zero-shot that head, the
// report names it, a kept cell records it (another head runs the cell
// again), and a corrupt head file is an error naming it.
func TestEqualTimeHead(t *testing.T) {
	dir := t.TempDir()
	h1, h2 := filepath.Join(dir, "a.head"), filepath.Join(dir, "b.head")
	if err := gdp.NewMoveHead(1).Save(h1); err != nil {
		t.Fatal(err)
	}
	if err := gdp.NewMoveHead(2).Save(h2); err != nil {
		t.Fatal(err)
	}
	o := EqualTimeOptions{Graphs: []string{"../../examples/mlp.json"}, Methods: []string{"go-scored-zero-shot"},
		Budgets: []time.Duration{100 * time.Millisecond}, Seed: 1, Dir: filepath.Join(dir, "cells"), Head: h1}
	o.Cluster.GPUs = 2
	rep, err := EqualTime(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Model, "head "+h1) {
		t.Errorf("report names %q, want the head", rep.Model)
	}
	file := filepath.Join(dir, "cells", rep.Graphs[0].Graph+"@2", "go-scored-zero-shot-0.1s.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f equalTimeCellFile
	if err := json.Unmarshal(data, &f); err != nil || !strings.Contains(f.Model, "head ") {
		t.Errorf("kept cell's model %q (%v): want the head's sha256", f.Model, err)
	}
	o.Head = h2
	if _, err := EqualTime(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	data2, _ := os.ReadFile(file)
	var f2 equalTimeCellFile
	if json.Unmarshal(data2, &f2) != nil || f2.Model == f.Model {
		t.Errorf("another head read the kept cell back: %q", f2.Model)
	}
	bad := filepath.Join(dir, "bad.head")
	os.WriteFile(bad, []byte("{not a head"), 0o644)
	o.Head = bad
	if _, err := EqualTime(context.Background(), o); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a corrupt head: %v", err)
	}
}

// TestEqualTimeSeeds: --seeds runs the report once per seed, each kept in
// DIR/seed-N, and combines them: every cell's ratio is the geometric mean
// of the seeds' runs, which a rerun of one seed alone reproduces.
func TestEqualTimeSeeds(t *testing.T) {
	dir := t.TempDir()
	o := EqualTimeOptions{Graphs: []string{"../../examples/mlp.json"}, Methods: []string{"local-search", "sa"},
		Budgets: []time.Duration{100 * time.Millisecond}, Seeds: []uint64{1, 2}, Dir: dir, Lead: "local-search"}
	o.Cluster.GPUs = 2
	rep, err := EqualTime(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Seeds) != 2 || len(rep.Graphs) != 1 || len(rep.Graphs[0].Cells) != 2 {
		t.Fatalf("report %+v", rep)
	}
	for _, seed := range []uint64{1, 2} {
		one := o
		one.Seeds, one.Seed, one.Dir, one.NoRun = nil, seed, filepath.Join(dir, "seed-"+string(rune('0'+seed))), true
		r, err := EqualTime(context.Background(), one)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Graphs[0].Cells {
			got := rep.Graphs[0].Cell(c.Method, c.Budget)
			if got == nil || got.SeedRatios[seed-1] != c.Ratio {
				t.Errorf("seed %d %s: combined %+v, kept ratio %v", seed, c.Method, got, c.Ratio)
			}
		}
	}
	for _, c := range rep.Graphs[0].Cells {
		if want := math.Sqrt(c.SeedRatios[0] * c.SeedRatios[1]); math.Abs(c.Ratio-want) > 1e-12 {
			t.Errorf("%s: ratio %v, want the geometric mean %v", c.Method, c.Ratio, want)
		}
	}
	ls, sa := rep.Graphs[0].Cell("local-search", 0.1), rep.Graphs[0].Cell("sa", 0.1)
	ahead := 0
	for i := range 2 {
		if sa.SeedRatios[i] > ls.SeedRatios[i] {
			ahead++
		}
	}
	if s := rep.Summary[0]; s.Runs != 2 || s.AheadRuns["sa"] != ahead {
		t.Errorf("summary %+v: want 2 runs, local search ahead of sa on %d", s, ahead)
	}
	if _, err := EqualTime(context.Background(), EqualTimeOptions{Graphs: o.Graphs, Methods: o.Methods, Budgets: o.Budgets, Seeds: []uint64{3, 3}}); err == nil {
		t.Error("a seed listed twice: no error")
	}
}
