package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/defaultmodel"
)

func TestPretrainInferFinetuneCommands(t *testing.T) {
	dir := t.TempDir()
	graphs := filepath.Join(dir, "graphs")
	os.MkdirAll(graphs, 0o755)
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(graphs, "mlp.json"), data, 0o644)
	tiny, _ := os.ReadFile("../../examples/tiny.json")
	os.WriteFile(filepath.Join(graphs, "tiny.json"), tiny, 0o644)
	model := filepath.Join(dir, "m.policy")
	code, out, errs := placer(t, "pretrain", "--graphs", graphs, "--gpus", "2", "--policy", "small", "--steps", "4", "--samples", "4", "--warmup", "2", "--out", model)
	if code != 0 {
		t.Fatalf("pretrain: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "pretrain: 4 steps") || !strings.Contains(out, "mlp") || !strings.Contains(errs, "reference") {
		t.Fatalf("pretrain output:\n%s\nstderr:\n%s", out, errs)
	}
	// Resume to 6 steps, as JSON.
	code, out, errs = placer(t, "pretrain", "--graphs", graphs, "--gpus", "2", "--steps", "6", "--samples", "4", "--resume", model, "--out", model, "--json", "-q")
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	var pr struct {
		Steps int `json:"steps"`
		Curve []struct {
			Step int `json:"step"`
		} `json:"curve"`
	}
	if err := json.Unmarshal([]byte(out), &pr); err != nil || pr.Steps != 6 || len(pr.Curve) != 2 || pr.Curve[0].Step != 5 {
		t.Fatalf("resumed report %v: %s", err, out)
	}
	if step, err := pretrainCheckpointStep(model); err != nil || step != 6 {
		t.Fatalf("checkpoint at step %d, %v", step, err)
	}
	res := filepath.Join(dir, "infer.json")
	code, out, errs = placer(t, "infer", "--model", model, "--graph", example, "--gpus", "2", "--samples", "4", "--out", res)
	if code != 0 || !strings.Contains(out, "go-zero-shot") || !strings.Contains(out, "result written to") {
		t.Fatalf("infer: exit %d:\n%s\n%s", code, out, errs)
	}
	if code, out, errs = placer(t, "eval", "--graph", example, "--gpus", "2", "--placement", res); code != 0 || !strings.Contains(out, "step time") {
		t.Fatalf("eval of the infer result: exit %d: %s", code, errs)
	}
	code, out, errs = placer(t, "finetune", "--model", model, "--graph", example, "--gpus", "2", "--samples", "4", "--steps", "2", "--json", "-q")
	if code != 0 {
		t.Fatalf("finetune: exit %d: %s", code, errs)
	}
	var fr struct {
		Result struct {
			Method string  `json:"method"`
			Steps  int     `json:"steps"`
			Step   float64 `json:"step_time_s"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &fr); err != nil || fr.Result.Method != "go-finetune" || fr.Result.Steps != 2 || fr.Result.Step <= 0 {
		t.Fatalf("finetune json %v: %s", err, out)
	}
	// A truncated model is a one-line error, exit 1.
	trunc := filepath.Join(dir, "t.policy")
	mdata, _ := os.ReadFile(model)
	os.WriteFile(trunc, mdata[:100], 0o644)
	// The checkpoint is its state file, which holds the policy too.
	sdata, _ := os.ReadFile(gdp.CheckpointState(model))
	os.WriteFile(gdp.CheckpointState(trunc), sdata[:len(sdata)/2], 0o644)
	for _, args := range [][]string{
		{"infer", "--model", trunc, "--graph", example, "--gpus", "2"},
		{"pretrain", "--graphs", graphs, "--gpus", "2", "--resume", trunc, "--out", model},
	} {
		code, _, errs = placer(t, args...)
		if code != 1 || !strings.Contains(errs, "truncated") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args[0], code, errs)
		}
	}
}

func TestTransferUsageErrors(t *testing.T) {
	cases := [][]string{
		{"pretrain", "--gpus", "2", "--out", "m"},
		{"pretrain", "--workloads", "trxl2", "--gpus", "2"},
		{"pretrain", "--workloads", "trxl2", "--out", "m"},
		{"pretrain", "--workloads", "trxl2", "--gpus", "2", "--out", "m", "--steps", "-1"},
		{"pretrain", "--workloads", "trxl2", "--gpus", "9", "--out", "m"},
		{"pretrain", "--workloads", "trxl2", "--gpus", "2", "--extra-gpus", "2", "--out", "m"},
		{"pretrain", "--workloads", "trxl2", "--gpus", "2", "--extra-gpus", "four", "--out", "m"},
		{"pretrain", "--workloads", "trxl2", "--gpus", "2", "--out", "m", "--hold-out", "lstm"},
		{"pretrain", "--workloads", "trxl2", "--gpus", "2", "--out", "m", "--policy", "nonexistent"},
		{"pretrain", "--workloads", "trxl2", "--gpus", "2", "--out", "m", "--tasks", "speed"},
		{"infer", "--model", "m"},
		{"infer", "--model", "m", "--graph", example, "--samples", "-2"},
		{"finetune", "--model", "m", "--graph", example, "--steps", "0"},
		{"finetune", "--model", "m", "--graph", example, "--tasks", "speed"},
		{"finetune", "--graph", example, "--bogus"},
	}
	if !defaultmodel.Available() {
		cases = append(cases, []string{"infer", "--graph", example, "--gpus", "2"})
	}
	for _, args := range cases {
		code, _, errs := placer(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d (%q), want 2 and one line", args, code, errs)
		}
	}
	if !defaultmodel.Available() {
		_, _, errs := placer(t, "finetune", "--graph", example, "--gpus", "2")
		if !strings.Contains(errs, "--model") || !strings.Contains(errs, "make default-model") {
			t.Errorf("no default model: %q", errs)
		}
	}
}

// pretrainCheckpointStep loads the pre-training checkpoint model (the
// model file and its state file) and returns the step it was written at.
func pretrainCheckpointStep(model string) (int, error) {
	_, st, err := gdp.LoadCheckpoint(model)
	if err != nil {
		return 0, err
	}
	return st.Step, nil
}
