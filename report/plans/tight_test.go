package plans

import (
	"strings"
	"testing"

	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// TestTightWords: the search's last line says how many tight plans it
// set aside (or that --allow-tight kept them), and a plan's memory line
// says its verdict with its regime's measured error where it has one.
func TestTightWords(t *testing.T) {
	for _, c := range []struct {
		name  string
		s     ScaleSearch
		want  string
		avoid string
	}{
		{"set aside", ScaleSearch{Evaluated: 16, Fitting: 14, Tight: 1}, "(14 fit; 1 tight, set aside: --allow-tight keeps them)", ""},
		{"kept", ScaleSearch{Evaluated: 16, Fitting: 15, AllowTight: true}, "(15 fit; tight plans kept (--allow-tight))", "set aside"},
		{"none", ScaleSearch{Evaluated: 16, Fitting: 15}, "(15 fit)", "tight"},
	} {
		c.s.Best = ScalePlan{Strategy: "tp=1,pp=1,dp=1,mbs=4", Result: planner.Result{Step: 1}}
		var b strings.Builder
		if err := WriteScaleSearch(&b, c.s); err != nil {
			t.Fatal(err)
		}
		last := b.String()[strings.LastIndex(strings.TrimSuffix(b.String(), "\n"), "\n")+1:]
		if !strings.Contains(last, c.want) || c.avoid != "" && strings.Contains(last, c.avoid) {
			t.Errorf("%s: %q; want %q, not %q", c.name, last, c.want, c.avoid)
		}
	}
	for _, c := range []struct {
		r    planner.Result
		want string
	}{
		{planner.Result{Verdict: plan.VerdictTight, Fits: true, MemoryError: 0.019, MemoryErrorSource: "a sweep"}, "is TIGHT against"},
		{planner.Result{Verdict: plan.VerdictOver, MemoryError: 0.019, MemoryErrorSource: "a sweep"}, "does NOT fit"},
		{planner.Result{Verdict: plan.VerdictFits, Fits: true}, "fits"},
	} {
		if got := verdictWords(&c.r); got != c.want {
			t.Errorf("%s: %q, want %q", c.r.Verdict, got, c.want)
		}
	}
	r := planner.Result{MemoryError: 0.019, MemoryErrorSource: "a sweep"}
	if got, want := errorWords(&r), "; tight within ±1.9% of it, the measured error of a sweep"; got != want {
		t.Errorf("error words %q, want %q", got, want)
	}
	if got := errorWords(&planner.Result{}); got != "" {
		t.Errorf("no measured error: %q, want none", got)
	}
}
