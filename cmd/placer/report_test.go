package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReportGeneralizationCommand(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train")
	os.MkdirAll(train, 0o755)
	data, _ := os.ReadFile(example)
	os.WriteFile(filepath.Join(train, "trxl-mlp.json"), data, 0o644)
	tiny, _ := os.ReadFile("../../examples/tiny.json")
	os.WriteFile(filepath.Join(train, "wavenet-tiny.json"), tiny, 0o644)
	args := []string{"report", "generalization", "--families", "trxl,wavenet", "--train", "none", "--graphs", train,
		"--test", "trxl=" + example + ",wavenet=../../examples/tiny.json", "--policy", "small", "--samples", "4",
		"--pretrain-steps", "3", "--warmup", "1", "--search-steps", "2", "--finetune-steps", "2", "--dir", filepath.Join(dir, "out")}
	code, out, errs := placer(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"held out", "GO-one", "geomean", "zero-shot beats the expert placement", "models and results in"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "[2/2] wavenet held out: pre-training on 1 graphs (trxl-mlp)") {
		t.Errorf("progress: %s", errs)
	}
	// The rerun reads both families back, as JSON.
	code, out, errs = placer(t, append(args, "--json", "-q")...)
	if code != 0 || errs != "" {
		t.Fatalf("rerun: exit %d: %s", code, errs)
	}
	var rep struct {
		Families []struct {
			Family string `json:"family"`
		} `json:"families"`
		Resumed []string `json:"resumed"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Families) != 2 || len(rep.Resumed) != 2 {
		t.Fatalf("rerun json %v: %s", err, out)
	}
}

func TestReportGeneralizationUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"report", "generalization", "--families", "lstm"},
		{"report", "generalization", "--test", "lstm=x.json"},
		{"report", "generalization", "--gpus", "9"},
		{"report", "generalization", "--finetune-steps", "0"},
		{"report", "generalization", "--pretrain-steps", "-1"},
		{"report", "generalization", "--search-steps", "0"},
		{"report", "generalization", "--tasks", "speed"},
		{"report", "generalization", "--plot", "g.gif"},
		{"report", "generalization", "--policy", "/nonexistent"},
		{"report", "generalization", "--pretrain-time", "soon"},
		{"report", "generalization", "extra"},
		{"report", "bogus"},
	} {
		code, _, errs := placer(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d (%q), want 2 and one line", args, code, errs)
		}
	}
}

// TestReportLearnedCommand runs the report on a small graph with two
// methods, the plots and the JSON twin (read back from --dir).
func TestReportLearnedCommand(t *testing.T) {
	dir := t.TempDir()
	args := []string{"report", "learned", "--graphs", example, "--gpus", "2", "--methods", "hdp,go", "--budgets", "200ms",
		"--dir", filepath.Join(dir, "cells"), "--plot-dir", filepath.Join(dir, "plots"), "--plot-format", "png"}
	code, out, errs := placer(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"to beat expert", "no expert placement", "go ahead of hdp on", "in a fifteenth of the budget"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "learned: mlp") || !strings.Contains(errs, "1 plots written to") {
		t.Errorf("progress: %s", errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "plots", "mlp@2-0.2s.png")); err != nil {
		t.Error(err)
	}
	code, out, errs = placer(t, append(args, "--json", "-q")...)
	if code != 0 || errs != "" {
		t.Fatalf("rerun: exit %d: %s", code, errs)
	}
	var rep struct {
		Graphs []struct {
			Cells []struct {
				Method string            `json:"method"`
				Curve  []json.RawMessage `json:"curve"`
			} `json:"cells"`
		} `json:"graphs"`
		Summary []struct {
			Pairs int `json:"go_hdp_graphs"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Graphs) != 1 || len(rep.Graphs[0].Cells) != 2 || len(rep.Graphs[0].Cells[1].Curve) == 0 || rep.Summary[0].Pairs != 1 {
		t.Fatalf("json %v: %s", err, out)
	}
	// --no-run with a budget never run: the kept cells, the others
	// counted as missing.
	noRun := append(slices.Clone(args[:len(args)-4]), "--budgets", "200ms,1h", "--no-run")
	code, out, errs = placer(t, noRun...)
	if code != 0 {
		t.Fatalf("--no-run: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "mlp: 2 of 4 cells missing") || !strings.Contains(errs, "not kept in") || !strings.Contains(out, "go ahead of hdp on 1 of 1") {
		t.Errorf("--no-run: %s\n%s", out, errs)
	}
}

func TestReportLearnedUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"report", "learned", "--methods", "nope"},
		{"report", "learned", "--budgets", "0s"},
		{"report", "learned", "--budgets", "soon"},
		{"report", "learned", "--gpus", "9"},
		{"report", "learned", "--plot-format", "gif"},
		{"report", "learned", "extra"},
		{"report", "learned", "--no-run"},
	} {
		code, _, errs := placer(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d (%q), want 2 and one line", args, code, errs)
		}
	}
}

// TestReportParallelUsageErrors: bad input is one line, exit 2, and
// nothing written.
func TestReportParallelUsageErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	for _, args := range [][]string{
		{"report", "parallel", "--graphs", "nosuch"},
		{"report", "parallel", "--graphs", "wavenet2x18", "--topologies", "ring"},
		{"report", "parallel", "--graphs", "wavenet2x18", "--hardware", "tpu"},
		{"report", "parallel", "--graphs", "wavenet2x18", "--gpus-list", "2,0"},
		{"report", "parallel", "--graphs", "wavenet2x18", "--gpus-list", "two"},
	} {
		code, out, errs := placer(t, append(args, "--dir", dir, "--plot", filepath.Join(dir, "p.svg"))...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d (%q), want 2 and one line", args, code, errs)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("bad input wrote %s", dir)
	}
}
