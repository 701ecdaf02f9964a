package plans

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/bench/calibration"
	"github.com/placer/placer/planner/plan"
)

// tiePlan is a hand-made plan of a search: its degrees, FSDP and
// recomputation, its memory (GB) and step (s).
func tiePlan(name string, tp, cp, pp, vp, ep, dp int, fsdp bool, rc plan.Recompute, gb, step float64) ScalePlan {
	tps := make([]int, pp)
	for i := range tps {
		tps[i] = tp
	}
	pl := plan.Plan{Strategy: plan.Strategy{FSDP: fsdp, Recompute: rc}, TP: tp, CP: cp, PP: pp, VP: vp, EP: ep, DP: dp, TPs: tps}
	return ScalePlan{Strategy: name, GPUs: 32, Result: planner.Result{Plan: pl, Memory: int64(gb * 1e9), Step: step}}
}

// TestRunCostOf: a plan's GPUs and moving parts, counted by hand.
func TestRunCostOf(t *testing.T) {
	for _, c := range []struct {
		p     ScalePlan
		gpus  int
		parts []string
		n     int
	}{
		{tiePlan("dp", 1, 1, 1, 1, 1, 32, false, plan.NoRecompute, 50, 1), 32, []string{}, 0},
		// 1 x 1 x 32: FSDP one part.
		{tiePlan("fsdp", 1, 1, 1, 1, 1, 32, true, plan.NoRecompute, 50, 1), 32, []string{"fsdp"}, 1},
		// replica tp 2 x pp 2 = 4, x cp 2 x dp 4 = 32; tp, cp, pp, vp, ep: 5.
		{tiePlan("all", 2, 2, 2, 2, 8, 4, false, plan.NoRecompute, 50, 1), 32, []string{"tp=2", "cp=2", "pp=2", "vp=2", "ep=8"}, 5},
		// selective 1, full 2.
		{tiePlan("sel", 1, 1, 1, 1, 1, 32, true, plan.SelectiveRecompute, 50, 1), 32, []string{"fsdp", "recompute=selective"}, 2},
		{tiePlan("full", 4, 1, 1, 1, 1, 4, false, plan.FullRecompute, 50, 1), 16, []string{"tp=4", "recompute=full (counts 2)"}, 3},
	} {
		got := RunCostOf(&c.p)
		if got.GPUs != c.gpus || got.MovingParts != c.n || !slices.Equal(got.Parts, c.parts) {
			t.Errorf("%s: %d GPUs, %d parts %q; want %d, %d %q", c.p.Strategy, got.GPUs, got.MovingParts, got.Parts, c.gpus, c.n, c.parts)
		}
	}
}

// TestOrderTie: the tie's plans ordered by what is cheaper to run, each
// level of the key in turn, on hand-made plans (fastest first).
func TestOrderTie(t *testing.T) {
	for _, c := range []struct {
		name  string
		plans []ScalePlan
		n     int
		want  []string
	}{
		{"moving parts, then memory", []ScalePlan{
			tiePlan("cp+full", 1, 2, 1, 1, 1, 16, true, plan.FullRecompute, 54, 6.30),  // 4 parts
			tiePlan("fsdp", 1, 1, 1, 1, 1, 32, true, plan.NoRecompute, 54, 6.34),       // 1
			tiePlan("tp", 2, 1, 1, 1, 1, 16, true, plan.NoRecompute, 53, 6.40),         // 2, 53 GB
			tiePlan("sel", 1, 1, 1, 1, 1, 32, true, plan.SelectiveRecompute, 52, 6.60), // 2, 52 GB
		}, 4, []string{"fsdp", "sel", "tp", "cp+full"}},
		{"fewer GPUs first", []ScalePlan{
			tiePlan("32", 1, 1, 1, 1, 1, 32, false, plan.NoRecompute, 50, 1.00),
			tiePlan("16+tp", 2, 1, 1, 1, 1, 8, false, plan.NoRecompute, 60, 1.05),
		}, 2, []string{"16+tp", "32"}},
		{"alike but the step: the shorter", []ScalePlan{
			tiePlan("a", 1, 1, 1, 1, 1, 32, false, plan.NoRecompute, 50, 1.00),
			tiePlan("b", 1, 1, 1, 1, 1, 32, false, plan.NoRecompute, 50, 1.01),
		}, 2, []string{"a", "b"}},
		{"outside the tie: not ordered", []ScalePlan{
			tiePlan("pp", 1, 1, 2, 1, 1, 16, false, plan.NoRecompute, 40, 1.00),
			tiePlan("dp", 1, 1, 1, 1, 1, 32, false, plan.NoRecompute, 50, 1.01),
			tiePlan("plain", 1, 1, 1, 1, 1, 32, false, plan.NoRecompute, 30, 1.50),
		}, 2, []string{"dp", "pp"}},
	} {
		tie, idx := OrderTie(c.plans, c.n, "")
		var got []string
		for i, o := range tie.Order {
			got = append(got, o.Strategy)
			if c.plans[idx[i]].Strategy != o.Strategy {
				t.Errorf("%s: position %d: index %d is %s, order says %s", c.name, i, idx[i], c.plans[idx[i]].Strategy, o.Strategy)
			}
		}
		if !slices.Equal(got, c.want) || tie.Answer != TieFastest {
			t.Errorf("%s: %q answer %s, want %q fastest", c.name, got, tie.Answer, c.want)
		}
	}
	if tie, _ := OrderTie([]ScalePlan{tiePlan("a", 1, 1, 1, 1, 1, 32, false, plan.NoRecompute, 50, 1)}, 1, ""); tie != nil {
		t.Errorf("one plan: a tie %+v", tie)
	}
}

// tieSearch is a search of four plans, fastest first, the first three
// tied within an error of a difference of 10%: cp+full (4 moving parts, 6.30 s),
// fsdp (1, 6.34 s), sel (2, 6.60 s); tp (2, 7.00 s, +11.1%) outside.
func tieSearch(tied int) ScaleSearch {
	e := &calibration.Error{Basis: calibration.BasisWhole, Rows: 30, Pairs: 40, PairMean: 0.10}
	plans := []ScalePlan{
		tiePlan("cp+full", 1, 2, 1, 1, 1, 16, true, plan.FullRecompute, 54, 6.30),
		tiePlan("fsdp", 1, 1, 1, 1, 1, 32, true, plan.NoRecompute, 54, 6.34),
		tiePlan("sel", 1, 1, 1, 1, 1, 32, true, plan.SelectiveRecompute, 52, 6.60),
		tiePlan("tp", 2, 1, 1, 1, 1, 16, true, plan.NoRecompute, 53, 7.00),
	}
	for i := range plans {
		plans[i].StatedError = e
	}
	s := ScaleSearch{Best: plans[0], Runners: plans[1:], Tied: tied}
	s.Tie, _ = OrderTie(plans, tied, "")
	return s
}

// tableRows is the plans of a search's table, in its order.
func tableRows(out string) []string {
	var rows []string
	for _, line := range strings.Split(out, "\n") {
		if cells := strings.Split(line, "│"); len(cells) > 7 && strings.TrimSpace(cells[2]) != "step" && strings.TrimSpace(cells[1]) != "" {
			rows = append(rows, strings.TrimSpace(cells[1]))
		}
	}
	return rows
}

// TestTieTable: the search's table shows the tied plans by what is
// cheaper to run and the rest after them in step order, says the key
// and names the cheapest with its step over the fastest (6.34/6.30 - 1
// = 0.63%); --json carries the order and each plan's key; with no tie
// nothing is reordered and no line is said.
func TestTieTable(t *testing.T) {
	for _, c := range []struct {
		name  string
		tied  int
		rows  []string
		lines []string
	}{
		{"tie", 3, []string{"fsdp", "sel", "cp+full", "tp"}, []string{
			"a tie within the error of a difference: the best 3 of the 4 plans shown are within 4.8% of the best step",
			"; the table orders them by what is cheaper to run (fewer moving parts, then less memory, then the shorter step)\n" +
				"cheapest to run in the tie: fsdp (1 moving part: fsdp; 54.0 GB), its step +0.6% of the fastest\n"}},
		{"no tie", 1, []string{"cp+full", "fsdp", "sel", "tp"}, nil},
	} {
		s := tieSearch(c.tied)
		var b strings.Builder
		if err := WriteScaleSearch(&b, s); err != nil {
			t.Fatal(err)
		}
		out := strings.ReplaceAll(b.String(), "\n  ", " ") // unwrap the lines fitted to 120 columns
		if got := tableRows(out); !slices.Equal(got, c.rows) {
			t.Errorf("%s: rows %q, want %q", c.name, got, c.rows)
		}
		for _, l := range c.lines {
			if !strings.Contains(out, l) {
				t.Errorf("%s: no %q in\n%s", c.name, l, out)
			}
		}
		if c.lines == nil && (strings.Contains(out, "a tie") || strings.Contains(out, "cheapest")) {
			t.Errorf("%s: a tie said:\n%s", c.name, out)
		}
	}
	js, err := json.Marshal(tieSearch(3))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Tie struct {
			Order []struct {
				Strategy    string  `json:"strategy"`
				GPUs        int     `json:"gpus"`
				MovingParts int     `json:"moving_parts"`
				Memory      int64   `json:"memory_bytes"`
				Step        float64 `json:"step_s"`
			} `json:"order"`
			Key, Skipped, Answer string
		} `json:"tie"`
	}
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range v.Tie.Order {
		got = append(got, o.Strategy)
	}
	if !slices.Equal(got, []string{"fsdp", "sel", "cp+full"}) || v.Tie.Order[2].MovingParts != 4 || v.Tie.Order[2].GPUs != 32 ||
		v.Tie.Order[1].Memory != 52e9 || v.Tie.Order[0].Step != 6.34 || v.Tie.Answer != TieFastest || v.Tie.Key != TieKey || v.Tie.Skipped == "" {
		t.Errorf("--json tie: %+v", v.Tie)
	}
}

// TestTieCheapestTable: the answer the tie's cheapest (--tie cheapest:
// Best, the fastest back among the runners up): the table keeps the
// tie's order, its ratios over the fastest ("vs fastest").
func TestTieCheapestTable(t *testing.T) {
	s := tieSearch(3)
	s.Tie.Answer = TieCheapest
	s.Best, s.Runners = s.Runners[0], []ScalePlan{s.Best, s.Runners[1], s.Runners[2]}
	var b strings.Builder
	if err := WriteScaleSearch(&b, s); err != nil {
		t.Fatal(err)
	}
	out := strings.ReplaceAll(b.String(), "\n  ", " ")
	if got, want := tableRows(out), []string{"fsdp", "sel", "cp+full", "tp"}; !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	for _, l := range []string{"vs fastest", "1.000x", "1.006x", "the best 3 of the 4 plans", "+0.6% of the fastest; the answer (--tie cheapest)"} {
		if !strings.Contains(out, l) {
			t.Errorf("no %q in\n%s", l, out)
		}
	}
}

// TestCheckTie: --tie takes fastest, cheapest or nothing; else one line.
func TestCheckTie(t *testing.T) {
	for v, want := range map[string]string{"": "", "fastest": "", "cheapest": "", "cheap": `--tie "cheap": want fastest or cheapest`} {
		got := ""
		if err := CheckTie(v); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%q: %q, want %q", v, got, want)
		}
	}
}
