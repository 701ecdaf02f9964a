package jobs

import (
	"context"
	"testing"

	"github.com/placer/placer/inputs"
)

// BenchmarkSearch is the cost of `placer search` itself on trxl4 at 4
// V100s with 1,500 evaluations: the quick baselines, the fewer-GPU rows,
// the strategies' rows, the search and the joint space, and the report
// (the search's own cost, unchanged or lower after it moved into methods:
// docs/history.md, "The search's own cost").
func BenchmarkSearch(b *testing.B) {
	o := GraphSearchOptions{Graph: inputs.GraphSpec{Workload: "trxl4"}, Cluster: inputs.ClusterSpec{GPUs: 4}, Evals: 1500, Seed: 3}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SearchGraph(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
}
