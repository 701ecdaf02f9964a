package jobs

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/fail"
	exportjob "github.com/placer/placer/jobs/export"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/plans"
)

// llama8b is Llama 3 8B by its config.json at the run: 8,192
// tokens, 256 sequences, 4 DGX H100 nodes.
var (
	llama8b      = inputs.GraphSpec{Workload: "hf:../graph/transformer/testdata/hf/llama3-8b.json:seq=8192,batch=256"}
	llama8bNodes = "dgx-h100:4" // the pod
)

// TestExportPlanFile: export at cluster scale writes the plan of a
// search's -o file (its best) and of an eval's -o report, key for key
// the plan they evaluated, and refuses, each in one line, a file that
// is missing, not a result, or made for another model or cluster, a
// plan file beside --strategy (a command-line mistake: exit 2), and a
// plan that does not fit (192.7 GB a GPU: eval's figure) unless
// AllowOver, which warns.
func TestExportPlanFile(t *testing.T) {
	dir := t.TempDir()
	searched := filepath.Join(dir, "search.json")
	rep, err := ScaleSearch(context.Background(), ScaleOptions{Workload: llama8b.Workload, Cluster: llama8bNodes, Out: searched})
	if err != nil {
		t.Fatal(err)
	}
	best := rep.Best.Strategy
	if best == "" || best == "tp=1,pp=1,dp=32,mbs=1" {
		t.Fatalf("search's best %q", best)
	}
	// An eval's report of a plan that does not fit (the plan every
	// degree left to placer resolves to).
	over := "tp=1,pp=1,dp=32,mbs=1"
	ev, err := ScaleEval(context.Background(), ScaleOptions{Workload: llama8b.Workload, Cluster: llama8bNodes, Strat: over})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Fits || plans.GB(ev.Memory) != "192.7 GB" {
		t.Fatalf("eval of %s: fits %v, %s a GPU; want 192.7 GB, over", over, ev.Fits, plans.GB(ev.Memory))
	}
	evaluated := filepath.Join(dir, "eval.json")
	if err := atomicfile.Write(evaluated, func(w io.Writer) error { return report.JSON(w, ev) }); err != nil {
		t.Fatal(err)
	}
	notResult := filepath.Join(dir, "decision.json")
	if err := os.WriteFile(notResult, []byte(`{"format": "placer-decision", "version": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	header := func(out []byte) string { // MegatronScript's first line names the plan
		line, _, _ := strings.Cut(string(out), "\n")
		return line
	}
	qwen := inputs.GraphSpec{Workload: "hf:../graph/transformer/testdata/hf/qwen3-8b.json:seq=8192,batch=256"}
	for _, tc := range []struct {
		name     string
		o        exportjob.Options
		plan     string // the plan written ("" = refused)
		err      string // in the one-line refusal
		code     int    // fail.Code of the refusal
		warnings int
	}{
		{"search by --plan", exportjob.Options{Plan: searched}, best, "", 0, 0},
		{"search by --placement", exportjob.Options{Placement: searched}, best, "", 0, 0},
		{"eval over, allowed", exportjob.Options{Plan: evaluated, Scale: exportjob.ScaleOptions{AllowOver: true}}, over, "", 0, 1},
		{"eval over", exportjob.Options{Plan: evaluated}, "", "needs 192.7 GB a GPU, more than the 85.0 GB usable a GPU of dgx-h100:4 has for it", 1, 0},
		{"default plan over", exportjob.Options{}, "", "plan tp=1,pp=1,dp=32,mbs=1 needs 192.7 GB", 1, 0},
		{"strategy", exportjob.Options{Strategy: best}, best, "", 0, 0},
		{"missing", exportjob.Options{Plan: filepath.Join(dir, "nosuch.json")}, "", "nosuch.json: cannot read it: no such file or directory", 1, 0},
		{"not a result", exportjob.Options{Plan: notResult}, "", "not a placer search or eval result at cluster scale", 1, 0},
		{"other model", exportjob.Options{Scale: exportjob.ScaleOptions{Workload: qwen.Workload}, Plan: searched}, "", "its plan is for llama:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,seq=8192,vocab=128256,batch=256, not for the workload llama:layers=36", 1, 0},
		{"other cluster", exportjob.Options{Scale: exportjob.ScaleOptions{Pod: inputs.PodSpec{Pod: "dgx-h100:8"}}, Plan: searched}, "", "its plan is for dgx-h100:4 (32 GPUs), not for the cluster dgx-h100:8 (64 GPUs)", 1, 0},
		{"plan and strategy", exportjob.Options{Plan: searched, Strategy: "tp=2"}, "", "--strategy and the plan file", 2, 0},
		{"plan and placement", exportjob.Options{Plan: searched, Placement: evaluated}, "", "both name the plan", 2, 0},
		{"round-robin", exportjob.Options{Placement: "round-robin"}, "", "takes its plan from --strategy or a search's or eval's result", 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			if o.Scale.Workload == "" {
				o.Scale.Workload = llama8b.Workload
			}
			if o.Scale.Pod.Pod == "" {
				o.Scale.Pod.Pod = llama8bNodes
			}
			o.World = inputs.ClusterScale
			var warn bytes.Buffer
			o.To, o.Warn = "megatron", &warn
			out, err := exportjob.Run(o)
			if tc.plan == "" {
				msg := ""
				if err != nil {
					msg = err.Error()
				}
				if err == nil || !strings.Contains(msg, tc.err) || strings.Contains(msg, "\n") || fail.Code(err, false) != tc.code {
					t.Fatalf("error %q (exit %d), want one line with %q, exit %d", msg, fail.Code(err, false), tc.err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := header(out); !strings.Contains(got, " under "+tc.plan+" on 32 GPUs") {
				t.Errorf("written %q, want the plan %s", got, tc.plan)
			}
			// Standard error: the warnings, then the line saying what
			// was written (TestExportSaysWhatItWrote).
			warnings, wrote, _ := strings.Cut(warn.String(), "export: wrote ")
			if n := strings.Count(warnings, "\n"); n != tc.warnings || tc.warnings > 0 && !strings.Contains(warnings, "192.7 GB") {
				t.Errorf("warnings %q, want %d", warnings, tc.warnings)
			}
			if !strings.HasPrefix(wrote, "standard output (Megatron-LM's arguments): ") || !strings.HasSuffix(wrote, " a step on placer's default stack\n") {
				t.Errorf("standard error %q: want a line saying what it wrote", warn.String())
			}
		})
	}
}
