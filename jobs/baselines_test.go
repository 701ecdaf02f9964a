package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/pipeline"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/report"
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
	if err := report.WriteBaselines(&table, b); err != nil {
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
	var back report.Baselines
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
		rows, err := pipeline.Methods(context.Background(), p, methods.Quick(), methods.Options{}, true, &optimize.Settings{Seed: 1}, nil)
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
