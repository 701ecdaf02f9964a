package placements

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestEqualTimeSummary: geometric means, go's lead and learning's wins by
// hand on two graphs (the third, with a failed cell, is left out).
func TestEqualTimeSummary(t *testing.T) {
	cell := func(m string, r float64) EqualTimeCell {
		return EqualTimeCell{Method: m, Budget: 60, Ratio: r, CPU: 10}
	}
	b := EqualTime{Budgets: []float64{60}, Methods: []string{"ls", "go", "go-no-learning"}, Graphs: []EqualTimeGraph{
		{Graph: "a", Cells: []EqualTimeCell{cell("ls", 0.8), cell("go", 0.9), cell("go-no-learning", 1.0)}},
		{Graph: "b", Cells: []EqualTimeCell{cell("ls", 0.5), cell("go", 0.4), cell("go-no-learning", 0.4)}},
		{Graph: "c", Cells: []EqualTimeCell{cell("ls", 0.5), {Method: "go", Budget: 60, Error: "x"}, cell("go-no-learning", 0.4)}},
	}}
	b.Summarize()
	s := b.Summary[0]
	if s.Graphs != 2 {
		t.Fatalf("%d graphs, want 2", s.Graphs)
	}
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-12 }
	if !near(s.GeoMean["ls"], math.Sqrt(0.8*0.5)) || !near(s.GeoMean["go"], math.Sqrt(0.9*0.4)) || !near(s.GeoMean["go-no-learning"], math.Sqrt(0.4)) {
		t.Errorf("geometric means %v", s.GeoMean)
	}
	if s.Ahead["ls"] != 1 || s.Ahead["go-no-learning"] != 1 {
		t.Errorf("go ahead %v, want ls 1 (graph b), go-no-learning 1 (graph a; b is a tie, not ahead)", s.Ahead)
	}
	if !near(s.Margin["ls"], 1-math.Sqrt(0.36)/math.Sqrt(0.4)) {
		t.Errorf("margin %v", s.Margin["ls"])
	}
	if w, ok := s.LearningWins["go"]; !ok || w != 1 {
		t.Errorf("learning wins %v, want go 1", s.LearningWins)
	}
	var out bytes.Buffer
	if err := WriteEqualTime(&out, b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0.400*", "failed", "go: learning on beats learning off (go-no-learning) on 1 of 2 graphs", "go ahead of: ls 1/2 graphs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}

	// The claims are about the lead method: with ls as the lead, ls is
	// ahead of go on graph a and of go-no-learning on a.
	b.Lead = "ls"
	b.Summarize()
	s = b.Summary[0]
	if s.Ahead["go"] != 1 || s.Ahead["go-no-learning"] != 1 || len(s.Ahead) != 2 {
		t.Errorf("ls ahead %v, want go 1, go-no-learning 1", s.Ahead)
	}
	if !near(s.Margin["go"], 1-math.Sqrt(0.4)/math.Sqrt(0.36)) {
		t.Errorf("ls margin over go %v", s.Margin["go"])
	}
	out.Reset()
	if err := WriteEqualTime(&out, b); err != nil {
		t.Fatal(err)
	}
	if want := "ls ahead of: go 1/2 graphs, -5.4%"; !strings.Contains(out.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, out.String())
	}
}

// TestEqualTimePretrainingWins: a "-pretrained" method is compared with its
// untrained twin, by hand on two graphs.
func TestEqualTimePretrainingWins(t *testing.T) {
	cell := func(m string, r float64) EqualTimeCell {
		return EqualTimeCell{Method: m, Budget: 60, Ratio: r}
	}
	ms := []string{"g", "g-no-learning", "g-pretrained", "g-pretrained-no-learning"}
	b := EqualTime{Budgets: []float64{60}, Methods: ms, Model: "m.policy (sha256 abc)", Graphs: []EqualTimeGraph{
		{Graph: "a", Cells: []EqualTimeCell{cell("g", 0.9), cell("g-no-learning", 0.95), cell("g-pretrained", 0.85), cell("g-pretrained-no-learning", 0.96)}},
		{Graph: "b", Cells: []EqualTimeCell{cell("g", 0.9), cell("g-no-learning", 0.8), cell("g-pretrained", 0.92), cell("g-pretrained-no-learning", 0.7)}},
	}}
	b.Summarize()
	s := b.Summary[0]
	if w, ok := s.PretrainingWins["g-pretrained"]; !ok || w != 1 {
		t.Errorf("g-pretrained beats g on %d graphs (present %v), want 1 (a)", w, ok)
	}
	if w := s.PretrainingWins["g-pretrained-no-learning"]; w != 1 {
		t.Errorf("g-pretrained-no-learning beats g-no-learning on %d graphs, want 1 (b)", w)
	}
	if _, ok := s.PretrainingWins["g"]; ok || len(s.PretrainingWins) != 2 {
		t.Errorf("pretraining wins %v: only the two pre-trained methods have twins", s.PretrainingWins)
	}
	if s.LearningWins["g-pretrained"] != 1 || s.LearningWins["g"] != 1 {
		t.Errorf("learning wins %v, want g-pretrained 1 (a), g 1 (a)", s.LearningWins)
	}
	var out bytes.Buffer
	if err := WriteEqualTime(&out, b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pre-trained model: m.policy (sha256 abc)", "g-pretrained: the pre-trained network beats the untrained one (g) on 1 of 2 graphs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// TestEqualTimeMoreGPUs: rows that are one graph on N and N/2 GPUs are
// paired (rnnlm2 with rnnlm4, rnnlm4 with rnnlm8; not a graph of another
// size, not x2 with x8), and a method whose N-GPU step is longer is named.
func TestEqualTimeMoreGPUs(t *testing.T) {
	cell := func(m string, step float64) EqualTimeCell {
		return EqualTimeCell{Method: m, Budget: 60, Ratio: step / 0.1, StepTime: step, Objective: step}
	}
	b := EqualTime{Budgets: []float64{60}, Methods: []string{"ls", "go"}, Lead: "go", Graphs: []EqualTimeGraph{
		{Graph: "rnnlm2", Ops: 10, Devices: 2, Cells: []EqualTimeCell{cell("ls", 0.090), cell("go", 0.080)}},
		{Graph: "rnnlm4", Ops: 10, Devices: 4, Cells: []EqualTimeCell{cell("ls", 0.095), cell("go", 0.080)}},
		{Graph: "rnnlm8", Ops: 10, Devices: 8, Cells: []EqualTimeCell{cell("ls", 0.085), {Method: "go", Budget: 60}}},
		{Graph: "inception_b32", Ops: 20, Devices: 2, Cells: []EqualTimeCell{cell("ls", 0.1), cell("go", 0.1)}},
		{Graph: "inception_b64", Ops: 30, Devices: 4, Cells: []EqualTimeCell{cell("ls", 0.2), cell("go", 0.2)}},
	}}
	if got := GPUPairs(b.Graphs); len(got) != 2 || got[0] != [2]int{0, 1} || got[1] != [2]int{1, 2} {
		t.Fatalf("pairs %v, want [0 1] [1 2]", got)
	}
	b.Summarize()
	m := b.Summary[0].MoreGPUs
	// ls: rnnlm4 (95 ms) worse than rnnlm2 (90 ms); rnnlm8 (85) fine.
	if c := m["ls"]; c.Pairs != 2 || len(c.Worse) != 1 || c.Worse[0] != "rnnlm4 95.000 ms > rnnlm2 90.000 ms" {
		t.Errorf("ls %+v", c)
	}
	// go: equal on 2 and 4 is not worse; rnnlm8 has no valid cell.
	if c := m["go"]; c.Pairs != 1 || len(c.Worse) != 0 {
		t.Errorf("go %+v", c)
	}
	var out bytes.Buffer
	if err := WriteEqualTime(&out, b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ls: more GPUs never worse on 1 of 2 pairs (N against N/2 GPUs); worse: rnnlm4 95.000 ms > rnnlm2 90.000 ms", "go: more GPUs never worse on 1 of 1 pairs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}
