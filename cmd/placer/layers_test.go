package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportLayersKernelBench: placer report layers --kernelbench reads
// the H100's measured steps and prints both tables (and their --json
// twin); a missing or bad file, or neither flag, is one line and a
// non-zero exit.
func TestReportLayersKernelBench(t *testing.T) {
	file := filepath.Join("..", "..", "measurements", "2026-11-26-h100", "kernelbench.jsonl")
	code, out, errs := placer(t, "report", "layers", "--kernelbench", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"One GPU's whole step a row", "1.7B", "7.1B", "4 x 24", "output layer + cross-entropy", "Adam, 36.4M parameters"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = placer(t, "report", "layers", "--kernelbench", file, "--json")
	var rep struct {
		Steps []struct {
			Row       string  `json:"row"`
			Measured  float64 `json:"measured_s"`
			Predicted float64 `json:"predicted_s"`
		} `json:"steps"`
		Fit *json.RawMessage `json:"fit"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Steps) != 2 || rep.Fit != nil || !(rep.Steps[0].Predicted > 0) {
		t.Errorf("--json: exit %d, %q, %s", code, out, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"kind": "between", "name": "9B.step", "seconds": 1, "micro_batches": 1, "layers": 1, "block_fwd_seconds": 1, "block_bwd_seconds": 1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "layers"}, "--measured: a file of measured blocks is required"},
		{[]string{"report", "layers", "--kernelbench", filepath.Join(t.TempDir(), "none.jsonl")}, "no such file"},
		{[]string{"report", "layers", "--kernelbench", bad}, `row "9B": not a row`},
	} {
		code, _, errs := placer(t, tc.args...)
		if code == 0 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want non-zero and one line with %q", strings.Join(tc.args, " "), code, errs, tc.want)
		}
	}
}
