package inputs

import "testing"

// TestWorldOf: the workload alone decides the world: a built-in op graph,
// a graph file or an ops profile's graph (no workload) is an op graph; a
// transformer by its shape (gpt:, llama:, hf:, any case) or a preset with
// its run is at cluster scale.
func TestWorldOf(t *testing.T) {
	for _, c := range []struct {
		workload string
		want     World
	}{
		{"trxl2", OpGraph},
		{"gnmt8", OpGraph},
		{"", OpGraph},     // a graph file, or an ops profile's graph
		{"gpt2", OpGraph}, // a name, not gpt:
		{"gpt:layers=2,hidden=256,heads=4,seq=128,vocab=1000,batch=8", ClusterScale},
		{"LLAMA:layers=2", ClusterScale},
		{"hf:x/config.json:seq=4096,batch=512", ClusterScale},
		{"llama3.1-405b:seq=8192,batch=2048", ClusterScale},
		{"qwen3-30b-a3b", ClusterScale},
	} {
		if got := WorldOf(c.workload); got != c.want {
			t.Errorf("WorldOf(%q) = %s, want %s", c.workload, got, c.want)
		}
	}
}
