package placements

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// curve makes a learning curve from (wall s, best step s) pairs; CPU time
// is twice the wall time.
func curve(pts ...float64) []LearnedPoint {
	var c []LearnedPoint
	for i := 0; i+1 < len(pts); i += 2 {
		c = append(c, LearnedPoint{Wall: pts[i], CPU: 2 * pts[i], Evaluations: i + 1, BestStep: pts[i+1]})
	}
	return c
}

// TestTimeToReach: the first point strictly below the step (or at it,
// orEqual), in wall or CPU time; never when no point is.
func TestTimeToReach(t *testing.T) {
	c := curve(1, 0.5, 3, 0.4, 7, 0.3)
	for _, tc := range []struct {
		name    string
		c       []LearnedPoint
		step    float64
		orEqual bool
		cpu     bool
		want    float64
		ok      bool
	}{
		{"below the first point", c, 0.6, false, false, 1, true},
		{"strictly below", c, 0.4, false, false, 7, true},
		{"at, or equal", c, 0.4, true, false, 3, true},
		{"CPU time", c, 0.45, false, true, 6, true},
		{"never", c, 0.3, false, false, 0, false},
		{"at the last, or equal", c, 0.3, true, false, 7, true},
		{"no curve", nil, 1, true, false, 0, false},
		{"points without a valid step are skipped", curve(1, 0, 2, 0.2), 0.5, false, false, 2, true},
	} {
		got, ok := TimeToReach(tc.c, tc.step, tc.orEqual, tc.cpu)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: TimeToReach = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// handLearned is a report by hand: three graphs at a 30 s budget. On a,
// go (0.08) is ahead of hdp (0.1) and reached 0.1 at 1 s (1/30 of the
// budget: holds); on b, hdp (0.2) is ahead of go (0.25), which never
// reaches 0.2; c has no expert, and go reaches hdp's 0.3 at 10 s (1/3:
// does not hold).
func handLearned() Learned {
	cell := func(m string, step float64, c []LearnedPoint) LearnedCell {
		return LearnedCell{Method: m, Budget: 30, StepTime: step, Valid: true, Evaluations: 10, CPU: 31, Curve: c}
	}
	return Learned{Hardware: "v100", Budgets: []float64{30}, Methods: []string{"rl17", "hdp", "go"}, Graphs: []LearnedGraph{
		{Graph: "a", Devices: 2, ExpertStep: 0.15, Reference: "metis", RefStep: 0.12, RefTime: 0.5, Cells: []LearnedCell{
			cell("rl17", 0.2, curve(2, 0.3, 30, 0.2)),
			cell("hdp", 0.1, curve(1, 0.3, 12, 0.14, 20, 0.1, 30, 0.1)),
			cell("go", 0.08, curve(0.1, 0.12, 1, 0.1, 5, 0.08, 30, 0.08)),
		}},
		{Graph: "b", Devices: 4, ExpertStep: 0.22, Reference: "dp", RefStep: 0.3, Cells: []LearnedCell{
			{Method: "rl17", Budget: 30, Error: "out of memory"},
			cell("hdp", 0.2, curve(3, 0.5, 25, 0.2, 30, 0.2)),
			cell("go", 0.25, curve(0.1, 0.3, 9, 0.25, 30, 0.25)),
		}},
		{Graph: "c", Devices: 2, ExpertNote: "no expert placement", Cells: []LearnedCell{
			cell("rl17", 0.4, curve(30, 0.4)),
			cell("hdp", 0.3, curve(10, 0.3, 30, 0.3)),
			cell("go", 0.3, curve(10, 0.3, 30, 0.3)),
		}},
	}}
}

// TestLearnedSummary: ratios, times to beat the expert and the two
// claims by hand.
func TestLearnedSummary(t *testing.T) {
	l := handLearned()
	l.Summarize()
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-12 }
	a, b, c := &l.Graphs[0], &l.Graphs[1], &l.Graphs[2]
	for _, tc := range []struct {
		name  string
		cell  *LearnedCell
		ratio float64
		beat  bool
		at    float64
	}{
		{"a rl17 never below 0.15", a.Cell("rl17", 30), 0.2 / 0.15, false, 0},
		{"a hdp", a.Cell("hdp", 30), 0.1 / 0.15, true, 12},
		{"a go from its anchor", a.Cell("go", 30), 0.08 / 0.15, true, 0.1},
		{"b rl17 failed", b.Cell("rl17", 30), 0, false, 0},
		{"b hdp", b.Cell("hdp", 30), 0.2 / 0.22, true, 25},
		{"b go", b.Cell("go", 30), 0.25 / 0.22, false, 0},
		{"c no expert", c.Cell("go", 30), 0, false, 0},
	} {
		if !near(tc.cell.Ratio, tc.ratio) || tc.cell.BeatExpert != tc.beat || tc.cell.ToBeat != tc.at {
			t.Errorf("%s: ratio %v, beat %v at %v; want %v, %v at %v", tc.name, tc.cell.Ratio, tc.cell.BeatExpert, tc.cell.ToBeat, tc.ratio, tc.beat, tc.at)
		}
	}
	s := l.Summary[0]
	if s.ExpertGraphs != 2 || s.BeatExpert["rl17"] != 0 || s.BeatExpert["hdp"] != 2 || s.BeatExpert["go"] != 1 {
		t.Errorf("beat the expert %v on %d graphs", s.BeatExpert, s.ExpertGraphs)
	}
	if _, ok := s.BeatExpert["rl17"]; !ok {
		t.Error("rl17 ran but has no beat-the-expert count")
	}
	if s.Pairs != 3 || s.GoAhead != 1 {
		t.Errorf("go ahead of hdp on %d of %d graphs, want 1 of 3 (c is a tie)", s.GoAhead, s.Pairs)
	}
	if want := math.Cbrt(0.08 / 0.1 * 0.25 / 0.2 * 1); !near(s.GoOverHDP, want) {
		t.Errorf("go over hdp %v, want %v", s.GoOverHDP, want)
	}
	if s.Holds != 1 || len(s.Reach) != 3 {
		t.Fatalf("fifteenth holds on %d graphs of %v", s.Holds, s.Reach)
	}
	for i, want := range []LearnedReach{
		{Graph: "a", HDPStep: 0.1, Reached: true, GoTime: 1, Fraction: 1.0 / 30, HDPTime: 20, Holds: true},
		{Graph: "b", HDPStep: 0.2, HDPTime: 25},
		{Graph: "c", HDPStep: 0.3, Reached: true, GoTime: 10, Fraction: 1.0 / 3, HDPTime: 10},
	} {
		if s.Reach[i] != want {
			t.Errorf("reach %d = %+v, want %+v", i, s.Reach[i], want)
		}
	}
	// CPU budgets read the curves' CPU times: go reaches hdp's final on a
	// at 2 CPU s, 1/15 of the budget exactly, which still holds.
	l.CPU = true
	l.Summarize()
	if r := l.Summary[0].Reach[0]; r.GoTime != 2 || !r.Holds || l.Graphs[0].Cell("hdp", 30).ToBeat != 24 {
		t.Errorf("CPU time: reach %+v, hdp beat the expert at %v", r, l.Graphs[0].Cell("hdp", 30).ToBeat)
	}
	// Without hdp there is no claim to check.
	l.Methods = []string{"rl17", "go"}
	for gi := range l.Graphs {
		l.Graphs[gi].Cells = l.Graphs[gi].Cells[:1]
	}
	l.Summarize()
	if s := l.Summary[0]; s.Pairs != 0 || s.Reach != nil || s.GoOverHDP != 0 {
		t.Errorf("without hdp: %+v", s)
	}
}

// TestWriteLearned: the table's cells and the claims' lines.
func TestWriteLearned(t *testing.T) {
	l := handLearned()
	l.Summarize()
	var out bytes.Buffer
	if err := WriteLearned(&out, l); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"budget 30.000 s wall time per method and graph",
		"150.000 ms", "no expert placement",
		"0.533", "100.000 ms", "12.000 s", "never", "failed",
		"a: reference (go's anchor) metis 120.000 ms",
		"beat the expert (graphs with a valid expert placement): rl17 0/2, hdp 2/2, go 1/2",
		"go ahead of hdp on 1 of 3 graphs",
		"holds on 1 of 3 graphs",
		"a: go reached hdp's final 100.000 ms at 1.000 s = 0.033 of the budget (hdp reached it at 20.000 s): holds",
		"b: go never reached hdp's final 200.000 ms (hdp reached it at 25.000 s): does not hold",
		"c: go reached hdp's final 300.000 ms at 10.000 s = 0.333 of the budget (hdp reached it at 10.000 s): does not hold",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	// c has no expert: its times to beat are "-", not "never".
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "no expert placement") && strings.Contains(line, "never") {
			t.Errorf("graph without an expert says never: %s", line)
		}
	}
}

// TestLearnedPlot: stairs per method, the expert and reference dashed,
// one file per graph.
func TestLearnedPlot(t *testing.T) {
	l := handLearned()
	l.Summarize()
	p := LearnedPlot(l, l.Graphs[0], 30)
	if len(p.Series) != 5 {
		t.Fatalf("%d series, want 3 methods, expert, reference", len(p.Series))
	}
	hdp := p.Series[1]
	wantX, wantY := []float64{1, 12, 12, 20, 20, 30, 30}, []float64{300, 300, 140, 140, 100, 100, 100}
	for i := range wantX {
		if i >= len(hdp.X) || hdp.X[i] != wantX[i] || math.Abs(hdp.Y[i]-wantY[i]) > 1e-9 {
			t.Fatalf("hdp stairs %v %v, want %v %v", hdp.X, hdp.Y, wantX, wantY)
		}
	}
	if e := p.Series[3]; !e.Dash || e.Name != "expert" || e.Y[0] != 150 || e.X[1] != 30 {
		t.Errorf("expert line %+v", e)
	}
	dir := t.TempDir()
	files, err := WriteLearnedPlots(filepath.Join(dir, "plots"), "svg", l)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || files[0] != filepath.Join(dir, "plots", "a@2-30s.svg") {
		t.Fatalf("files %v", files)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := WriteLearnedPlots(dir, "gif", l); err == nil {
		t.Error("a gif plot was accepted")
	}
}
