package export

import (
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/workloads/export"
)

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
