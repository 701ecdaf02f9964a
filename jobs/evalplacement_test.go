package jobs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/inputs"
	exportjob "github.com/placer/placer/jobs/export"
)

// TestEvalReadsPlacementFiles: placer eval takes the device count from
// the placement file it is given (a result file made for 4 GPUs, an
// msr-fiddle expert file with "cpus" and two accelerators) without --gpus,
// and scores the file's placement.
func TestEvalReadsPlacementFiles(t *testing.T) {
	graphPath := "../workloads/msrfiddle/testdata/small.json"
	dir := t.TempDir()
	expert := filepath.Join(dir, "expert.json")
	if _, err := exportjob.Run(exportjob.Options{OpGraph: exportjob.GraphOptions{Graph: inputs.GraphSpec{Path: graphPath}, Cluster: inputs.ClusterSpec{GPUs: 2}}, Placement: "round-robin", To: "msr-fiddle", Out: expert}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(expert)
	var e map[string]any
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatal(err)
	}
	e["cpus"] = []any{map[string]any{"nodes": []any{}}}
	data, _ = json.Marshal(e)
	os.WriteFile(expert, data, 0o644)
	ev, err := EvalGraph(context.Background(), GraphEvalOptions{Graph: inputs.GraphSpec{Path: graphPath}, Placement: expert})
	if err != nil {
		t.Fatalf("eval of an msr-fiddle expert file: %v", err)
	}
	rr, err := EvalGraph(context.Background(), GraphEvalOptions{Graph: inputs.GraphSpec{Path: graphPath}, Cluster: inputs.ClusterSpec{GPUs: 2}, Placement: "round-robin", Fusion: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Devices != 2 || ev.StepTime != rr.StepTime {
		t.Errorf("expert file: %d devices, %v s; want 2 and round-robin's %v s (with default fusion)", ev.Devices, ev.StepTime, rr.StepTime)
	}
	res := filepath.Join(dir, "r.json")
	if _, err := SearchGraph(context.Background(), GraphSearchOptions{Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}, Cluster: inputs.ClusterSpec{GPUs: 4}, Evals: 50, Out: res}); err != nil {
		t.Fatal(err)
	}
	ev, err = EvalGraph(context.Background(), GraphEvalOptions{Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}, Placement: res})
	if err != nil || ev.Devices != 4 {
		t.Errorf("eval of a 4-GPU result file without --gpus: %v, %d devices", err, ev.Devices)
	}
}
