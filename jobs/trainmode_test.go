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

	"github.com/placer/placer/decision"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/report"
	"github.com/placer/placer/workloads/export"
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

// TestTrainModeLine: the one line, by hand, for each kind of module and
// plan: batch statistics per micro-batch of a replica (4 or 5 samples
// when the batch does not divide), SyncBatchNorm's only under
// micro-batches, random streams whenever the plan has several pieces,
// own generators; nothing for a plan of one piece.
func TestTrainModeLine(t *testing.T) {
	bn := export.TrainModeModule{Module: "bn1", Class: "BatchNorm2d", Effect: export.TrainModeBatch}
	bn2 := export.TrainModeModule{Module: "layer1.0.bn1", Class: "BatchNorm2d", Effect: export.TrainModeBatch}
	sync := export.TrainModeModule{Module: "norm", Class: "SyncBatchNorm", Effect: export.TrainModeBatch}
	drop := export.TrainModeModule{Module: "", Class: "Net", Effect: export.TrainModeRandom}
	gen := export.TrainModeModule{Module: "noise", Class: "Noise", Effect: export.TrainModeOwnGenerator}
	const tail = ` (docs/torch-plan.md, "Train mode under a plan")`
	for _, c := range []struct {
		name   string
		mods   []export.TrainModeModule
		s      decision.Strategy
		stages int
		batch  int
		want   string // "" = no line
	}{
		{"one piece", []export.TrainModeModule{bn, drop}, decision.Strategy{}, 1, 16, ""},
		{"dp=2,mb=2", []export.TrainModeModule{bn, bn2}, decision.Strategy{Replicas: 2, MicroBatches: 2}, 1, 16,
			"train mode: 2 BatchNorm2d modules (bn1, layer1.0.bn1) normalize with the statistics of micro-batches of 4 samples, not of the batch of 16 (SyncBatchNorm over the replicas, or fewer micro-batches, come closer)" + tail},
		{"mb=3 of 10", []export.TrainModeModule{bn}, decision.Strategy{MicroBatches: 3}, 2, 10,
			"train mode: 1 BatchNorm2d module (bn1) normalizes with the statistics of micro-batches of 3 or 4 samples, not of the batch of 10 (SyncBatchNorm over the replicas, or fewer micro-batches, come closer)" + tail},
		{"no batch", []export.TrainModeModule{bn}, decision.Strategy{Replicas: 4}, 1, 0,
			"train mode: 1 BatchNorm2d module (bn1) normalizes with the statistics of each of the 4 micro-batches, not of the whole batch (SyncBatchNorm over the replicas, or fewer micro-batches, come closer)" + tail},
		{"sync, replicas only", []export.TrainModeModule{sync}, decision.Strategy{Replicas: 2}, 1, 16, ""},
		{"sync, micro-batches", []export.TrainModeModule{sync}, decision.Strategy{Replicas: 2, MicroBatches: 4}, 1, 16,
			"train mode: 1 SyncBatchNorm module (norm) normalizes with the statistics of micro-batches over the replicas of 4 samples, not of the batch of 16" + tail},
		{"stages: random only", []export.TrainModeModule{bn, drop}, decision.Strategy{}, 2, 16,
			"train mode: 1 Net module (<root>) draws random numbers from streams seeded per micro-batch and stage boundary, the same on every rank, not the unsplit model's one stream" + tail},
		{"all kinds", []export.TrainModeModule{bn, drop, gen, {Module: "a", Class: "Dropout", Effect: export.TrainModeRandom}, {Module: "b", Class: "DropPath", Effect: export.TrainModeRandom}, {Module: "c", Class: "Dropout", Effect: export.TrainModeRandom}}, decision.Strategy{Replicas: 2}, 1, 8,
			"train mode: 1 BatchNorm2d module (bn1) normalizes with the statistics of micro-batches of 4 samples, not of the batch of 8 (SyncBatchNorm over the replicas, or fewer micro-batches, come closer); " +
				"4 Net/Dropout/DropPath modules (<root>, a, b, ...) draw random numbers from streams seeded per micro-batch and stage boundary, the same on every rank, not the unsplit model's one stream; " +
				"1 Noise module (noise) draws from a torch.Generator of its own, whose state is each rank's: the runner cannot align its draws with the unsplit model's" + tail},
	} {
		n := TrainModeOf(&export.TorchMeta{TrainMode: c.mods}, c.s, c.stages, c.batch)
		got := ""
		if n != nil {
			got = n.Line
		}
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	if TrainModeOf(nil, decision.Strategy{Replicas: 2}, 1, 8) != nil {
		t.Error("no meta file: a train-mode note")
	}
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
		if _, err := Export(ExportOptions{OpGraph: GraphExportOptions{Graph: inputs.GraphSpec{Path: g}, Cluster: inputs.ClusterSpec{GPUs: c.gpus}}, Placement: c.placement, Strategy: c.strategy, To: c.to, Warn: &warn}); err != nil {
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
	if _, err := Export(ExportOptions{OpGraph: GraphExportOptions{Graph: inputs.GraphSpec{Path: g}, Cluster: inputs.ClusterSpec{GPUs: 4}}, Placement: "round-robin", Strategy: "dp=2,mb=2", To: "deepspeed", Out: filepath.Join(t.TempDir(), "ds.json"), Warn: &refused}); err == nil || refused.Len() != 0 {
		t.Errorf("deepspeed with gpipe: %v, %q; want a refusal and no train-mode line", err, refused.String())
	}
	var warn bytes.Buffer
	if _, err := Export(ExportOptions{OpGraph: GraphExportOptions{Graph: inputs.GraphSpec{Path: torchCNN}, Cluster: inputs.ClusterSpec{GPUs: 4}}, Placement: "round-robin", Strategy: "dp=2,mb=2", To: "torch-plan", Warn: &warn}); err != nil || !strings.HasPrefix(warn.String(), "export: wrote ") || strings.Count(warn.String(), "\n") != 1 {
		t.Errorf("meta file without train_mode: %v, %q; want no error and only the line saying what was written", err, warn.String())
	}
	bad := trainModeCNN(t, []map[string]string{{"module": "features.1", "class": "BatchNorm2d", "effect": "batch-stats"}})
	_, err := Export(ExportOptions{OpGraph: GraphExportOptions{Graph: inputs.GraphSpec{Path: bad}, Cluster: inputs.ClusterSpec{GPUs: 2}}, Placement: "round-robin", To: "torch-plan"})
	if err == nil || !strings.Contains(err.Error(), `train_mode[0] (module "features.1"): effect "batch-stats", want batch-statistics, random or own-generator`) || strings.Contains(err.Error(), "\n") {
		t.Errorf("unknown effect: %v, want one line naming it", err)
	}
	notList := trainModeCNN(t, "batch-statistics")
	if _, err := Export(ExportOptions{OpGraph: GraphExportOptions{Graph: inputs.GraphSpec{Path: notList}}, Placement: "single", To: "torch-plan"}); err == nil || strings.Contains(err.Error(), "\n") {
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
