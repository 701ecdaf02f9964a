package main

import (
	"context"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
	"github.com/placer/placer/jobs/benchreport"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/plans"
)

// TestEveryReportFits: what each command prints for people is at most
// report.MaxWidth (120) columns, its tables and the lines around them,
// and --wide draws the widest ones wider. Each command here runs in well
// under a second but the reports and the qwen search (a few CPU s each);
// report megatron's report (its searches: 25 CPU s) is held by jobs'
// TestMegatronReportFits, where its rows are searched once for that
// package's tests of them; the long reports print through the same
// TableFit and line wrapping (report's TestTableFit,
// TestTableFitBreaksCells), and the README's samples are held by go test
// ./tools/dev/readme.
func TestEveryReportFits(t *testing.T) {
	sharedReports(t)
	qwen := []string{"search", "--workload", "qwen3-30b-a3b:seq=4096,batch=512", "--cluster", "dgx-h100:8", "-q"}
	gpt := "gpt:layers=96,hidden=12288,heads=96,seq=4096,vocab=131072,batch=1152,tied=false"
	for _, tc := range []struct {
		args  []string
		wider bool // --wide draws it wider than MaxWidth
	}{
		{[]string{"report", "sweeps"}, true},
		{[]string{"report", "bench"}, true},
		{[]string{"report", "layers", "--measured", "../../measurements/2026-11-26-h100/layerbench.jsonl",
			"--kernelbench", "../../measurements/2026-11-26-h100/kernelbench.jsonl"}, false},
		{qwen, true},
		{[]string{"eval", "--workload", "qwen3-30b-a3b:seq=4096,batch=512", "--cluster", "dgx-h100:8", "--strategy", "pp=2,dp=32,ep=8,recompute=full,recompute-layers=1,embedding-layer=on,loss-layer=on,permute-fusion=on,router-fusion=on"}, true},
		{[]string{"eval", "--workload", gpt, "--cluster", "dgx-h100:288", "--strategy", "tp=8,pp=6,dp=48,mbs=1,sp=on,tpoverlap=on,distopt=on"}, false},
		{[]string{"workloads", "list"}, false},
		{[]string{"baselines", "--graph", example, "--gpus", "2"}, false},
		{[]string{"eval", "--graph", example, "--gpus", "2", "--placement", "round-robin"}, false},
		{[]string{"search", "--workload", "trxl2", "--gpus", "2", "--evals", "300", "-q"}, false},
		// Nothing fits: the NOTHING FITS line too.
		{[]string{"search", "--workload", "trxl2", "--gpus", "2", "--memory", "100000000", "--evals", "200", "-q"}, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errs := placer(t, tc.args...)
			// Nothing fits exits 1 (a failed run), its table printed.
			if code != 0 && !(code == 1 && strings.Contains(errs, "nothing fits")) {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if w, line := widest(out); w > report.MaxWidth {
				t.Errorf("%d columns wide: %q", w, line)
			}
			// A plan breaks between its keys only: each key=value whole.
			for _, a := range tc.args {
				if !strings.Contains(a, "=") || strings.Contains(a, ":") {
					continue
				}
				for _, kv := range strings.Split(a, ",") {
					if strings.Contains(kv, "-") && !strings.Contains(out, kv) {
						t.Errorf("%s is broken over lines:\n%s", kv, out)
					}
				}
			}
			if !tc.wider {
				return
			}
			_, wide, _ := placer(t, append([]string{"--wide"}, tc.args...)...)
			if w, _ := widest(wide); w <= report.MaxWidth {
				t.Errorf("--wide: %d columns wide, want wider than %d", w, report.MaxWidth)
			}
		})
	}
}

// sharedReports has report sweeps and report bench compute each report
// once (per options) for the rest of t, however often t runs the
// command: the --wide run draws the report the run before it computed.
// The commands still parse their flags and print through emit.
func sharedReports(t *testing.T) {
	sweeps, bench := sweepsReport, benchReport
	t.Cleanup(func() { sweepsReport, benchReport = sweeps, bench })
	var swept *plans.Sweeps
	sweepsReport = func(ctx context.Context) (plans.Sweeps, error) {
		if swept != nil {
			return *swept, nil
		}
		rep, err := sweeps(ctx)
		if err == nil {
			swept = &rep
		}
		return rep, err
	}
	benches := map[benchreport.BenchOptions]plans.Bench{}
	benchReport = func(ctx context.Context, o benchreport.BenchOptions) (plans.Bench, error) {
		if rep, ok := benches[o]; ok {
			return rep, nil
		}
		rep, err := bench(ctx, o)
		if err == nil {
			benches[o] = rep
		}
		return rep, err
	}
}

// widest is the widest line of s in terminal columns, and the line.
func widest(s string) (int, string) {
	w, at := 0, ""
	for _, line := range strings.Split(s, "\n") {
		if n := runewidth.StringWidth(line); n > w {
			w, at = n, line
		}
	}
	return w, at
}
