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

// TestReportLayersAttentionMoE: a kernelbench file's attention cases and
// MoE parts are checked too (each in its table and its --json twin), and
// so are whole eager MoE layers; a file with none of the four sections is
// one line and a non-zero exit.
func TestReportLayersAttentionMoE(t *testing.T) {
	dir := filepath.Join("..", "..", "measurements", "2026-11-26-h100-b")
	code, out, errs := placer(t, "report", "layers", "--kernelbench", filepath.Join(dir, "kb-attention.jsonl"))
	if code != 0 || !strings.Contains(out, "Fused attention, causal, by shape") || !strings.Contains(out, "megatron-32B") ||
		!strings.Contains(out, "cudnn forward 1.7%, backward 1.5%") {
		t.Errorf("attention: exit %d:\n%s%s", code, out, errs)
	}
	code, out, errs = placer(t, "report", "layers", "--kernelbench", filepath.Join(dir, "kb-moe.jsonl"), "--json")
	var rep struct {
		MoE []struct {
			Model     string  `json:"model"`
			Part      string  `json:"part"`
			Measured  float64 `json:"measured_s"`
			Predicted float64 `json:"predicted_s"`
		} `json:"moe"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.MoE) != 20 || rep.MoE[1].Part != "permute" || !(rep.MoE[1].Predicted > 0) {
		t.Errorf("moe --json: exit %d, %q, %s", code, out, errs)
	}
	code, _, errs = placer(t, "report", "layers", "--kernelbench", filepath.Join(dir, "kb-gemm.jsonl"))
	if code == 0 || !strings.Contains(errs, "no whole steps, attention cases, MoE parts or MoE layers") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("a file of GEMMs: exit %d, %q", code, errs)
	}
	// A whole eager MoE layer (kernelbench's moehost section): its busy
	// share, 3 ms of 12.
	host := filepath.Join(t.TempDir(), "moehost.jsonl")
	line := `{"kind": "moehost", "name": "qwen3-30b-a3b.loop", "model": "qwen3-30b-a3b", "hidden": 2048, "ffn": 768, "experts": 128, "topk": 8, "ep": 8, "local_experts": 16, "tokens": 8192, "wall_fwd_seconds": 0.004, "wall_seconds": 0.012, "kernel_seconds": 0.003, "kernels": 300}`
	if err := os.WriteFile(host, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = placer(t, "report", "layers", "--kernelbench", host)
	if code != 0 || !strings.Contains(out, "A whole MoE layer run eagerly on one GPU") || !strings.Contains(out, "25.0%") {
		t.Errorf("moehost: exit %d:\n%s%s", code, out, errs)
	}
}
