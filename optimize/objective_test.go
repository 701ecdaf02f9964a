package optimize_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

func TestParseObjective(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want optimize.Objective
		ok   bool
	}{
		{"", optimize.StepTime, true},
		{"step-time", optimize.StepTime, true},
		{"runtime", optimize.StepTime, true},
		{"peak-memory", optimize.PeakMemory, true},
		{"Memory", optimize.PeakMemory, true},
		{"latency", optimize.StepTime, false},
	} {
		got, err := optimize.ParseObjective(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseObjective(%q) = %v, %v", tc.in, got, err)
		}
	}
	for _, o := range optimize.Objectives {
		var back optimize.Objective
		text, _ := o.MarshalText()
		if err := back.UnmarshalText(text); err != nil || back != o {
			t.Errorf("%v: round trip %q -> %v, %v", o, text, back, err)
		}
	}
}

// TestObjectiveOrder checks Of, Valid, Better and Cost on results whose
// order differs between the objectives, by hand.
func TestObjectiveOrder(t *testing.T) {
	caps := []int64{100, 100}
	fastBig := evaluate.Result{StepTime: 1, PeakMemory: []int64{90, 10}, Capacity: caps}
	slowSmall := evaluate.Result{StepTime: 2, PeakMemory: []int64{40, 50}, Capacity: caps}
	oom := evaluate.Result{StepTime: 0.5, PeakMemory: []int64{150, 0}, Capacity: caps, OOM: true}
	broken := evaluate.Result{StepTime: 0.5, PeakMemory: []int64{10, 10}, Capacity: caps, ColocationViolations: 1}
	st, pm := optimize.StepTime, optimize.PeakMemory
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"step: fast beats small", st.Better(&fastBig, &slowSmall), true},
		{"peak: small beats fast", pm.Better(&slowSmall, &fastBig), true},
		{"peak: fast does not beat small", pm.Better(&fastBig, &slowSmall), false},
		{"step: OOM is invalid", st.Valid(&oom), false},
		{"peak: OOM is valid", pm.Valid(&oom), true},
		{"step: valid beats OOM", st.Better(&slowSmall, &oom), true},
		{"peak: 90 beats OOM's 150", pm.Better(&fastBig, &oom), true},
		{"peak: broken co-location is invalid", pm.Valid(&broken), false},
		{"peak: co-location before memory", pm.Better(&oom, &broken), true},
		{"peak: not better than itself", pm.Better(&oom, &oom), false},
		{"Better is StepTime.Better", optimize.Better(&fastBig, &slowSmall), true},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v", tc.name, tc.got)
		}
	}
	for _, tc := range []struct {
		o         optimize.Objective
		r         evaluate.Result
		of, cost_ float64
	}{
		{st, fastBig, 1, 1},
		{pm, fastBig, 90, 90},
		{pm, slowSmall, 50, 50},
		{st, oom, 0.5, 0.5 * (2 + 10*0.5)},
		{pm, oom, 150, 150},
		{pm, broken, 10, 10 * 3},
	} {
		if got := tc.o.Of(&tc.r); got != tc.of {
			t.Errorf("%v.Of(%+v) = %g, want %g", tc.o, tc.r, got, tc.of)
		}
		if got := tc.o.Cost(&tc.r); got != tc.cost_ {
			t.Errorf("%v.Cost(%+v) = %g, want %g", tc.o, tc.r, got, tc.cost_)
		}
	}
	if s := pm.Format(1.5 * (1 << 30)); s != "1.50 GiB" {
		t.Errorf("format %q", s)
	}
}

// TestObjectivesDisagree is a graph where the step-time-best and the
// peak-memory-best placements differ, computed by hand
// (graphtest.TwoWeights: a feeds c, b and d its 64 MiB output, c feeds
// b; 1 ms each; 256 MiB of parameters on a and on b). On one GPU: step
// 4 ms, peak 2 x 256 MiB + 64 MiB + 2 KiB (both weights; while b runs,
// a's output, c's and b's own). Split a, d | c, b: step 1 ms (a) + the
// 64 MiB transfer over PCIe + 2 ms (c, b), as d runs beside the transfer;
// peaks 256 MiB + 64 MiB on GPU 0 (a's output is held until d has run and
// it is sent) and 256 MiB + 64 MiB + 2 KiB on GPU 1 (the received tensor,
// c's and b's outputs).
func TestObjectivesDisagree(t *testing.T) {
	g := graphtest.TwoWeights()
	p, err := methodstest.NewProblem(g, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	const mib, kib = 1 << 20, 1 << 10
	xfer := p.Cost.TransferTime(0, 1, 64*mib)
	type want struct {
		step float64
		peak int64
	}
	cases := map[string]want{
		"single": {4e-3, 2*256*mib + 64*mib + 2*kib},
		"split":  {3e-3 + xfer, 256*mib + 64*mib + 2*kib},
	}
	ds := map[string]decision.Decision{"single": {Device: []int{0, 0, 0, 0}}, "split": {Device: []int{0, 1, 1, 0}}}
	res := map[string]evaluate.Result{}
	for name, d := range ds {
		r, err := p.Evaluator.Evaluate(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		res[name] = r
		if w := cases[name]; !methodstest.Close(r.StepTime, w.step) || optimize.MaxPeak(&r) != w.peak {
			t.Errorf("%s: step %g peak %d, want %g and %d", name, r.StepTime, optimize.MaxPeak(&r), w.step, w.peak)
		}
	}
	single, split := res["single"], res["split"]
	if !optimize.StepTime.Better(&single, &split) || !optimize.PeakMemory.Better(&split, &single) {
		t.Fatalf("step-time best should be single, peak-memory best split")
	}
	// The tracker keeps the best by the problem's objective.
	for _, tc := range []struct {
		o    optimize.Objective
		want []int
		best float64
	}{
		{optimize.StepTime, []int{0, 0, 0, 0}, 4e-3},
		{optimize.PeakMemory, []int{0, 1, 1, 0}, float64(256*mib + 64*mib + 2*kib)},
	} {
		q := *p
		q.Objective = tc.o
		tr := optimize.NewTracker("test", &q, nil, 10)
		for _, d := range []decision.Decision{ds["single"], ds["split"]} {
			if _, err := tr.Evaluate(context.Background(), d); err != nil {
				t.Fatal(err)
			}
		}
		d, _, _ := tr.Best()
		if !slices.Equal(d.Device, tc.want) {
			t.Errorf("%v: best placement %v, want %v", tc.o, d.Device, tc.want)
		}
		if s := tr.Stats(); s.Best != tc.best {
			t.Errorf("%v: Stats.Best %g, want %g", tc.o, s.Best, tc.best)
		}
	}
}

// BenchmarkObjectiveBetter is the comparison BRKGA's sort and every
// tracker make per pair of results, on two GPUs.
func BenchmarkObjectiveBetter(b *testing.B) {
	caps := []int64{100, 100}
	x := evaluate.Result{StepTime: 1, PeakMemory: []int64{90, 10}, Capacity: caps}
	y := evaluate.Result{StepTime: 2, PeakMemory: []int64{40, 50}, Capacity: caps}
	for _, o := range optimize.Objectives {
		b.Run(o.String(), func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for i := 0; i < b.N; i++ {
				if o.Better(&x, &y) {
					n++
				}
			}
			_ = n
		})
	}
}

func TestStatusErr(t *testing.T) {
	for _, c := range []struct {
		s    optimize.Status
		want error
	}{{optimize.Converged, nil}, {optimize.BudgetReached, nil}, {optimize.TimeUp, nil}, {optimize.Cancelled, context.Canceled}} {
		if err := c.s.Err(); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s.Err() = %v, want %v", c.s, err, c.want)
		}
	}
}
