package export

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/workloads/export"
)

// TrainMode is what a plan changes in a PyTorch model's train-mode step
// (docs/torch-plan.md, "Train mode under a plan"): the modules of the
// exporter's meta file's train_mode that the plan changes, and one line
// saying so.
type TrainMode struct {
	Line         string                   `json:"line"`
	Replicas     int                      `json:"replicas"`
	MicroBatches int                      `json:"micro_batches"`
	Stages       int                      `json:"stages"`
	Modules      []export.TrainModeModule `json:"modules"`
}

// TrainModeOf is what a plan of strategy s and stages pipeline stages
// changes among tm's train-mode modules, for a graph of global batch
// batch (0 = unknown); nil when the plan is one piece (one replica, one
// micro-batch, one stage), when tm is nil or lists no module the plan
// changes: batch statistics change when the plan splits the batch
// (SyncBatchNorm's only under micro-batches), random draws whenever the
// plan has more than one piece.
func TrainModeOf(tm *export.TorchMeta, s decision.Strategy, stages, batch int) *TrainMode {
	R, M := s.R(), s.M()
	if tm == nil || (R*M <= 1 && stages <= 1) {
		return nil
	}
	mods := export.ChangedByPlan(tm.TrainMode, R, M)
	if len(mods) == 0 {
		return nil
	}
	return &TrainMode{Line: trainModeLine(mods, R, M, batch), Replicas: R, MicroBatches: M, Stages: stages, Modules: mods}
}

// trainModeLine is one line naming the modules mods (already those the
// plan changes) and what a plan of R replicas x M micro-batches changes
// in each kind, as placer_torch.semantics.plan_lines words it.
func trainModeLine(mods []export.TrainModeModule, R, M, batch int) string {
	of := func(keep func(export.TrainModeModule) bool) []export.TrainModeModule {
		var out []export.TrainModeModule
		for _, m := range mods {
			if keep(m) {
				out = append(out, m)
			}
		}
		return out
	}
	var parts []string
	bn := of(func(m export.TrainModeModule) bool {
		return m.Effect == export.TrainModeBatch && m.Class != export.SyncBatchNorm
	})
	if len(bn) > 0 {
		parts = append(parts, fmt.Sprintf("%s with the statistics of %s (SyncBatchNorm over the replicas, or fewer micro-batches, come closer)",
			countModules(bn, "normalize"), microBatchesOf(batch, R*M, "")))
	}
	sync := of(func(m export.TrainModeModule) bool {
		return m.Effect == export.TrainModeBatch && m.Class == export.SyncBatchNorm
	})
	if len(sync) > 0 {
		parts = append(parts, fmt.Sprintf("%s with the statistics of %s",
			countModules(sync, "normalize"), microBatchesOf(batch, M, " over the replicas")))
	}
	if rnd := of(func(m export.TrainModeModule) bool { return m.Effect == export.TrainModeRandom }); len(rnd) > 0 {
		parts = append(parts, countModules(rnd, "draw")+" random numbers from streams seeded per micro-batch and stage boundary, the same on every rank, not the unsplit model's one stream")
	}
	if own := of(func(m export.TrainModeModule) bool { return m.Effect == export.TrainModeOwnGenerator }); len(own) > 0 {
		their := "their"
		if len(own) == 1 {
			their = "its"
		}
		parts = append(parts, fmt.Sprintf("%s from a torch.Generator of %s own, whose state is each rank's: the runner cannot align %s draws with the unsplit model's",
			countModules(own, "draw"), their, their))
	}
	return "train mode: " + strings.Join(parts, "; ") + ` (docs/torch-plan.md, "Train mode under a plan")`
}

// microBatchesOf says whose statistics a batch split into parts pieces
// normalizes with: "micro-batches of 4 samples, not of the batch of 16"
// (of 4 or 5 when they differ), or, without the batch, "each of the 8
// micro-batches, not of the whole batch"; where follows "micro-batches".
func microBatchesOf(batch, parts int, where string) string {
	if batch <= 0 {
		return fmt.Sprintf("each of the %d micro-batches%s, not of the whole batch", parts, where)
	}
	size := fmt.Sprint(batch / parts)
	if batch%parts != 0 {
		size = fmt.Sprintf("%d or %d", batch/parts, batch/parts+1)
	}
	return fmt.Sprintf("micro-batches%s of %s samples, not of the batch of %d", where, size, batch)
}

// countModules is "20 BatchNorm2d modules (bn1, layer1.0.bn1,
// layer1.0.bn2, ...) normalize", or for one "1 Dropout module (drop)
// draws": the first three modules, their classes, the verb agreeing.
func countModules(mods []export.TrainModeModule, verb string) string {
	var classes, names []string
	for _, m := range mods {
		if !slices.Contains(classes, m.Class) {
			classes = append(classes, m.Class)
		}
		if len(names) < 3 {
			names = append(names, cmp.Or(m.Module, "<root>"))
		}
	}
	list := strings.Join(names, ", ")
	if len(mods) > 3 {
		list += ", ..."
	}
	noun := "modules"
	if len(mods) == 1 {
		noun, verb = "module", verb+"s"
	}
	return fmt.Sprintf("%d %s %s (%s) %s", len(mods), strings.Join(classes, "/"), noun, list, verb)
}
