package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportRegalCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cells")
	plot := filepath.Join(t.TempDir(), "curve.svg")
	args := []string{"report", "regal", "--graphs", "synthetic:2", "--methods", "gp-dfs,brkga", "--evaluations", "100",
		"--budgets", "100,200", "--best-budget", "300", "--dir", dir, "--plot", plot}
	code, out, errs := placer(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"peak memory: mean over 2 graphs", "step time: mean over 2 graphs", "% gap from best known", "brkga 100", "including brkga at 300 evaluations", "brkga: 100 +0.00%, 200"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "regal: ") || !strings.Contains(errs, "plot written to") {
		t.Errorf("progress: %s", errs)
	}
	code, out, errs = placer(t, append(args[:len(args)-2], "--json", "-q")...)
	if code != 0 || errs != "" {
		t.Fatalf("rerun: exit %d: %s", code, errs)
	}
	var rep struct {
		Summary []struct {
			Objective string             `json:"objective"`
			Gap       map[string]float64 `json:"mean_gap_pct"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Summary) != 2 || rep.Summary[0].Objective != "peak-memory" {
		t.Fatalf("json %v: %s", err, out)
	}
}

func TestObjectiveAndRegalUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"report", "regal", "--methods", "brkga,regal-nope"},
		{"report", "regal", "--objectives", "latency"},
		{"report", "regal", "--budgets", "5000,x"},
		{"report", "regal", "--evaluations", "0"},
		{"baselines", "--graph", example, "--objective", "latency"},
		{"tune-brkga", "--train-graphs", "0"},
	} {
		if code, _, errs := placer(t, args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d (%s), want a usage error", args, code, errs)
		}
	}
}

func TestBaselinesPeakMemory(t *testing.T) {
	code, out, errs := placer(t, "baselines", "--graph", example, "--gpus", "2", "--methods", "single,brkga", "--budget", "100", "--objective", "peak-memory", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"objective peak memory", "objective: peak memory", " *"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestRegalImitateCommand fits a model to the teachers of two small
// synthetic graphs, reads the teachers back on a second run, and
// continues the model with REINFORCE (--init).
func TestRegalImitateCommand(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := placer(t, "workloads", "synth", "--family", "er", "--count", "2", "--nodes", "12-20", "--seed", "3", "-o", dir+"/synth"); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errs)
	}
	args := []string{"regal", "imitate", "--graphs", dir + "/synth", "--gpus", "2", "--sync-transfers", "--objective", "peak-memory",
		"--teachers", "2", "--teacher-evaluations", "200", "--epochs", "4", "--dim", "8", "--seed", "1",
		"--teacher-file", dir + "/teachers.json", "--out", dir + "/im.regal", "-q"}
	code, out, errs := placer(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"agreement", "2 graphs, peak-memory, 2 teachers x 200 evaluations", "on the same device", "model written to"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	first, err := os.ReadFile(dir + "/im.regal")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := placer(t, args...); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errs)
	}
	if second, _ := os.ReadFile(dir + "/im.regal"); string(second) != string(first) {
		t.Error("the run from the teacher file wrote another model")
	}
	code, out, errs = placer(t, "regal", "train", "--graphs", dir+"/synth", "--gpus", "2", "--sync-transfers", "--objective", "peak-memory",
		"--init", dir+"/im.regal", "--steps", "1", "--evaluations", "50", "--dim", "8", "--out", dir+"/rl.regal", "-q")
	if code != 0 || !strings.Contains(out, "1 steps") {
		t.Fatalf("train --init: exit %d: %s%s", code, out, errs)
	}
	for _, bad := range [][]string{
		{"regal", "imitate", "--graphs", dir + "/synth", "--genes", "fusion", "--out", dir + "/x"},
		{"regal", "imitate", "--graphs", dir + "/synth", "--epochs", "0", "--out", dir + "/x"},
		{"regal", "imitate", "--graphs", dir + "/synth"},
		{"regal", "train", "--graphs", dir + "/synth", "--init", dir + "/im.regal", "--resume", dir + "/rl.regal", "--out", dir + "/x"},
	} {
		if code, _, errs := placer(t, bad...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d (%s), want a usage error", bad, code, errs)
		}
	}
}
