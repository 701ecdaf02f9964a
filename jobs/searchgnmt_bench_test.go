package jobs

import (
	"context"
	"testing"

	"github.com/placer/placer/inputs"
)

// BenchmarkSearchGNMT8 is the design card's own command, `placer search
// --workload gnmt8 --gpus 8` (76,424 ops, the default budget of 3,271
// evaluations): its bound is 60 CPU s (docs/history.md). One iteration
// is a whole search: run it with -benchtime 1x.
func BenchmarkSearchGNMT8(b *testing.B) {
	o := GraphSearchOptions{Graph: inputs.GraphSpec{Workload: "gnmt8"}, Cluster: inputs.ClusterSpec{GPUs: 8}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SearchGraph(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
}
