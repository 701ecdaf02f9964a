package reports

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/jobs"
	"github.com/placer/placer/jobs/grid"
	"github.com/placer/placer/report/placements"
)

// TestParallel runs the report on a small graph with batch information at
// 2 and 4 GPUs with a short search, then again from the kept cells, and
// with --no-run.
func TestParallel(t *testing.T) {
	dir := t.TempDir()
	var progress strings.Builder
	o := ParallelOptions{Graphs: []string{"wavenet2x18"}, GPUs: []int{2, 4}, Topologies: []string{"pcie"}, Evals: 60, Dir: dir, Progress: &progress}
	rep, err := Parallel(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cells) != 2 || rep.Missing != 0 || len(rep.Summary) != 2 {
		t.Fatalf("report %+v", rep)
	}
	want := []string{"single", "best quick", "ddp", "fsdp", "zero2", "gpipe", "1f1b", "pipedream", "placer"}
	for _, c := range rep.Cells {
		var got []string
		for _, r := range c.Rows {
			got = append(got, r.Strategy)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s@%d rows %v, want %v", c.Graph, c.GPUs, got, want)
		}
		if c.Batch == 0 || c.Ops == 0 || c.Topology != "pcie" || c.BestUser == "" || c.Ratio <= 0 {
			t.Errorf("cell %+v", c)
		}
		p := c.Placer()
		if !p.Fits || p.From == "" || p.GPUsPerReplica < 1 || p.Replicas < 1 {
			t.Errorf("%s@%d placer row %+v", c.Graph, c.GPUs, p)
		}
		for _, r := range c.Rows {
			switch {
			case r.Absent():
				t.Errorf("%s@%d: row %+v absent", c.Graph, c.GPUs, r)
			case r.Fits && r.StepTime < p.StepTime:
				t.Errorf("%s@%d: placer %.6f s worse than %s %.6f s", c.Graph, c.GPUs, p.StepTime, r.Strategy, r.StepTime)
			}
		}
		byName := map[string]placements.ParallelRow{}
		for _, r := range c.Rows {
			byName[r.Strategy] = r
		}
		if r := byName["ddp"]; r.Replicas != c.GPUs || r.GPUsPerReplica != 1 || r.Chose == "" {
			t.Errorf("ddp row %+v on %d GPUs", r, c.GPUs)
		}
		if r := byName["single"]; r.Replicas != 1 || r.GPUsPerReplica != 1 || r.Chose != "" {
			t.Errorf("single row %+v", r)
		}
		if r := byName["1f1b"]; !strings.Contains(r.Chose, "schedule=1f1b") {
			t.Errorf("1f1b row %+v", r)
		}
		if r := byName["pipedream"]; r.Replicas*r.GPUsPerReplica > c.GPUs || r.StepTime <= 0 {
			t.Errorf("pipedream row %+v on %d GPUs", r, c.GPUs)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "wavenet2x18@*-pcie.json")); len(files) != 2 {
		t.Errorf("kept %v, want 2 cells", files)
	}
	// A rerun with the same dir runs nothing: every cell is read back.
	progress.Reset()
	again, err := Parallel(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, rep) || strings.Count(progress.String(), "(kept)") != 2 {
		t.Errorf("rerun: %+v\nprogress %q", again, progress.String())
	}
	// --no-run: the kept cells, and one more GPU count counted missing.
	o.NoRun, o.GPUs, o.Progress = true, []int{2, 4, 8}, nil
	nr, err := Parallel(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(nr.Cells) != 2 || nr.Missing != 1 || !reflect.DeepEqual(nr.Cells, rep.Cells) {
		t.Errorf("--no-run: %d cells, %d missing", len(nr.Cells), nr.Missing)
	}
	if files, _ := os.ReadDir(dir); len(files) != 2 {
		t.Errorf("--no-run wrote files: %v", files)
	}
	// Other settings run the cells again.
	o.NoRun, o.GPUs, o.Evals = true, []int{2}, 61
	if nr, err := Parallel(context.Background(), o); err != nil || len(nr.Cells) != 0 || nr.Missing != 1 {
		t.Errorf("another budget's --no-run: %d cells, %d missing, %v", len(nr.Cells), nr.Missing, err)
	}
}

// TestParallelNoBatch: a graph without batch information has no
// strategy rows, each absent with the note, and placer's answer is a
// single-replica placement.
func TestParallelNoBatch(t *testing.T) {
	rep, err := Parallel(context.Background(), ParallelOptions{Graphs: []string{"../../examples/mlp.json"}, GPUs: []int{2}, Topologies: []string{"nvswitch"}, Evals: 20})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cells[0]
	for _, r := range c.Rows {
		switch r.Strategy {
		case "ddp", "fsdp", "zero2", "gpipe", "1f1b":
			if r.Note != jobs.NoBatch {
				t.Errorf("row %+v: want absent, %q", r, jobs.NoBatch)
			}
		case "placer":
			if r.Replicas != 1 || r.Chose != "" {
				t.Errorf("placer row %+v", r)
			}
		}
	}
	if c.Ratio != 0 || c.BestUser != "" || len(rep.Summary) != 1 || len(rep.Summary[0].NoUser) != 1 {
		t.Errorf("cell %+v, summary %+v", c, rep.Summary)
	}
}

// TestParallelBadInput: every bad input is an error before anything
// runs.
func TestParallelBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, o := range []ParallelOptions{
		{Graphs: []string{"nosuch"}},
		{Graphs: []string{"wavenet2x18"}, Topologies: []string{"ring"}},
		{Graphs: []string{"wavenet2x18"}, Hardware: "tpu"},
		{Graphs: []string{"wavenet2x18"}, GPUs: []int{1}},
		{Graphs: []string{"wavenet2x18"}, GPUs: []int{65}},
		{Graphs: []string{"wavenet2x18"}, NoRun: true},
	} {
		o.Dir = filepath.Join(dir, "d")
		if o.NoRun {
			o.Dir = ""
		}
		if _, err := Parallel(context.Background(), o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("bad input wrote %v", files)
	}
}

// TestParallelCells: the report's cells run one by one (--cell I, as the
// tasks of a Slurm array do) or by two workers sharing --dir give the
// cells one process gives, step for step.
func TestParallelCells(t *testing.T) {
	base := ParallelOptions{Graphs: []string{"wavenet2x18"}, GPUs: []int{2, 4}, Topologies: []string{"pcie"}, Evals: 60}
	one, err := Parallel(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	steps := func(rep placements.Parallel) [][]float64 {
		var out [][]float64
		for _, c := range rep.Cells {
			var s []float64
			for _, r := range c.Rows {
				s = append(s, r.StepTime)
			}
			out = append(out, s)
		}
		return out
	}
	want := steps(one)
	// Cell by cell, each run as its own array task.
	dir := t.TempDir()
	for i := range 2 {
		o := base
		o.Dir, o.Work = dir, &grid.Work{Mode: grid.One, Cell: i}
		if _, err := Parallel(context.Background(), o); err != nil {
			t.Fatalf("cell %d: %v", i, err)
		}
	}
	o := base
	o.Dir, o.NoRun = dir, true
	got, err := Parallel(context.Background(), o)
	if err != nil || !reflect.DeepEqual(steps(got), want) {
		t.Errorf("cell by cell: %v, %v; want %v", steps(got), err, want)
	}
	// Two workers at once.
	dir = t.TempDir()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			o := base
			o.Dir, o.Work = dir, &grid.Work{Mode: grid.Worker}
			_, err := Parallel(context.Background(), o)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	o.Dir = dir
	got, err = Parallel(context.Background(), o)
	if err != nil || !reflect.DeepEqual(steps(got), want) {
		t.Errorf("two workers: %v, %v; want %v", steps(got), err, want)
	}
}
