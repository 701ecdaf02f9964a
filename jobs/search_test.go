package jobs

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/methods/anchored"
	"github.com/placer/placer/methods/gdp"
)

// TestSearchNeverWorseThanItsTable: whatever the method and budget, the
// answer's step time is at most every valid row's of the comparison; a
// search that cannot improve on the best row returns that row's decision
// and names it.
func TestSearchNeverWorseThanItsTable(t *testing.T) {
	cases := []struct {
		graph  string
		gpus   int
		method string
		evals  int
		source bool // the best row's decision is kept
	}{
		{"../examples/mlp.json", 2, "", 400, false},
		{"../examples/tiny.json", 2, "", 400, false},
		{"../examples/mlp.json", 4, "", 200, false},
		// REGAL's local search starts from a random placement: in two
		// evaluations it finds nothing better than the baselines.
		{"../examples/mlp.json", 2, "local-search", 2, true},
	}
	for _, c := range cases {
		rep, err := SearchGraph(context.Background(), GraphSearchOptions{Graph: inputs.GraphSpec{Path: c.graph}, Cluster: inputs.ClusterSpec{GPUs: c.gpus}, Method: c.method, Evals: c.evals, Seed: 3})
		if err != nil {
			t.Fatalf("%s on %d with %q: %v", c.graph, c.gpus, c.method, err)
		}
		r := rep.Result
		for _, row := range rep.Comparison.Rows {
			if row.Error == "" && row.Feasible && row.StepTime < r.StepTime*(1-1e-12) {
				t.Errorf("%s on %d GPUs: %s %v ms, worse than the row %s %v ms", c.graph, c.gpus, r.Method, r.StepTime*1e3, row.Method, row.StepTime*1e3)
			}
		}
		if (r.Source != "") != c.source {
			t.Errorf("%s on %d GPUs with %q: source %q, want a kept row %v", c.graph, c.gpus, c.method, r.Source, c.source)
		}
		if want := cmpOr(c.method, anchored.DefaultMethod); r.Method != want {
			t.Errorf("method %q, want %q", r.Method, want)
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestSearchSameSeedSameAnswer: with an evaluation budget the same seed
// gives the same decision and numbers.
func TestSearchSameSeedSameAnswer(t *testing.T) {
	run := func() SearchReport {
		rep, err := SearchGraph(context.Background(), GraphSearchOptions{Graph: inputs.GraphSpec{Path: "../examples/tiny.json"}, Cluster: inputs.ClusterSpec{GPUs: 2}, Evals: 300, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	a, b := run(), run()
	if a.Result.StepTime != b.Result.StepTime || a.Result.Evaluations != b.Result.Evaluations || !reflect.DeepEqual(a.Result.Decision, b.Result.Decision) {
		t.Errorf("two runs differ: %v ms in %d evaluations, %v ms in %d", a.Result.StepTime*1e3, a.Result.Evaluations, b.Result.StepTime*1e3, b.Result.Evaluations)
	}
	if a.Result.Evaluations > 300+16 {
		t.Errorf("%d evaluations for a budget of 300", a.Result.Evaluations)
	}
}

// TestSearchDDPRow: on a graph with a batch, the search's table has the
// ddp row, its anchor is never a strategy's decision, and its answer is
// never worse than ddp's.
func TestSearchDDPRow(t *testing.T) {
	rep, err := SearchGraph(context.Background(), GraphSearchOptions{Graph: inputs.GraphSpec{Workload: "wavenet2x18"}, Cluster: inputs.ClusterSpec{GPUs: 2}, Evals: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ddp *float64
	for _, r := range rep.Comparison.Rows {
		if r.Method == "ddp" && r.Error == "" {
			v := r.StepTime
			ddp = &v
		}
	}
	if ddp == nil {
		t.Fatal("no ddp row")
	}
	if rep.Result.StepTime > *ddp*(1+1e-12) {
		t.Errorf("search %v ms, worse than ddp's %v ms", rep.Result.StepTime*1e3, *ddp*1e3)
	}
	if rep.Result.Reference == "ddp" {
		t.Error("the search was anchored on a strategy's decision")
	}
}

// TestSearchJoint: on 4 GPUs and a graph with a batch, the search also
// refines points of the joint space (rows "go-scored STRATEGY", replicas
// of a searched placement among them), whose decisions carry their
// strategy, and answers with the best row.
func TestSearchJoint(t *testing.T) {
	rep, err := SearchGraph(context.Background(), GraphSearchOptions{Graph: inputs.GraphSpec{Workload: "wavenet2x18"}, Cluster: inputs.ClusterSpec{GPUs: 4}, Evals: 400, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	joint := 0
	for _, r := range rep.Comparison.Rows {
		if s, ok := strings.CutPrefix(r.Method, "go-scored "); ok {
			joint++
			if r.Error != "" || r.Evaluations < 2 {
				t.Errorf("joint row %s: %+v", r.Method, r)
			}
			st, err := decision.ParseStrategy(s, nil)
			if err != nil || st.IsZero() {
				t.Errorf("joint row %s: strategy %v, %v", r.Method, st, err)
			}
			if d := rep.rows[r.Method].Decision; !d.Strategy.Equal(st) {
				t.Errorf("joint row %s: decision's strategy %v", r.Method, d.Strategy)
			}
		}
		if r.Error == "" && r.Feasible && r.StepTime < rep.Result.StepTime*(1-1e-12) {
			t.Errorf("row %s %v ms beats the answer %v ms", r.Method, r.StepTime*1e3, rep.Result.StepTime*1e3)
		}
	}
	if joint != anchored.JointSearches {
		t.Errorf("%d joint rows, want %d", joint, anchored.JointSearches)
	}
	// The search's own row's time is its summary's ("N evaluations in
	// T"), the joint rows' times not added to it.
	for _, r := range rep.Comparison.Rows {
		if r.Method == anchored.DefaultMethod && r.SearchTime != rep.Result.SearchTime {
			t.Errorf("the search's row: search time %v s, its summary %d evaluations in %v s", r.SearchTime, rep.Result.Evaluations, rep.Result.SearchTime)
		}
	}
}

// TestSearchProgressEndsAtSummary: the search's progress counts its
// budget's unit and ends where its summary does: a curve has a point
// every 16 rounds, so at 300 evaluations in rounds of 8 the last point
// falls short of the summary's steps and evaluations, and the search
// reports its result's once more when it ends.
func TestSearchProgressEndsAtSummary(t *testing.T) {
	type call struct {
		step, evals, done, total int
		unit                     string
	}
	var calls []call
	o := GraphSearchOptions{Graph: inputs.GraphSpec{Path: "../examples/tiny.json"}, Cluster: inputs.ClusterSpec{GPUs: 2}, Evals: 300, Seed: 7}
	o.OnStep = func(pt gdp.Point, _ float64, done, total int, unit string) {
		calls = append(calls, call{pt.Step, pt.Evaluations, done, total, unit})
	}
	rep, err := SearchGraph(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) < 2 {
		t.Fatalf("%d progress reports, want a point of the curve and the end", len(calls))
	}
	before, end := calls[len(calls)-2], calls[len(calls)-1]
	if end.step != rep.Result.Steps || end.evals != rep.Result.Evaluations || end.done != rep.Result.Evaluations || end.unit != "evaluations" {
		t.Errorf("progress ends at step %d, %d evaluations (%d/%d %s); the summary says %d steps, %d evaluations",
			end.step, end.evals, end.done, end.total, end.unit, rep.Result.Steps, rep.Result.Evaluations)
	}
	if before.step >= end.step || end.total > 300 || end.done > end.total+16 {
		t.Errorf("the last point of the curve at step %d, the end at %d, %d of %d evaluations: want the end after the last point, within the budget of 300", before.step, end.step, end.done, end.total)
	}
}
