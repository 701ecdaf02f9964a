package sizing

import (
	"context"
	"testing"
)

// benchClusters are 20 candidates: four presets, sizes from 8 GPUs
// (one node) to 100,000 (12,500 nodes).
const benchClusters = "dgx-h100:1,1024,2048,5000,12500 dgx-h200:1,1024,2048,5000,12500 dgx-b200:1,1024,2048,5000,12500 dgx-b300:1,1024,2048,5000,12500"

// BenchmarkSize20 sizes Llama 3.1 405B's pre-training (15.6T tokens at
// seq 8192, a global batch of 2,000 sequences: 16.4M tokens, Llama 3's
// 16M rounded to a count that 100,000 GPUs divide) on 20 candidates;
// docs/sizing.md, Speed, has what it measured (the aim: under 10 CPU s).
func BenchmarkSize20(b *testing.B) {
	o := Options{Workload: "llama3.1-405b:seq=8192,batch=2000", Tokens: 15.6e12, Clusters: benchClusters}
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
