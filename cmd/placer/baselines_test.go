package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBaselinesCommand(t *testing.T) {
	code, out, errs := placer(t, "baselines", "--graph", example, "--gpus", "2", "--budget", "40", "--methods", "single,metis,m-etf,brkga")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"vs single", "metis", "m-etf", "brkga", "evaluations/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(errs, "baselines: ") != 4 {
		t.Errorf("progress on stderr: %q", errs)
	}
	code, out, errs = placer(t, "baselines", "--graph", example, "--gpus", "2", "--budget", "10", "--methods", "random", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Methods []struct {
			Method      string  `json:"method"`
			Step        float64 `json:"step_time_s"`
			Evaluations int     `json:"evaluations"`
		} `json:"methods"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Methods) != 1 || r.Methods[0].Evaluations != 10 || r.Methods[0].Step <= 0 {
		t.Errorf("json %s", out)
	}
}

func TestBaselinesUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"baselines"},
		{"baselines", "--graph", example, "--methods", "magic"},
		{"baselines", "--graph", example, "--budget", "-1"},
		{"baselines", "--graph", example, "--tasks", "speed"},
	} {
		if code, _, errs := placer(t, args...); code != 2 {
			t.Errorf("%v: exit %d (%s)", args, code, errs)
		}
	}
}
