package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/anchored"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report/placements"
)

func TestBaselinesMLP(t *testing.T) {
	var progress bytes.Buffer
	b, err := Baselines(context.Background(), BaselinesOptions{
		Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}, Cluster: inputs.ClusterSpec{GPUs: 2},
		Budget: 60, Seed: 1, Progress: &progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Rows) != len(DefaultBaselines) {
		t.Fatalf("%d rows", len(b.Rows))
	}
	if b.Reference != "single" {
		t.Errorf("reference %q: mlp has no expert placement", b.Reference)
	}
	for _, r := range b.Rows {
		switch {
		case r.Method == "expert" || slices.Contains(methods.Splitting(), r.Method):
			if r.Error == "" {
				t.Errorf("%s ran on mlp, which has no expert placement and no batch", r.Method)
			}
		case r.Error != "":
			t.Errorf("%s: %s", r.Method, r.Error)
		case r.StepTime <= 0 || r.SpeedUp <= 0 || r.Efficiency <= 0 || r.Efficiency > 1+1e-9:
			t.Errorf("%s: row %+v", r.Method, r)
		case r.Evaluations > 60:
			t.Errorf("%s: %d evaluations over the budget of 60", r.Method, r.Evaluations)
		}
		if r.Method == "single" && r.SpeedUp != 1 {
			t.Errorf("single's speed-up over itself is %g", r.SpeedUp)
		}
	}
	if n := strings.Count(progress.String(), "\n"); n != len(DefaultBaselines) {
		t.Errorf("%d progress lines", n)
	}
	var table bytes.Buffer
	if err := placements.WriteBaselines(&table, b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"vs single", "efficiency", "left out to fit 120 columns: step time, evaluations/s", "brkga", "expert: "} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var back placements.Baselines
	if err := json.Unmarshal(data, &back); err != nil || len(back.Rows) != len(b.Rows) {
		t.Fatalf("JSON round trip: %v", err)
	}
}

func TestBaselinesExpertReference(t *testing.T) {
	b, err := Baselines(context.Background(), BaselinesOptions{
		Graph: inputs.GraphSpec{Workload: "wavenet2x18"}, Cluster: inputs.ClusterSpec{GPUs: 2},
		Methods: []string{"single", "expert", "m-etf"}, Tasks: "placement,scheduling",
	})
	if err != nil {
		t.Fatal(err)
	}
	if b.Reference != "expert" || b.Rows[1].SpeedUp != 1 || b.Tasks != "placement,scheduling" {
		t.Errorf("reference %q, rows %+v", b.Reference, b.Rows)
	}
}

func TestBaselinesBadInput(t *testing.T) {
	_, err := Baselines(context.Background(), BaselinesOptions{Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}, Methods: []string{"magic"}})
	if !errors.Is(err, methods.ErrUnknown) {
		t.Errorf("unknown method: %v", err)
	}
	_, err = Baselines(context.Background(), BaselinesOptions{Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}, Tasks: "speed"})
	if err == nil {
		t.Error("unknown task accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Baselines(ctx, BaselinesOptions{Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestCompositeReferences: when placement and scheduling are searched
// together, the reference candidates include every quick scheduler's
// order on TensorFlow's default placement, named tf-default+NAME, with
// that placement; with placement alone there are none.
func TestCompositeReferences(t *testing.T) {
	for _, tc := range []struct {
		tasks string
		extra []string
	}{
		{"placement,scheduling,fusion", []string{"tf-default+gp-dfs", "tf-default+m-topo", "tf-default+m-etf"}},
		{"placement,scheduling", []string{"tf-default+gp-dfs", "tf-default+m-topo", "tf-default+m-etf"}},
		{"placement", nil},
		{"scheduling", nil},
	} {
		tasks, err := ParseTasks(tc.tasks)
		if err != nil {
			t.Fatal(err)
		}
		pp, _, err := newComparison(inputs.GraphSpec{Path: "../examples/mlp.json"}, inputs.ClusterSpec{GPUs: 2}, tasks, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := pp.Problem
		setBase(p)
		rows, err := anchored.Methods(context.Background(), p, methods.Quick(), methods.Options{}, true, &optimize.Settings{Seed: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range rows {
			names = append(names, r.Name)
		}
		want := append(slices.Clone(methods.Quick()), tc.extra...)
		if !slices.Equal(names, want) {
			t.Fatalf("%s: methods %v, want %v", tc.tasks, names, want)
		}
		base := p.Complete(decision.Decision{}).Device
		for _, r := range rows[len(methods.Quick()):] {
			if !slices.Equal(r.Decision.Device, base) || r.Decision.Priority == nil {
				t.Errorf("%s: %s does not order ops on the default placement", tc.tasks, r.Name)
			}
		}
	}
}

// TestEvalsPerSecondIsOverTheRowsTime: a row's evaluations/s is its
// evaluations over its search time, by hand: a joint row of the
// README's quick start, 5,016 evaluations in 0.89 s, is
// 5,016 / 0.89 = 5,635.96/s. A joint row's result is scored once more at
// the end (its Stats.Elapsed, here 210 us, is that one evaluation), and
// the rate over it, 5,016 / 210e-6 = 23,885,714/s, was what the table
// said. A row with no search time falls back to its result's
// elapsed time (100 evaluations in 0.5 s: 200/s).
func TestEvalsPerSecondIsOverTheRowsTime(t *testing.T) {
	pp, err := NewSetup(inputs.GraphSpec{Path: "../examples/mlp.json"}, inputs.ClusterSpec{GPUs: 2}, optimize.AllTasks, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pp.Close()
	p := pp.Problem
	d := p.Complete(decision.Decision{Device: decision.Single(p.Graph)})
	ev, err := p.Evaluator.Evaluate(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	res := &optimize.Result{Method: "go-scored dp=2,bucket=1MiB", Decision: d, Eval: ev,
		Stats: optimize.Stats{Evaluations: 5016, Elapsed: 210 * time.Microsecond}}
	row := tableRow(anchored.Row{Name: res.Method, Result: res, Elapsed: 890 * time.Millisecond}, p)
	if want := 5016 / 0.89; math.Abs(row.EvalsPerSecond-want) > 1e-9*want || math.Abs(row.EvalsPerSecond-5635.955) > 0.001 {
		t.Errorf("joint row: %.3f evaluations/s, want 5016 / 0.89 s = %.3f", row.EvalsPerSecond, want)
	}
	if row.SearchTime != 0.89 || row.Evaluations != 5016 {
		t.Errorf("joint row: %d evaluations in %g s, want 5016 in 0.89 s", row.Evaluations, row.SearchTime)
	}
	res.Stats = optimize.Stats{Evaluations: 100, Elapsed: 500 * time.Millisecond}
	if row := tableRow(anchored.Row{Name: "x", Result: res}, p); row.EvalsPerSecond != 200 {
		t.Errorf("no search time: %g evaluations/s, want 100 / 0.5 s = 200", row.EvalsPerSecond)
	}
	for _, c := range []struct {
		evals           int
		search, elapsed float64
		want            float64
	}{
		{5016, 0.89, 210e-6, 5016 / 0.89},
		{1259, 0.25, 0, 5036},
		{10, 0, 0, 0},
	} {
		if got := evalsPerSecond(c.evals, c.search, c.elapsed); got != c.want {
			t.Errorf("evalsPerSecond(%d, %g, %g) = %g, want %g", c.evals, c.search, c.elapsed, got, c.want)
		}
	}
	var progressLine bytes.Buffer
	progress(&progressLine, row)
	if want := "(5016 evaluations in 890.000 ms, 5636 evaluations/s)"; !strings.Contains(progressLine.String(), want) {
		t.Errorf("progress line %q lacks %q", progressLine.String(), want)
	}
}
