package main

import (
	"encoding/json"
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
