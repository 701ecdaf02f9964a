package plans

import (
	"reflect"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/workloads/export"
	"github.com/placer/placer/workloads/export/internal/exporttest"
)

// TestPlanFormats: each format's writer is read back by its reader, the
// file's format name telling which; the documented examples read; a
// transformer plan of the old spelling (placer-torch-plan version 2)
// reads as a transformer plan.
func TestPlanFormats(t *testing.T) {
	tp, err := NewTransformerPlan(transformer.GPT(4, 32, 4, 8, 64, 8),
		plan.Strategy{Tensor: 2, Pipeline: 2, Replicas: 2, MicroBatchSize: 2, MicroBatches: 2, Schedule: decision.OneFOneB, SequenceParallel: true}, 8)
	if err != nil {
		t.Fatal(err)
	}
	mp := &export.TorchPlan{Format: export.TorchPlanFormat, Version: export.TorchPlanVersion, Graph: "g", Batch: 8, Devices: 2, GPUs: 4,
		Replicas: 2, MicroBatches: 4, Schedule: "1f1b",
		Stages:      []export.TorchStage{{Stage: 0, Device: 1, Modules: []string{"a"}}, {Stage: 1, Device: 0, Modules: []string{"b"}}},
		SplitPoints: map[string]string{"b": "BEGINNING"}}
	for _, c := range []struct {
		plan export.Plan
		want string
	}{{mp, export.TorchPlanFormat}, {&tp, export.TransformerPlanFormat}} {
		data, err := c.plan.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if f, err := export.DetectPlan(data); err != nil || f.Name != c.want {
			t.Errorf("%s: detected %q, %v", c.want, f.Name, err)
		}
		got, err := export.DecodePlan(data)
		if err != nil || !reflect.DeepEqual(got, c.plan) || got.PlanFormat() != c.want {
			t.Errorf("%s: read back %+v, %v", c.want, got, err)
		}
	}
	for i, data := range exporttest.PlanExamples(t, "../../../docs/torch-plan.md") {
		p, err := export.DecodePlan(data)
		if err != nil || p.PlanFormat() != []string{export.TorchPlanFormat, export.TransformerPlanFormat, export.TransformerPlanFormat}[i] {
			t.Errorf("docs/torch-plan.md example %d: %v", i, err)
		}
	}
	tp.Format, tp.Version = export.TorchPlanFormat, 2
	old, _ := tp.Encode()
	got, err := export.DecodePlan(old)
	if err != nil || !reflect.DeepEqual(got, &tp) {
		t.Errorf("old spelling: %+v, %v", got, err)
	}
	if _, err := export.DecodeTorchPlan(old); err == nil {
		t.Error("old-spelling transformer plan read as a module plan")
	}
	for _, c := range []struct{ data, want string }{
		{`{"format": "placer-torch-plan", "version": 3}`, `torch plan: format "placer-torch-plan" version 3 is none of placer-torch-plan version 1, placer-transformer-plan version 1 (placer export --to torch-plan)`},
		{`{"format": "placer-transformer-plan", "version": 2}`, `is none of`},
		{`[1]`, `torch plan: `},
		{strings.Replace(string(old), `"tensor": 2`, `"tensor": 3`, 1), `transformer plan: gpus 8 is not tensor x pipeline x replicas = 3 x 2 x 2`},
		{strings.Replace(string(old), `"layers": [`, `"layers": [9, `, 1), `transformer plan: stage 0: layer 9, want 0`},
		{strings.Replace(string(old), `"tied"`, `"tide"`, 1), `unknown field "tide"`},
	} {
		_, err := export.DecodePlan([]byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%.60s: %v, want %s", c.data, err, c.want)
		}
	}
}

// FuzzDecodePlan checks that no input makes the plan readers panic, that
// every error is one line, and that every plan they read is written and
