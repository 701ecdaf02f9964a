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

// smallBench is six rows of one regime (dense, Hopper, up to 64 GPUs,
// short: too few in any code base for its own levels), in three code
// bases and on two hosts, |error| a 0.10 and 0.20 (x86), b 0.30 (x86)
// and 0.50 (Grace), c 0.45 (Grace) and 0.65 (x86).
func smallBench() []Row {
	g := Regime{Kind: KindDense, Gen: GenHopper, Stack: StackMegatron, Scale: ScaleSmall, Seq: SeqShort}
	var rows []Row
	for _, r := range []struct {
		code, host string
		err        float64
	}{{"a", HostX86, 0.10}, {"a", HostX86, -0.20}, {"b", HostX86, 0.30}, {"b", HostGrace, -0.50}, {"c", HostGrace, 0.45}, {"c", HostX86, 0.65}} {
		rg := g
		rg.CodeBase = r.code
		rows = append(rows, Row{Name: r.code + "/" + r.host, Sweep: r.code, Regime: rg, Error: r.err,
			Facts: Facts{CodeBase: r.code, Gen: GenHopper, Kind: KindDense, Host: r.host, Seq: SeqShort}})
	}
	return rows
}

// TestWidening works smallBench by hand at level 0.5 (the k-th smallest
// of n, k = ceil(0.5 (n+1))). Its families, each distinct set of rows
// once: code bases a, b, c and hosts x86, Grace (the kind x host and kind
// x code base ways' families are the same rows; the one-family ways
// leave nothing to state a bound from). Each left out, the bound from
// the other rows and what its rows needed beyond it:
//   - a: {.30 .45 .50 .65} states .50; needs 0;
//   - b: {.10 .20 .45 .65} states .45; .30, .50 exceed by 0, .05: .05;
//   - c: {.10 .20 .30 .50} states .30; .45, .65 by .15, .35: .35;
//   - x86: {.45 .50} states .50; .10 .20 .30 .65 by 0 0 0 .15: 0;
//   - Grace: {.10 .20 .30 .65} states .30; .50, .45 by .20, .15: .20.
//
// The widening is the 3rd smallest of the 5 needs (0 0 .05 .20 .35):
// .05, where the code base way alone would have taken its largest, .35.
func TestWidening(t *testing.T) {
	rows := smallBench()
	var keys []string
	for _, f := range familiesOf(rows) {
		keys = append(keys, f.key)
	}
	if want := "a b c grace x86"; strings.Join(keys, " ") != want {
		t.Errorf("families %v, want %s", keys, want)
	}
	if w := FamilyWidening(rows, 0.5); math.Abs(w-0.05) > 1e-12 {
		t.Errorf("widening %g, want 0.05", w)
	}
}

// TestLeaveFamilyOut works smallBench's host and code base ways by hand
// at level 0.5, each family against the bound and the widening of the
// other rows alone (TestWidening's rule on them):
//   - Grace left out: the x86 rows {.10 .20 .30 .65} state .30; their
//     families a {.10 .20}, b {.30}, c {.65} need 0, .10 (.30 over the
//     .20 of {.10 .20 .65}), .45 (.65 over .20): widening .10; Grace's
//     .50 and .45 beyond .40: 0 of 2 (bands .40);
//   - x86 left out: the Grace rows {.45 .50} state .50; b {.50} needs
//     .05 over c's .45, c {.45} none: widening .05; x86's .10 .20 .30
//     within .55, .65 not: 3 of 4 (bands .55);
//   - a left out: {.30 .45 .50 .65} state .50; the other rows' needs b 0,
//     c .15, x86 .15, Grace 0: widening .15 (3rd of 4); 2 of 2 (.65);
//   - b left out: {.10 .20 .45 .65} state .45; a 0, c .45, x86 0,
//     Grace .25: widening .25; .30 and .50 within .70: 2 of 2;
//   - c left out: {.10 .20 .30 .50} state .30; a 0, b .30, x86 0,
//     Grace .30: widening .30; .45 within .60, .65 not: 1 of 2.
//
// Median bands: the host way's (.40 .40 .55 .55 .55 .55) .55, the code
// base way's (.60 .60 .65 .65 .70 .70) .65.
func TestLeaveFamilyOut(t *testing.T) {
	want := map[string]map[string][3]float64{ // within, rows, widening
		"host CPU":  {HostGrace: {0, 2, 0.10}, HostX86: {3, 4, 0.05}},
		"code base": {"a": {2, 2, 0.15}, "b": {2, 2, 0.25}, "c": {1, 2, 0.30}},
	}
	medians := map[string]float64{"host CPU": 0.55, "code base": 0.65}
	for _, wc := range LeaveFamilyOut(smallBench(), 0.5) {
		fams, ok := want[wc.Way]
		if !ok {
			continue
		}
		if math.Abs(wc.Widening-0.05) > 1e-12 || math.Abs(wc.MedianStated-medians[wc.Way]) > 1e-12 || len(wc.Families) != len(fams) {
			t.Errorf("%s: widening %g, median band %g, %d families; want 0.05, %g, %d", wc.Way, wc.Widening, wc.MedianStated, len(wc.Families), medians[wc.Way], len(fams))
		}
		for _, f := range wc.Families {
			w := fams[f.Family]
			if float64(f.Within) != w[0] || float64(f.Rows) != w[1] || math.Abs(f.Widening-w[2]) > 1e-12 {
				t.Errorf("%s, family %s: %d of %d within, widened by %g; want %g of %g, %g", wc.Way, f.Family, f.Within, f.Rows, f.Widening, w[0], w[1], w[2])
			}
		}
	}
}

// TestOutside: a torchtitan plan on the bench of reachRows is outside
// on its code base alone (the pair of its kind and code base is not
// named again) and states the regime's bound, the 19th smallest of the
// 20 errors (0.45), widened by the error measured on families left out:
// the two hosts' (the one code base, left out, leaves nothing to state
// from): x86 left out needs nothing beyond the Grace rows' 0.50, Grace
// left out 0.40 beyond the x86 rows' 0.10 (the 9th of its excesses 0,
// 0, .05 .. .40); two families are too few for the 90th percentile, so
// their largest, 0.40: 0.85. A plan
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
	e := Widen(tab.ForRegime(rows[0].Regime), out)
	if math.Abs(e.Bound-0.85) > 1e-12 || math.Abs(e.Widened-0.40) > 1e-12 || !strings.Contains(e.String(), "outside the bench: no development run in the code base torchtitan; widened by 40 points") {
		t.Errorf("widened: %g (+%g), %q; want 0.85 (+0.40) naming the code base", e.Bound, e.Widened, e.String())
	}
	if e0 := Widen(tab.ForRegime(rows[0].Regime), nil); e0.Bound != 0.45 || e0.Outside != nil {
		t.Errorf("inside: %+v, want 0.45 unwidened", e0)
	}
}
