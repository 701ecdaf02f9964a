package benchreport

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/placer/placer/planner/bench"
	"github.com/placer/placer/planner/bench/calibration"
	"github.com/placer/placer/report/plans"
)

// TestBenchParts: placer report bench counts every submission once, in
// its part; the validation part's rows are left out (report and JSON)
// unless asked for, and its aggregates are the same either way.
func TestBenchParts(t *testing.T) {
	if testing.Short() {
		t.Skip("predicts every bench row and published sweep")
	}
	hidden, err := Bench(context.Background(), BenchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shown, err := Bench(context.Background(), BenchOptions{ShowValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []plans.BenchPart{hidden.Development, hidden.Validation} {
		m := p.MLPerf
		if m.Predicted+m.Refused+m.Unmeasured != m.Submissions || m.Submissions == 0 {
			t.Errorf("%s: %d predicted + %d refused + %d unmeasured, %d submissions", p.Name, m.Predicted, m.Refused, m.Unmeasured, m.Submissions)
		}
		n := 0
		for _, r := range m.Reasons {
			n += r.Rows
		}
		if n != m.Refused {
			t.Errorf("%s: reasons count %d rows, %d refused", p.Name, n, m.Refused)
		}
	}
	if len(hidden.Validation.Rows) != 0 || hidden.Validation.MLPerf.Sweeps != nil || hidden.Validation.Published.SweepList != nil {
		t.Error("the validation part's rows or sweeps are in the report without --show-validation")
	}
	if len(shown.Validation.Rows) != shown.Validation.MLPerf.Submissions {
		t.Errorf("--show-validation: %d rows of %d submissions", len(shown.Validation.Rows), shown.Validation.MLPerf.Submissions)
	}
	if hidden.Validation.MLPerf.MeanAbsError != shown.Validation.MLPerf.MeanAbsError || hidden.Validation.MLPerf.SweepSummary != shown.Validation.MLPerf.SweepSummary {
		t.Error("the validation part's aggregates differ with --show-validation")
	}
	for _, r := range shown.Validation.Rows {
		v50 := strings.HasPrefix(r.ID, "v5.0/") && (strings.HasSuffix(r.ID, "/llama31_405b") || strings.HasSuffix(r.Sweep, " MI325X"))
		if !(strings.HasPrefix(r.ID, "v4.1/") || v50) || r.Part != "validation" {
			t.Errorf("%s in the validation part", r.ID)
		}
	}
	// The sets hold every submission of their part once, in aggregate.
	for _, p := range []plans.BenchPart{hidden.Development, hidden.Validation} {
		n := 0
		for _, s := range p.MLPerf.Sets {
			n += s.Submissions
			if s.Within10 > s.Within15 || s.Within15 > s.Predicted || s.MedianAbsError > s.MaxAbsError {
				t.Errorf("%s set %s: %+v", p.Name, s.Set, s)
			}
		}
		if n != p.MLPerf.Submissions {
			t.Errorf("%s: the sets hold %d submissions of %d", p.Name, n, p.MLPerf.Submissions)
		}
	}
	// The stated error: every development row counted once in the
	// leave-one-sweep-out coverage and in its regime; the validation
	// part's coverage over its predicted rows (the MLPerf ones and the
	// published sweep's), aggregate only.
	st := hidden.Stated
	if st == nil {
		t.Fatal("no stated error in the report")
	}
	n := 0
	for _, g := range st.Regimes {
		n += g.Rows
		if g.Stated.Rows == 0 || g.Stated.Regime != g.Regime || !g.Stated.From.Contains(g.Regime) {
			t.Errorf("regime %s: stated %+v", g.Regime.Key(), g.Stated)
		}
	}
	if n != st.Development.Rows || n == 0 {
		t.Errorf("the regimes hold %d rows, the leave-one-sweep-out coverage %d", n, st.Development.Rows)
	}
	if want := hidden.Validation.MLPerf.Predicted + hidden.Validation.Published.Rows; st.Validation.Rows != want {
		t.Errorf("validation coverage over %d rows, want the %d the part predicts", st.Validation.Rows, want)
	}
	var out bytes.Buffer
	if err := plans.WriteBench(&out, hidden); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "leave one sweep out") || !strings.Contains(out.String(), "\nvalidation part, each row against the development part's stated error") ||
		!strings.Contains(out.String(), "\nleave one family out (development part)") || !strings.Contains(lastLines(out.String(), 8), "kind x code base") {
		t.Errorf("the report does not end with the stated error's coverage, leave one sweep out, the validation part and each way of leaving a family out:\n%s", lastLines(out.String(), 8))
	}
	// Every way of leaving out, each family counted once: every
	// development row in each way.
	if len(st.FamilyOut) != len(calibration.Ways) {
		t.Errorf("%d ways of leaving out, want %d", len(st.FamilyOut), len(calibration.Ways))
	}
	for _, wc := range st.FamilyOut {
		if wc.Rows != st.Development.Rows || wc.Within > wc.Rows {
			t.Errorf("%s: %d of %d rows, want every one of the %d development rows", wc.Way, wc.Within, wc.Rows, st.Development.Rows)
		}
	}
	if strings.Contains(out.String(), "v4.1/") {
		t.Error("the report prints a validation row without --show-validation")
	}
	for _, r := range hidden.Validation.MLPerf.Reasons {
		if strings.HasPrefix(r.Reason, "strategy ") && !strings.HasPrefix(r.Reason, "strategy (the row's plan, not printed): ") {
			t.Errorf("a validation refusal names its row's plan without --show-validation: %.40s...", r.Reason)
		}
	}
	out.Reset()
	if err := plans.WriteBench(&out, shown); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "v4.1/") {
		t.Error("--show-validation prints no validation row")
	}
}

// TestResubmissionJudgedOnce: a submission whose runs are an earlier
// one's (same_logs_as) is answered with its one-line reason and never
// predicted, so a measurement enters a part's figures once; a row with
// the same plan, not a resubmission, is predicted.
func TestResubmissionJudgedOnce(t *testing.T) {
	rows, err := bench.Rows()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.SameLogsAs == "" || r.Benchmark != "gpt3" {
			continue
		}
		br := benchRow(r)
		if !strings.HasPrefix(br.Refused, "a resubmission of an earlier submission's runs") || br.Predicted != 0 {
			t.Errorf("%s (the runs of %s): refused %q, predicted %g", r.ID, r.SameLogsAs, br.Refused, br.Predicted)
		}
		r.SameLogsAs = ""
		if br := benchRow(r); br.Refused != "" || br.Predicted <= 0 {
			t.Errorf("%s as a new measurement: refused %q, predicted %g", r.ID, br.Refused, br.Predicted)
		}
		return
	}
	t.Fatal("no resubmitted gpt3 row in runs.csv (smc-ac-power's are smc's runs)")
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

func TestPlanHidden(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"strategy tp=4,pp=8,vp=8,dp=8: pp=8 x vp=8 does not divide the 126 layers", "strategy (the row's plan, not printed): pp=8 x vp=8 does not divide the 126 layers"},
		{"no pod preset for RTX4090 GPUs", "no pod preset for RTX4090 GPUs"},
		{"strategy without a colon", "strategy without a colon"},
	} {
		if got := planHidden(c.in); got != c.want {
			t.Errorf("planHidden(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
