package published

import (
	"math"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestSourceSets: every sweep and every row of report megatron's tables
// names a published source set, and every constant chosen with rows
// (plan.Tuned) names only source sets there are: a constant cannot be
// reset for a source that is not one, nor a source escape its reset.
func TestSourceSets(t *testing.T) {
	for _, sw := range Sweeps() {
		if !IsSourceSet(sw.Set) {
			t.Errorf("sweep %s: source set %q is not one of SourceSets", sw.Name, sw.Set)
		}
	}
	var rows []Row
	for _, table := range [][]Row{MegatronTable(), MegatronStrongScaling(), MegatronA100(), Llama3(), MegatronBridge()} {
		rows = append(rows, table...)
	}
	for _, r := range rows {
		if !IsSourceSet(r.Set) {
			t.Errorf("row %s: source set %q is not one of SourceSets", r.Name, r.Set)
		}
	}
	for _, c := range plan.Tuned {
		for _, s := range c.Sources {
			if !IsSourceSet(s) {
				t.Errorf("%s: source %q is not one of SourceSets", c.Name, s)
			}
		}
	}
}

// TestSampleErrorOf: a table's errors in and out of sample by hand.
// Published 100, 200, 400; in sample 110, 190, 440 (+10%, -5%, +10%:
// mean 8.33%, ranks 1 2 3: Spearman 1); out of sample 150, 140, 400
// (+50%, -30%, 0%: mean 26.67%, ranks 2 1 3: Spearman 0.5).
func TestSampleErrorOf(t *testing.T) {
	rank := func(x, y []float64) float64 { // Spearman without ties: 1 - 6 sum d^2 / (n (n^2 - 1))
		r := func(v []float64) []float64 {
			out := make([]float64, len(v))
			for i := range v {
				for j := range v {
					if v[j] < v[i] {
						out[i]++
					}
				}
			}
			return out
		}
		rx, ry := r(x), r(y)
		var d2 float64
		for i := range rx {
			d2 += (rx[i] - ry[i]) * (rx[i] - ry[i])
		}
		n := float64(len(x))
		return 1 - 6*d2/(n*(n*n-1))
	}
	e := SampleErrorOf("a", []string{"X 1 -> 0"}, []float64{100, 200, 400}, []float64{110, 190, 440}, []float64{150, 140, 400}, rank)
	if e.Set != "a" || e.Rows != 3 || math.Abs(e.MeanAbs-0.25/3) > 1e-12 || math.Abs(e.OutMeanAbs-0.8/3) > 1e-12 ||
		e.Spearman == nil || *e.Spearman != 1 || e.OutSpearman == nil || *e.OutSpearman != 0.5 {
		t.Errorf("%+v: want 3 rows, mean 8.33%% and 26.67%%, Spearman 1 and 0.5", e)
	}
	two := SampleErrorOf("b", nil, []float64{1, 2}, []float64{1, 2}, []float64{1, 2}, rank)
	if two.Spearman != nil || two.OutSpearman != nil || two.Reset == nil || len(two.Reset) != 0 {
		t.Errorf("%+v: two rows have no Spearman; nothing reset is an empty list", two)
	}
}
