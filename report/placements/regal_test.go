package placements

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestRegalSummarize checks the gaps, improvements and the curve on two
// graphs by hand.
func TestRegalSummarize(t *testing.T) {
	cell := func(m string, b int, v float64) RegalCell {
		return RegalCell{Objective: "peak-memory", Method: m, Budget: b, Value: v, Valid: v > 0, Evaluations: b}
	}
	r := Regal{Evaluations: 100, BestBudget: 1000, Budgets: []int{100, 1000}, Methods: []string{"a", "brkga"}, CurveMethods: []string{"brkga"},
		Objectives: []string{"peak-memory"}, Reference: "brkga",
		Graphs: []RegalGraph{
			// best known 80 (brkga at 1000): a gaps 25%, brkga 50%;
			// a improves (120-100)/120 = 16.67% on brkga 100.
			{Graph: "g1", Cells: []RegalCell{cell("a", 100, 100), cell("brkga", 100, 120), cell("brkga", 1000, 80)}},
			// best known 50 (a): a 0%, brkga 100%; a improves 50%;
			// brkga 1000 improves (100-90)/100 = 10%.
			{Graph: "g2", Cells: []RegalCell{cell("a", 100, 50), cell("brkga", 100, 100), cell("brkga", 1000, 90)}},
			// a has no valid result: left out of the table, and of the
			// curve only where brkga itself is missing.
			{Graph: "g3", Cells: []RegalCell{cell("a", 100, 0), cell("brkga", 100, 10), cell("brkga", 1000, 10)}},
		}}
	r.Summarize()
	s := r.Summary[0]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if s.Graphs != 2 || !near(s.Gap["a"], 12.5) || !near(s.Gap["brkga"], 75) || !near(s.Improvement["a"], (100.0/6+50)/2) || s.Improvement["brkga"] != 0 {
		t.Errorf("summary %+v", s)
	}
	if s.Wins["a"] != 2 || s.Losses["a"] != 0 {
		t.Errorf("wins %v losses %v", s.Wins, s.Losses)
	}
	if b := r.Graphs[0].Best["peak-memory"]; b.Value != 80 || b.Method != "brkga" || b.Budget != 1000 {
		t.Errorf("best known of g1: %+v", b)
	}
	cv := r.Curves[0]
	// At 1000: g1 (120-80)/120 = 33.33%, g2 10%, g3 0%: mean 14.44%.
	if len(cv.Budgets) != 2 || cv.Improvement[0] != 0 || !near(cv.Improvement[1], (100.0/3+10+0)/3) {
		t.Errorf("curve %+v", cv)
	}
	var buf bytes.Buffer
	if err := WriteRegal(&buf, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"brkga 100", "% gap from best known", "75.00%", "12.50%", "invalid", "80 B (brkga 1K)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, buf.String())
		}
	}
	if EvalsLabel(5000) != "5K" || EvalsLabel(500) != "500" {
		t.Error("EvalsLabel")
	}
}
