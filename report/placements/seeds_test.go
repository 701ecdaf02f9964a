package placements

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

// TestPairedGap: the paired ratio and its 95% interval, worked by hand
// (t quantiles 12.7062 for one degree of freedom, 4.30265 for two).
func TestPairedGap(t *testing.T) {
	cell := func(r ...float64) *EqualTimeCell { return &EqualTimeCell{SeedRatios: r} }
	tests := []struct {
		name        string
		a, b        *EqualTimeCell
		seeds       int
		ok          bool
		ratio       float64
		lo, hi      float64
		verdict     int
		description string
	}{
		// logs -0.105361, -0.223144: mean -0.164252, sd 0.083286; half
		// 12.7062 x 0.083286 / sqrt 2 = 0.748292.
		{name: "two seeds, wide", a: cell(0.9, 0.8), b: cell(1, 1), seeds: 2, ok: true,
			ratio: math.Sqrt(0.72), lo: math.Exp(-0.164252 - 0.748292), hi: math.Exp(-0.164252 + 0.748292), verdict: 0},
		// No spread: the interval is the point.
		{name: "alike seeds, ahead", a: cell(0.45, 0.9, 0.72), b: cell(0.5, 1, 0.8), seeds: 3, ok: true,
			ratio: 0.9, lo: 0.9, hi: 0.9, verdict: -1},
		// logs 0.095310, 0.182322, 0.139762: mean 0.139131, sd 0.043508;
		// half 4.30265 x 0.043508 / sqrt 3 = 0.108079.
		{name: "three seeds, behind", a: cell(1.1, 1.2, 1.15), b: cell(1, 1, 1), seeds: 3, ok: true,
			ratio: math.Exp(0.139131), lo: math.Exp(0.139131 - 0.108079), hi: math.Exp(0.139131 + 0.108079), verdict: 1},
		{name: "a seed missing", a: cell(1.1, 1.2), b: cell(1, 1, 1), seeds: 3},
		{name: "a failed seed", a: cell(1.1, 0, 1), b: cell(1, 1, 1), seeds: 3},
		{name: "one seed", a: cell(0.5), b: cell(1), seeds: 1},
		{name: "no cell", a: nil, b: cell(1, 1), seeds: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, _, ok := pairedGap("g", tc.a, tc.b, tc.seeds)
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			near := func(x, y float64) bool { return math.Abs(x-y) < 2e-5 }
			if !near(p.Ratio, tc.ratio) || !near(p.Lo, tc.lo) || !near(p.Hi, tc.hi) || p.Verdict() != tc.verdict {
				t.Errorf("got %v verdict %d, want %.5f [%.5f, %.5f] verdict %d", p, p.Verdict(), tc.ratio, tc.lo, tc.hi, tc.verdict)
			}
		})
	}
}

// TestPairedTallies: three seeds of two graphs, learning ahead beyond the
// noise on one and within it on the other, and the lines that say so.
func TestPairedTallies(t *testing.T) {
	cell := func(m string, r float64) EqualTimeCell {
		return EqualTimeCell{Method: m, Budget: 60, Ratio: r, StepTime: r, Objective: r, Valid: true}
	}
	run := func(seed uint64, a, b [3]float64) EqualTime {
		return EqualTime{Seed: seed, Budgets: []float64{60}, Methods: []string{"ls", "go", "go-no-learning"}, Lead: "go", Graphs: []EqualTimeGraph{
			{Graph: "a", Cells: []EqualTimeCell{cell("ls", a[0]), cell("go", a[1]), cell("go-no-learning", a[2])}},
			{Graph: "b", Cells: []EqualTimeCell{cell("ls", b[0]), cell("go", b[1]), cell("go-no-learning", b[2])}},
		}}
	}
	// a: go/no-learning 0.8 every seed (ahead, no spread); b: 0.5, 2, 1
	// (within); go/ls on a: 0.8/0.9 every seed (ahead); on b 1.1 every
	// seed (behind).
	c := CombineSeeds([]EqualTime{
		run(1, [3]float64{0.9, 0.8, 1}, [3]float64{0.5, 0.55, 1.1}),
		run(2, [3]float64{0.45, 0.4, 0.5}, [3]float64{1, 1.1, 0.55}),
		run(3, [3]float64{0.9, 0.8, 1}, [3]float64{0.8, 0.88, 0.88}),
	})
	s := c.Summary[0]
	l, ls := s.LearningPaired["go"], s.LeadPaired["ls"]
	if l == nil || l.Ahead != 1 || l.Behind != 0 || l.Within != 1 || len(l.Gaps) != 2 {
		t.Fatalf("learning paired %+v, want ahead on a, within on b", l)
	}
	if ls == nil || ls.Ahead != 1 || ls.Behind != 1 || ls.Within != 0 {
		t.Fatalf("lead paired against ls %+v, want ahead on a, behind on b", ls)
	}
	// Pooled over the six runs: log 0.8 three times, then log 0.5,
	// log 2, 0: mean log 0.8 / 2 = -0.111572; deviations -0.111572 x3,
	// -0.581575, 0.804719, 0.111572, squares summing to 1.035595, sd
	// sqrt(1.035595 / 5) = 0.455103; half = 2.570582 x 0.455103 / sqrt 6
	// = 0.477601.
	if p := l.Pooled; p.Seeds != 6 || math.Abs(p.Ratio-math.Sqrt(0.8)) > 1e-9 ||
		math.Abs(p.Lo-math.Exp(-0.111572-0.477601)) > 2e-5 || math.Abs(p.Hi-math.Exp(-0.111572+0.477601)) > 2e-5 {
		t.Errorf("pooled %+v, want 6 runs, sqrt 0.8 [exp -0.589173, exp 0.366029]", p)
	}
	if _, ok := s.LeadPaired["go"]; ok {
		t.Error("the lead is paired against itself")
	}
	var out bytes.Buffer
	if err := WriteEqualTime(&out, c); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "go against go-no-learning"); n != 1 {
		t.Errorf("learning against its ablation said %d times, want once:\n%s", n, out.String())
	}
	for _, want := range []string{
		"go against ls, paired by seed: over all 6 runs go/ls 0.989 [0.875, 1.118]; ahead beyond the seeds' noise (95% interval of go/ls below 1) on 1 graphs, behind beyond it on 1, within it on 0; behind: b 1.100 [1.100, 1.100]",
		"go against go-no-learning, paired by seed: over all 6 runs go/no-learning 0.894 [0.555, 1.442]; ahead beyond the seeds' noise (95% interval of go/no-learning below 1) on 1 graphs, behind beyond it on 0, within it on 1; within: b 1.000",
	} {
		if !strings.Contains(strings.ReplaceAll(out.String(), "\n  ", " "), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
