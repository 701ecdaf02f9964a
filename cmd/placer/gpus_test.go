package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// torchCNN is a graph from PyTorch with its exporter's meta file beside
// it (jobs/testdata/torch).
const torchCNN = "../../jobs/testdata/torch/cnn.json"

// plan is the part of a torch plan these tests read.
type plan struct {
	Devices      int    `json:"devices"`
	GPUs         int    `json:"gpus"`
	Replicas     int    `json:"replicas"`
	MicroBatches int    `json:"micro_batches"`
	Schedule     string `json:"schedule"`
}

func readPlan(t *testing.T, out string) plan {
	t.Helper()
	var p plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not a torch plan (%v):\n%s", err, out)
	}
	return p
}

// oneLine checks a refusal: exit 1 and one line on stderr containing want.
func oneLine(t *testing.T, what string, code int, stderr, want string) {
	t.Helper()
	if code != 1 || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "panic") {
		t.Errorf("%s: exit %d, stderr %q; want exit 1 and one line containing %q", what, code, stderr, want)
	}
}

// TestGPUsSameInEvalAndExport is a dead end a user met: export --gpus 2
// --strategy dp=2,mb=2,schedule=1f1b round-robin was refused ("take 4
// GPUs"), --gpus 4 too ("take 8 GPUs"), and eval's -o file was refused
// by export. Now --gpus is every GPU in both: export --gpus 2 writes 2
// one-GPU replicas, --gpus 4 two 2-GPU replicas, and eval --gpus 4's -o
// file exports to that same plan (and evaluates again to the same
// step); the wrong --gpus with that file, and a count the replicas do
// not divide, get one line naming what fits.
func TestGPUsSameInEvalAndExport(t *testing.T) {
	const strat = "dp=2,mb=2,schedule=1f1b"
	exp := func(args ...string) (int, string, string) {
		return placer(t, append([]string{"export", "--graph", torchCNN, "--to", "torch-plan"}, args...)...)
	}
	code, out, errs := exp("--placement", "round-robin", "--gpus", "2", "--strategy", strat)
	if code != 0 {
		t.Fatalf("export --gpus 2 --strategy %s: exit %d: %s", strat, code, errs)
	}
	if p := readPlan(t, out); p.GPUs != 2 || p.Replicas != 2 || p.Devices != 1 || p.MicroBatches != 2 || p.Schedule != "1f1b" {
		t.Errorf("export --gpus 2: %+v, want 2 replicas of 1 GPU, 2 micro-batches, 1f1b", p)
	}
	code, direct, errs := exp("--placement", "round-robin", "--gpus", "4", "--strategy", strat)
	if code != 0 {
		t.Fatalf("export --gpus 4 --strategy %s: exit %d: %s", strat, code, errs)
	}
	if p := readPlan(t, direct); p.GPUs != 4 || p.Replicas != 2 || p.Devices != 2 {
		t.Errorf("export --gpus 4: %+v, want 2 replicas of 2 GPUs", p)
	}

	dir := t.TempDir()
	report := filepath.Join(dir, "eval.json")
	code, text, errs := placer(t, "eval", "--graph", torchCNN, "--placement", "round-robin", "--gpus", "4", "--strategy", strat, "-o", report)
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errs)
	}
	if !strings.Contains(text, "the placement is one replica's, on 2 of the 4 GPUs") {
		t.Errorf("eval says:\n%s", text)
	}
	var rep struct {
		StepTime float64 `json:"step_time_s"`
		Decision struct {
			Devices int `json:"devices"`
		} `json:"decision"`
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil || rep.Decision.Devices != 2 {
		t.Fatalf("eval -o: %v, decision on %d GPUs; want one replica's on 2", err, rep.Decision.Devices)
	}
	for _, gpus := range [][]string{nil, {"--gpus", "4"}} {
		code, out, errs := exp(append([]string{"--placement", report}, gpus...)...)
		if code != 0 {
			t.Fatalf("export --placement eval's -o %v: exit %d: %s", gpus, code, errs)
		}
		if out != direct {
			t.Errorf("export --placement eval's -o %v:\n%s\nwant export round-robin --gpus 4 --strategy %s's:\n%s", gpus, out, strat, direct)
		}
		code, out, errs = placer(t, append([]string{"eval", "--graph", torchCNN, "--placement", report, "--json"}, gpus...)...)
		if code != 0 {
			t.Fatalf("eval --placement eval's -o %v: exit %d: %s", gpus, code, errs)
		}
		var again struct {
			StepTime float64 `json:"step_time_s"`
			Devices  int     `json:"devices"`
		}
		if err := json.Unmarshal([]byte(out), &again); err != nil || again.StepTime != rep.StepTime || again.Devices != 4 {
			t.Errorf("eval --placement eval's -o %v: %v, %g s on %d GPUs; want %g s on 4", gpus, err, again.StepTime, again.Devices, rep.StepTime)
		}
	}
	code, _, errs = exp("--placement", report, "--gpus", "2")
	oneLine(t, "export eval's -o --gpus 2", code, errs, "made for 2 devices a replica, and 2 replicas of it take 4 GPUs, not --gpus 2 (--gpus is every GPU: give --gpus 4, or leave it out)")
	code, _, errs = placer(t, "eval", "--graph", torchCNN, "--placement", report, "--gpus", "8")
	oneLine(t, "eval eval's -o --gpus 8", code, errs, "give --gpus 4")
	code, _, errs = exp("--placement", "round-robin", "--gpus", "3", "--strategy", strat)
	oneLine(t, "export --gpus 3", code, errs, "--gpus 3: 2 replicas do not divide 3 GPUs")
	code, _, errs = placer(t, "eval", "--graph", torchCNN, "--placement", "round-robin", "--gpus", "3", "--strategy", strat)
	oneLine(t, "eval --gpus 3", code, errs, "--gpus 3: 2 replicas do not divide 3 GPUs")
	old := writeFile(t, "old-eval.json", `{"graph": "cnn", "ops": 127, "hardware": "v100", "devices": 4, "step_time_s": 0.0004}`)
	code, _, errs = exp("--placement", old)
	oneLine(t, "export of a report without its decision", code, errs, "a report without the decision it evaluated")
}

// TestGPUsRuleInHelp: eval, search and export say how they read --gpus
// with a strategy, in the same words.
func TestGPUsRuleInHelp(t *testing.T) {
	for _, cmd := range []string{"eval", "search", "export"} {
		code, out, errs := placer(t, cmd, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d: %s", cmd, code, errs)
		}
		for _, want := range []string{"--gpus is every GPU of the cluster, in eval, search and export alike", "places one replica's placement on GPUs / R of them"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s --help lacks %q", cmd, want)
			}
		}
	}
}

// trainModeGraph is the CNN with a meta file listing a BatchNorm and a
// dropout in train_mode, in a folder of its own.
func trainModeGraph(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	g, err := os.ReadFile(torchCNN)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(strings.TrimSuffix(torchCNN, ".json") + ".meta.json")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	meta["train_mode"] = []map[string]string{
		{"module": "features.1", "class": "BatchNorm2d", "effect": "batch-statistics"},
		{"module": "features.2", "class": "Dropout", "effect": "random"},
	}
	if data, err = json.Marshal(meta); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cnn.json")
	if err := os.WriteFile(path, g, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cnn.meta.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTrainModeLines: export of a plan with replicas and micro-batches
// says on stderr, in one line, which train-mode modules it changes (its
// stdout stays the plan); search prints the line after its summary and
// carries it in --json's train_mode.
func TestTrainModeLines(t *testing.T) {
	g := trainModeGraph(t)
	code, out, errs := placer(t, "export", "--graph", g, "--placement", "round-robin", "--gpus", "4", "--strategy", "dp=2,mb=2,schedule=1f1b", "--to", "torch-plan")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	readPlan(t, out)
	// Beside the train-mode line, export says what it wrote (its last
	// line, "export: wrote ...").
	want := "export: train mode: 1 BatchNorm2d module (features.1) normalizes with the statistics of micro-batches of 2 samples, not of the batch of 8"
	lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "1 Dropout module (features.2) draws random numbers") || !strings.HasPrefix(lines[1], "export: wrote ") {
		t.Errorf("export's stderr %q, want one line starting %q, then export's wrote line", errs, want)
	}
	if code, _, errs := placer(t, "export", "--graph", g, "--placement", "single", "--to", "torch-plan"); code != 0 || strings.Contains(errs, "train mode") || !strings.HasPrefix(errs, "export: wrote ") || strings.Count(errs, "\n") != 1 {
		t.Errorf("export of one piece: exit %d, stderr %q; want its wrote line alone, no train-mode line", code, errs)
	}

	code, out, errs = placer(t, "search", "--graph", g, "--gpus", "4", "--methods", "single", "--evals", "100", "--seed", "1", "-q")
	if code != 0 {
		t.Fatalf("search: exit %d: %s", code, errs)
	}
	line := "train mode: 1 BatchNorm2d module (features.1) normalizes with the statistics of micro-batches of 4 samples, not of the batch of 8"
	// Broken at spaces to 120 columns, continuations indented by two.
	if !strings.Contains(strings.ReplaceAll(out, "\n  ", " "), "\n"+line) {
		t.Errorf("search's text lacks %q:\n%s", line, out)
	}
	code, out, errs = placer(t, "search", "--graph", g, "--gpus", "4", "--methods", "single", "--evals", "100", "--seed", "1", "-q", "--json")
	if code != 0 {
		t.Fatalf("search --json: exit %d: %s", code, errs)
	}
	var rep struct {
		TrainMode struct {
			Line     string `json:"line"`
			Replicas int    `json:"replicas"`
			Modules  []struct {
				Module string `json:"module"`
				Class  string `json:"class"`
				Effect string `json:"effect"`
			} `json:"modules"`
		} `json:"train_mode"`
		Comparison struct {
			Rows []struct {
				Method      string  `json:"method"`
				SearchTime  float64 `json:"search_time_s"`
				Evaluations int     `json:"evaluations"`
				Rate        float64 `json:"evaluations_per_s"`
			} `json:"methods"`
		} `json:"comparison"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	tm := rep.TrainMode
	if !strings.HasPrefix(tm.Line, line) || tm.Replicas != 2 || len(tm.Modules) != 2 || tm.Modules[0].Module != "features.1" || tm.Modules[1].Effect != "random" {
		t.Errorf("search --json train_mode: %+v", tm)
	}
	// Every row's evaluations/s is its evaluations over its search time,
	// the joint rows' ("go-scored dp=2,...") too.
	joint := 0
	for _, r := range rep.Comparison.Rows {
		if r.Evaluations < 2 || r.SearchTime <= 0 {
			continue
		}
		if strings.Contains(r.Method, " dp=") {
			joint++
		}
		if want := float64(r.Evaluations) / r.SearchTime; math.Abs(r.Rate-want) > 1e-9*want {
			t.Errorf("row %s: %g evaluations/s, want %d / %g s = %g", r.Method, r.Rate, r.Evaluations, r.SearchTime, want)
		}
	}
	if joint == 0 {
		t.Errorf("no joint row to check: %+v", rep.Comparison.Rows)
	}
}
