package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestCombineSeeds: two seeds of two graphs combined by hand: each cell
// the geometric mean of its seeds, the lead's wins per graph (on the
// means) and per run (seed by seed), learning's, the seed spread, and a
// cell that failed on one seed failing in the combination.
func TestCombineSeeds(t *testing.T) {
	cell := func(m string, r, cpu float64) EqualTimeCell {
		return EqualTimeCell{Method: m, Budget: 60, Ratio: r, StepTime: r, Objective: r, CPU: cpu, Evaluations: 10, Valid: true}
	}
	run := func(seed uint64, a, b [3]float64) EqualTime {
		return EqualTime{Seed: seed, Budgets: []float64{60}, Methods: []string{"ls", "go", "go-no-learning"}, Lead: "go", Graphs: []EqualTimeGraph{
			{Graph: "a", Cells: []EqualTimeCell{cell("ls", a[0], 10), cell("go", a[1], 20), cell("go-no-learning", a[2], 30)}},
			{Graph: "b", Cells: []EqualTimeCell{cell("ls", b[0], 10), cell("go", b[1], 20), cell("go-no-learning", b[2], 30)}},
		}}
	}
	r0 := run(0, [3]float64{0.8, 0.9, 1.0}, [3]float64{0.5, 0.4, 0.5})
	r1 := run(7, [3]float64{0.8, 0.4, 0.5}, [3]float64{0.5, 0.6, 0.4})
	r1.Graphs[1].Cells[1].CPU = 40
	r1.Graphs[1].RefObjective = 2
	c := CombineSeeds([]EqualTime{r0, r1})
	if c.Graphs[0].RefBySeed != nil || len(c.Graphs[1].RefBySeed) != 2 || c.Graphs[1].RefBySeed[1] != 2 {
		t.Errorf("references by seed: a %v, b %v; want none on a, b's two", c.Graphs[0].RefBySeed, c.Graphs[1].RefBySeed)
	}
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-12 }
	if len(c.Seeds) != 2 || c.Seeds[1] != 7 {
		t.Fatalf("seeds %v", c.Seeds)
	}
	// go on a: sqrt(0.9*0.4) = 0.6; on b: sqrt(0.4*0.6).
	ga, gb := c.Graphs[0].Cell("go", 60), c.Graphs[1].Cell("go", 60)
	if !near(ga.Ratio, 0.6) || !near(gb.Ratio, math.Sqrt(0.24)) || !near(gb.CPU, 30) {
		t.Errorf("go cells %+v %+v", ga, gb)
	}
	if len(ga.SeedRatios) != 2 || ga.SeedRatios[0] != 0.9 || ga.SeedRatios[1] != 0.4 {
		t.Errorf("go's seed ratios on a %v", ga.SeedRatios)
	}
	s := c.Summary[0]
	if s.Graphs != 2 || s.Runs != 4 {
		t.Fatalf("graphs %d runs %d, want 2 and 4", s.Graphs, s.Runs)
	}
	// Means: a: go 0.6 < ls 0.8 (ahead); b: go 0.490 < ls 0.5 (ahead).
	// Runs: a0 0.9>0.8 no, a1 yes, b0 yes, b1 0.6>0.5 no: 2 of 4.
	if s.Ahead["ls"] != 2 || s.AheadRuns["ls"] != 2 {
		t.Errorf("go ahead of ls on %d graphs, %d runs; want 2 and 2", s.Ahead["ls"], s.AheadRuns["ls"])
	}
	// Learning, per run: a0 0.9<1.0 yes, a1 0.4<0.5 yes, b0 0.4<0.5 yes,
	// b1 0.6<0.4 no: 3 of 4; per graph: a 0.6<sqrt(0.5) yes, b
	// sqrt(0.24)=0.490 < sqrt(0.2)=0.447 no: 1.
	if s.LearningWins["go"] != 1 || s.LearningRuns["go"] != 3 {
		t.Errorf("learning wins %d graphs, %d runs; want 1 and 3", s.LearningWins["go"], s.LearningRuns["go"])
	}
	// go's spreads: a 0.9/0.4-1 = 1.25, b 0.6/0.4-1 = 0.5: median 0.875;
	// ls never moves: 0.
	if !near(s.Spread["go"], 0.875) || s.Spread["ls"] != 0 {
		t.Errorf("spread %v", s.Spread)
	}
	var out bytes.Buffer
	if err := WriteEqualTime(&out, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"seeds 0,7", "median seed spread", "differs by seed", "87.5%", "ls 2/2 graphs (2/4 runs)", "on 1 of 2 graphs (3 of 4 runs)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}

	// A cell that failed on one seed fails combined; a cell one seed
	// lacks is missing, and the graph leaves the geometric means.
	r1.Graphs[0].Cells[0] = EqualTimeCell{Method: "ls", Budget: 60, Error: "boom"}
	r1.Graphs[1].Cells = r1.Graphs[1].Cells[1:]
	c = CombineSeeds([]EqualTime{r0, r1})
	if ls := c.Graphs[0].Cell("ls", 60); ls == nil || ls.Error != "boom" || ls.Ratio != 0 {
		t.Errorf("ls on a: %+v, want the failure", ls)
	}
	if c.Graphs[1].Cell("ls", 60) != nil || c.Graphs[1].Missing != 1 {
		t.Errorf("graph b: %+v, want ls missing", c.Graphs[1])
	}
	if c.Summary[0].Graphs != 0 {
		t.Errorf("%d graphs in the means, want 0", c.Summary[0].Graphs)
	}
	// One report is itself.
	if one := CombineSeeds([]EqualTime{r0}); len(one.Seeds) != 0 || one.Graphs[0].Cells[1].Ratio != 0.9 {
		t.Errorf("one seed: %+v", one)
	}
}
