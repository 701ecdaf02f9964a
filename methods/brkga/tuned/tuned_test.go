package tuned_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/brkga/tuned"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

const good = `{"format":"placer-brkga-tuned","version":1,"command":"test","grid":{"population":[10],"elite_fraction":[0.2],"mutant_fraction":[0.2],"elite_bias":[0.7],"beta":[[1,1]]},
"family":"all","graphs":1,"seed":1,"devices":2,"memory_per_device":17179869184,"tasks":"placement,scheduling","transfers":"sync","evaluations":10,"run_seed":0,"wall_s":1,"cpu_s":1,
"objectives":{"step-time":{"params":{"population":10,"elite_fraction":0.2,"mutant_fraction":0.2,"elite_bias":0.7,"beta_alpha":1,"beta_beta":1},"mean_ratio_to_default":0.9,"default_mean_ratio":1,"settings_tried":1},
"peak-memory":{"params":{"population":12,"elite_fraction":0.25,"mutant_fraction":0.25,"elite_bias":0.6,"beta_alpha":0.5,"beta_beta":0.5},"mean_ratio_to_default":0.8,"default_mean_ratio":1,"settings_tried":1}}}`

func TestEmbedded(t *testing.T) {
	f, err := tuned.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range optimize.Objectives {
		q, err := f.For(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Check(); err != nil {
			t.Errorf("%v: %v", o, err)
		}
	}
}

func TestDecode(t *testing.T) {
	f, err := tuned.Decode([]byte(good), "good.json")
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := f.For(optimize.PeakMemory); q.Population != 12 || q.BetaAlpha != 0.5 {
		t.Errorf("peak-memory setting %+v", q)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", `{"format":`, "unexpected EOF"},
		{"wrong format", strings.Replace(good, `"placer-brkga-tuned"`, `"placer-graph"`, 1), "format"},
		{"wrong version", strings.Replace(good, `"version":1`, `"version":7`, 1), "version 7"},
		{"unknown field", strings.Replace(good, `"command"`, `"commando"`, 1), "unknown field"},
		{"no objectives", strings.Replace(good, `"objectives":{`, `"objectives":{}, "x":{`, 1), "unknown field"},
		{"unknown objective", strings.Replace(good, `"peak-memory":{`, `"latency":{`, 1), `"latency" is not an objective`},
		{"population too small", strings.Replace(good, `"population":12`, `"population":2`, 1), "objectives.peak-memory: population 2"},
		{"bias out of range", strings.Replace(good, `"elite_bias":0.6`, `"elite_bias":0.4`, 1), "elite_bias 0.4"},
		{"fractions overflow", strings.Replace(good, `"mutant_fraction":0.25`, `"mutant_fraction":0.9`, 1), "leave no room"},
		{"bad beta", strings.Replace(good, `"beta_alpha":0.5`, `"beta_alpha":0`, 1), "beta (0, 0.5)"},
	} {
		_, err := tuned.Decode([]byte(tc.data), "bad.json")
		if err == nil || !errors.Is(err, tuned.ErrFile) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("%s: error %v, want one naming bad.json and %q", tc.name, err, tc.want)
		}
	}
	empty := strings.Replace(good, `"objectives":{"step-time"`, `"objectivez":{"step-time"`, 1)
	if _, err := tuned.Decode([]byte(empty), "e.json"); err == nil {
		t.Error("a file without objectives decoded")
	}
}

func TestCounts(t *testing.T) {
	for _, tc := range []struct {
		q                tuned.Params
		elites, children int
	}{
		{tuned.Default, 20, 65}, // brkga.BRKGA's defaults: 20 elites, 65 children, 15 mutants
		{tuned.Params{Population: 50, Elites: 0.1, Mutants: 0.3}, 5, 30},
		{tuned.Params{Population: 10, Elites: 0.01, Mutants: 0.01}, 1, 8}, // at least one of each
	} {
		if e, c := tc.q.Counts(); e != tc.elites || c != tc.children {
			t.Errorf("%+v: %d elites %d children, want %d and %d", tc.q, e, c, tc.elites, tc.children)
		}
	}
	if n := len(tuned.DefaultGrid.Settings()); n != 81 {
		t.Errorf("default grid: %d settings, want 81", n)
	}
	if n := len(tuned.BetaGrid.Settings()); n != 162 {
		t.Errorf("Beta grid: %d settings, want 162", n)
	}
}

// TestOptimizer: brkga-tuned is BRKGA with the file's setting for the
// problem's objective, decision for decision.
func TestOptimizer(t *testing.T) {
	f, err := tuned.Decode([]byte(good), "good.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := methodstest.NewProblem(graphtest.TwoWeights(), 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := &optimize.Settings{Budget: optimize.Budget{Evaluations: 60}, Seed: 3}
	for _, o := range optimize.Objectives {
		p.Objective = o
		got, err := (&tuned.Optimizer{File: f}).Optimize(context.Background(), p, s)
		if err != nil {
			t.Fatal(err)
		}
		q, _ := f.For(o)
		want, err := q.BRKGA(p).Optimize(context.Background(), p, s)
		if err != nil {
			t.Fatal(err)
		}
		if got.Method != "brkga-tuned" || !slices.Equal(got.Decision.Device, want.Decision.Device) || got.Eval.StepTime != want.Eval.StepTime || got.Stats.Evaluations != 60 {
			t.Errorf("%v: %s %v %g (%d evaluations), want %v %g", o, got.Method, got.Decision.Device, got.Eval.StepTime, got.Stats.Evaluations, want.Decision.Device, want.Eval.StepTime)
		}
	}
	stepOnly := strings.Replace(good, `,
"peak-memory":{"params":{"population":12,"elite_fraction":0.25,"mutant_fraction":0.25,"elite_bias":0.6,"beta_alpha":0.5,"beta_beta":0.5},"mean_ratio_to_default":0.8,"default_mean_ratio":1,"settings_tried":1}`, "", 1)
	f2, err := tuned.Decode([]byte(stepOnly), "s.json")
	if err != nil {
		t.Fatal(err)
	}
	p.Objective = optimize.PeakMemory
	if _, err := (&tuned.Optimizer{File: f2}).Optimize(context.Background(), p, s); err == nil || !strings.Contains(err.Error(), "no setting for objective peak-memory") {
		t.Errorf("missing objective: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(good))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := tuned.Decode(data, "fuzz")
		if err != nil {
			if !errors.Is(err, tuned.ErrFile) {
				t.Fatalf("error %v does not wrap ErrFile", err)
			}
			return
		}
		for k, tu := range file.Objectives {
			if err := tu.Params.Check(); err != nil {
				t.Fatalf("%s: decoded an invalid setting: %v", k, err)
			}
		}
	})
}
