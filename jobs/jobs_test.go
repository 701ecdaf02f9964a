package jobs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/inputs"
	"github.com/placer/placer/workloads"
)

// The 14 graphs of GO's table 2, with that table's device counts (from
// the workloads registry).
var goTable2 = []string{"rnnlm2", "rnnlm4", "rnnlm8", "gnmt2", "gnmt4", "gnmt8", "trxl2", "trxl4", "trxl8",
	"inception_b32", "inception_b64", "amoebanet", "wavenet2x18", "wavenet4x36"}

func TestEvalExpertEveryGOWorkload(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every workload")
	}
	for _, name := range goTable2 {
		spec, ok := workloads.Lookup(name)
		if !ok {
			t.Fatalf("workload %s missing", name)
		}
		e, err := EvalGraph(context.Background(), GraphEvalOptions{
			Graph: inputs.GraphSpec{Workload: name}, Cluster: inputs.ClusterSpec{GPUs: spec.Devices}, Placement: "expert",
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		used := 0
		for _, d := range e.PerDevice {
			if d.Ops > 0 {
				used++
			}
		}
		if used != spec.Devices || e.ColocationViolations != 0 || e.StepTime < e.LowerBound {
			t.Fatalf("%s: %d of %d GPUs used, %d co-location violations, step %v vs bound %v", name, used, spec.Devices, e.ColocationViolations, e.StepTime, e.LowerBound)
		}
	}
}

func TestWorkloadExportRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "trxl2.json")
	g, err := WorkloadExport("trxl2", p, nil)
	if err != nil {
		t.Fatal(err)
	}
	g2, _, err := inputs.Graph(inputs.GraphSpec{Path: p})
	if err != nil {
		t.Fatal(err)
	}
	if g2.NumOps() != g.NumOps() || g2.NumTensors() != g.NumTensors() {
		t.Fatalf("round trip: %d/%d ops", g2.NumOps(), g.NumOps())
	}
	dir := t.TempDir()
	if err := WorkloadSynth(dir, "er", 12, 3); err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.Walk(dir, func(_ string, info os.FileInfo, _ error) error {
		if info != nil && !info.IsDir() {
			n++
		}
		return nil
	})
	if n != 12 {
		t.Fatalf("%d synthetic files, want 12", n)
	}
}

// BenchmarkEvalGNMT8Expert is `placer eval --workload gnmt8 --gpus 8
// --placement expert` end to end: build the graph, compile the model,
// simulate, report.
func BenchmarkEvalGNMT8Expert(b *testing.B) {
	for b.Loop() {
		if _, err := EvalGraph(context.Background(), GraphEvalOptions{
			Graph: inputs.GraphSpec{Workload: "gnmt8"}, Cluster: inputs.ClusterSpec{GPUs: 8}, Placement: "expert",
		}); err != nil {
			b.Fatal(err)
		}
	}
}
