package calibration

import (
	"math"
	"strings"
	"testing"
)

func TestCodeBaseAndHost(t *testing.T) {
	for _, c := range []struct{ stack, want string }{
		{"", "megatron-core"}, {"default", "megatron-core"}, {"megatron-bridge-25.11", "megatron-bridge"},
		{"torchtitan-0.2", "torchtitan"}, {"model-zoo-moe-dev", "model-zoo-moe-dev"}, {"nvidia-bert-mlperf", "nvidia-bert-mlperf"},
	} {
		if got := CodeBaseOf(c.stack); got != c.want {
			t.Errorf("CodeBaseOf(%q) = %q, want %q", c.stack, got, c.want)
		}
	}
	for _, c := range []struct{ hw, want string }{{"gb200", HostGrace}, {"gb300", HostGrace}, {"gh200", HostGrace}, {"h100", HostX86}, {"b200", HostX86}} {
		if got := HostOf(c.hw); got != c.want {
			t.Errorf("HostOf(%q) = %q, want %q", c.hw, got, c.want)
		}
	}
}

// reachRows are two families of ten rows by host, one regime, one code
// base: x86 rows off by 0.01 .. 0.10, Grace rows by 0.05 .. 0.50.
func reachRows() []Row {
	g := Regime{Kind: KindDense, Gen: GenHopper, Stack: StackMegatron, Scale: ScaleSmall, Seq: SeqShort}
	var rows []Row
	for i := 1; i <= 10; i++ {
		for _, h := range []struct {
			host string
			err  float64
		}{{HostX86, []float64{0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.10}[i-1]}, {HostGrace, []float64{0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50}[i-1]}} {
			rows = append(rows, Row{Name: h.host, Sweep: h.host, Regime: g, Error: h.err,
				Facts: Facts{CodeBase: "megatron-core", Gen: GenHopper, Kind: KindDense, Host: h.host, Seq: SeqShort}})
		}
	}
	return rows
}

// TestLeaveFamilyOut works the host way by hand (level 0.9: the k-th
// smallest of n, k = ceil(0.9 (n+1)), 10 of 10):
//   - the x86 family left out: the bound from the Grace rows is their
//     largest, 0.50, every x86 row within: it needed 0;
//   - the Grace family left out: the bound from the x86 rows is 0.10;
//     their excesses 0, 0, 0.05 .. 0.40: it needed 0.40;
//   - the way's widening is the largest, 0.40; x86 is judged at 0.50
//     widened by Grace's 0.40 (10 of 10 within), Grace at 0.10 widened
//     by x86's 0 (0.05 and 0.10 within: 2 of 10).
//
// The code base way has one family: left out, nothing states a bound,
// each excess is the whole |error|, the widening their quantile, the
// 19th smallest of 20: 0.45.
func TestLeaveFamilyOut(t *testing.T) {
	rows := reachRows()
	if w := Widening(rows, Ways[3], 0.9); math.Abs(w-0.40) > 1e-12 {
		t.Errorf("host widening %g, want 0.40", w)
	}
	if w := Widening(rows, Ways[0], 0.9); math.Abs(w-0.45) > 1e-12 {
		t.Errorf("code base widening %g, want 0.45", w)
	}
	var host WayCoverage
	for _, wc := range LeaveFamilyOut(rows, 0.9) {
		if wc.Way == "host CPU" {
			host = wc
		}
	}
	want := map[string][2]int{HostGrace: {2, 2}, HostX86: {10, 10}}
	if len(host.Families) != 2 || host.Rows != 20 || host.Within != 12 {
		t.Fatalf("host way: %+v, want 12 of 20 within in 2 families", host)
	}
	for _, f := range host.Families {
		if w := want[f.Family]; f.Within != w[0] || f.Unwidened != w[1] || f.Rows != 10 {
			t.Errorf("family %s: %d within (%d unwidened) of %d, want %d (%d) of 10", f.Family, f.Within, f.Unwidened, f.Rows, w[0], w[1])
		}
	}
}

// TestOutside: a torchtitan plan on the bench of reachRows is outside
// on its code base alone (the pair of its kind and code base is not
// named again) and states the regime's bound, the 19th smallest of the
// 20 errors (0.45), widened by the code base way's 0.45: 0.90. A plan
// of the rows' own facts is inside: its error is the regime's, unwidened.
func TestOutside(t *testing.T) {
	rows := reachRows()
	r := NewReach(rows, 0.9)
	tab := NewTable(rows, 0.9)
	f := rows[0].Facts
	if out := r.Outside(f); len(out) != 0 || !tab.covers(f) {
		t.Errorf("the rows' own facts: outside %v, covers %v; want none, true", out, tab.covers(f))
	}
	f.CodeBase = "torchtitan"
	out := r.Outside(f)
	if len(out) != 1 || out[0].Way != "code base" || out[0].Says != "no development run in the code base torchtitan" || tab.covers(f) {
		t.Fatalf("torchtitan: outside %+v, want the code base alone", out)
	}
	e := Widen(tab.For(rows[0].Regime), out)
	if math.Abs(e.Bound-0.90) > 1e-12 || math.Abs(e.Widened-0.45) > 1e-12 || !strings.Contains(e.String(), "outside the bench: no development run in the code base torchtitan; widened by 45 points") {
		t.Errorf("widened: %g (+%g), %q; want 0.90 (+0.45) naming the code base", e.Bound, e.Widened, e.String())
	}
	if e0 := Widen(tab.For(rows[0].Regime), nil); e0.Bound != 0.45 || e0.Outside != nil {
		t.Errorf("inside: %+v, want 0.45 unwidened", e0)
	}
}
