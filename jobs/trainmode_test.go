package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/placer/placer/inputs"
	exportjob "github.com/placer/placer/jobs/export"
	"github.com/placer/placer/report"
)

// trainModeCNN copies the torch CNN and its meta file into a folder of
// its own, the meta file with train (the exporter's "train_mode" list;
// nil = none), and returns the graph's path.
func trainModeCNN(t *testing.T, train any) string {
	t.Helper()
	dir := t.TempDir()
	g, err := os.ReadFile(torchCNN)
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	data, err := os.ReadFile(strings.TrimSuffix(torchCNN, ".json") + ".meta.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	if train != nil {
		meta["train_mode"] = train
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

// cnnTrainMode is what the exporter would list for the CNN with a
// dropout after its first ReLU: features.1 is its BatchNorm2d.
var cnnTrainMode = []map[string]string{
	{"module": "features.1", "class": "BatchNorm2d", "effect": "batch-statistics"},
	{"module": "features.2", "class": "Dropout", "effect": "random"},
}

// TestExportTrainMode: export of a torch plan with replicas or
// micro-batches says in one line on Warn which train-mode modules the
// plan changes; a plan of one piece, a module map or a meta file without
// train_mode says nothing; a meta file with an effect placer does not
// know is refused in one line.
func TestExportTrainMode(t *testing.T) {
	g := trainModeCNN(t, cnnTrainMode)
	for _, c := range []struct {
		name, placement, strategy, to string
		gpus                          int
		want                          string // "" = no line
	}{
		{"dp=2,mb=2", "round-robin", "dp=2,mb=2,schedule=1f1b", "torch-plan", 4,
			"export: train mode: 1 BatchNorm2d module (features.1) normalizes with the statistics of micro-batches of 2 samples, not of the batch of 8 (SyncBatchNorm over the replicas, or fewer micro-batches, come closer); 1 Dropout module (features.2) draws random numbers"},
		{"torchtitan", "round-robin", "dp=2", "torchtitan", 2, "export: train mode: 1 BatchNorm2d module (features.1) normalizes with the statistics of micro-batches of 4 samples"},
		{"one GPU, one piece", "single", "", "torch-plan", 1, ""},
		{"module map", "round-robin", "", "module-map", 2, ""},
	} {
		var warn bytes.Buffer
		if _, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: inputs.GraphSpec{Path: g}, Cluster: inputs.ClusterSpec{GPUs: c.gpus}}, Placement: c.placement, Strategy: c.strategy, To: c.to, Warn: &warn}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The last line says what was written (TestExportSaysWhatItWrote).
		got, wrote, _ := strings.Cut(warn.String(), "export: wrote standard output (")
		if wrote == "" {
			t.Errorf("%s: %q, want a line saying what it wrote last", c.name, warn.String())
		}
		if c.want == "" {
			if got != "" {
				t.Errorf("%s: %q, want no line", c.name, got)
			}
			continue
		}
		if !strings.HasPrefix(got, c.want) || strings.Count(got, "\n") != 1 {
			t.Errorf("%s:\n got %q\nwant one line starting %q", c.name, got, c.want)
		}
	}
	// A refusal is its one line, with no train-mode line before it.
	var refused bytes.Buffer
	if _, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: inputs.GraphSpec{Path: g}, Cluster: inputs.ClusterSpec{GPUs: 4}}, Placement: "round-robin", Strategy: "dp=2,mb=2", To: "deepspeed", Out: filepath.Join(t.TempDir(), "ds.json"), Warn: &refused}); err == nil || refused.Len() != 0 {
		t.Errorf("deepspeed with gpipe: %v, %q; want a refusal and no train-mode line", err, refused.String())
	}
	var warn bytes.Buffer
	if _, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: inputs.GraphSpec{Path: torchCNN}, Cluster: inputs.ClusterSpec{GPUs: 4}}, Placement: "round-robin", Strategy: "dp=2,mb=2", To: "torch-plan", Warn: &warn}); err != nil || !strings.HasPrefix(warn.String(), "export: wrote ") || strings.Count(warn.String(), "\n") != 1 {
		t.Errorf("meta file without train_mode: %v, %q; want no error and only the line saying what was written", err, warn.String())
	}
	bad := trainModeCNN(t, []map[string]string{{"module": "features.1", "class": "BatchNorm2d", "effect": "batch-stats"}})
	_, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: inputs.GraphSpec{Path: bad}, Cluster: inputs.ClusterSpec{GPUs: 2}}, Placement: "round-robin", To: "torch-plan"})
	if err == nil || !strings.Contains(err.Error(), `train_mode[0] (module "features.1"): effect "batch-stats", want batch-statistics, random or own-generator`) || strings.Contains(err.Error(), "\n") {
		t.Errorf("unknown effect: %v, want one line naming it", err)
	}
	notList := trainModeCNN(t, "batch-statistics")
	if _, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: inputs.GraphSpec{Path: notList}}, Placement: "single", To: "torch-plan"}); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("train_mode not a list: %v, want one line", err)
	}
}

// TestSearchTrainMode: search on a graph whose meta file lists
// train-mode modules names those its answer's plan changes, in the text
// and in the JSON (train_mode); the answer here is 2 replicas.
func TestSearchTrainMode(t *testing.T) {
	g := trainModeCNN(t, cnnTrainMode)
	rep, err := SearchGraph(context.Background(), GraphSearchOptions{Graph: inputs.GraphSpec{Path: g}, Cluster: inputs.ClusterSpec{GPUs: 4}, Methods: []string{"single"}, Evals: 100, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Result.Decision.Decision()
	if d.Strategy.R() != 2 {
		t.Fatalf("the answer is %s, want 2 replicas", d.Strategy)
	}
	tm := rep.TrainMode
	if tm == nil || tm.Replicas != 2 || len(tm.Modules) != 2 || !strings.HasPrefix(tm.Line, "train mode: 1 BatchNorm2d module (features.1) normalizes with the statistics of micro-batches of 4 samples, not of the batch of 8") {
		t.Fatalf("train mode: %+v", tm)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	// The line is broken at spaces to 120 columns, continuations indented.
	if flat := strings.ReplaceAll(text.String(), "\n  ", " "); !strings.Contains(flat, "\n"+tm.Line+"\n") {
		t.Errorf("the text lacks the line %q:\n%s", tm.Line, text.String())
	}
	for _, l := range strings.Split(text.String(), "\n") {
		if w := utf8.RuneCountInString(l); w > report.MaxWidth {
			t.Errorf("a line %d columns wide: %q", w, l)
		}
	}
	var js bytes.Buffer
	if err := report.JSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var back struct {
		TrainMode struct {
			Line    string `json:"line"`
			Modules []struct {
				Module, Class, Effect string
			} `json:"modules"`
		} `json:"train_mode"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.TrainMode.Line != tm.Line || len(back.TrainMode.Modules) != 2 || back.TrainMode.Modules[1].Effect != "random" {
		t.Errorf("JSON train_mode: %+v", back.TrainMode)
	}
	// Without train_mode in the meta file: none.
	plain, err := SearchGraph(context.Background(), GraphSearchOptions{Graph: inputs.GraphSpec{Path: torchCNN}, Cluster: inputs.ClusterSpec{GPUs: 4}, Methods: []string{"single"}, Evals: 100, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if plain.TrainMode != nil {
		t.Errorf("a meta file without train_mode: %+v", plain.TrainMode)
	}
}
