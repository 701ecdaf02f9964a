package sizing

import (
	"context"
	"testing"
)

// benchClusters are 20 candidates: five presets, sizes from 8 GPUs
// (one DGX node) to 100,000 (12,500 nodes).
const benchClusters = "dgx-h100:1,16,128,1024,12500 dgx-h200:1,16,128,1024,12500 dgx-b200:1,16,128,1024,12500 gb200-nvl72:1,4,32,256,1389"

// BenchmarkSize20 sizes Llama 3.1 405B's pre-training (15.6T tokens at
// seq 8192, a global batch of 6,250 sequences: 51M tokens, which
// 100,000 GPUs divide) on 20 candidates; issue 94 asks under 10 CPU s.
func BenchmarkSize20(b *testing.B) {
	o := Options{Workload: "llama3.1-405b:seq=8192,batch=6250", Tokens: 15.6e12, Clusters: benchClusters}
	for b.Loop() {
		s, err := Run(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Candidates) != 20 {
			b.Fatalf("%d candidates, want 20", len(s.Candidates))
		}
		b.ReportMetric(s.CPU, "cpu-s/op")
	}
}
