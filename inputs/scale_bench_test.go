package inputs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/roofline"
)

// chainFile writes a chain of n ops (each reads the one before) as a
// native graph file.
func chainFile(b *testing.B, n int) string {
	b.Helper()
	gb := graph.NewBuilder(fmt.Sprintf("chain%d", n))
	prev := -1
	for i := 0; i < n; i++ {
		op := gb.AddOp(graph.Op{Name: fmt.Sprintf("op%d", i), Class: graph.ClassElementwise, FLOPs: 1e6, BytesRead: 1 << 20, BytesWritten: 1 << 20})
		if prev >= 0 {
			gb.AddTensor(prev, 1<<20, op)
		}
		prev = op
	}
	g, err := gb.Build()
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := graph.Write(&buf, g); err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(b.TempDir(), "chain.json")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkChainDecodeEvaluate reads a chain graph file and evaluates it
// on 2 GPUs, round-robin, with the roofline model: issue 18's scale item
// (2,000,000 ops in at most 20 s and 1.5 GB). Sizes: 100k, 500k, 2M ops
// (-bench 'Chain.*/2000000' for the largest). Reports the peak heap.
func BenchmarkChainDecodeEvaluate(b *testing.B) {
	for _, n := range []int{100_000, 500_000, 2_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			path := chainFile(b, n)
			runtime.GC()
			var ms0 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				g, meta, err := Graph(GraphSpec{Path: path})
				if err != nil {
					b.Fatal(err)
				}
				c, err := Cluster(ClusterSpec{GPUs: 2}, meta)
				if err != nil {
					b.Fatal(err)
				}
				m, err := roofline.NewModel(g, c, roofline.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := roofline.NewEvaluator(m).Evaluate(context.Background(), decision.Decision{Device: decision.RoundRobin(g, 2)}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.TotalAlloc-ms0.TotalAlloc)/float64(b.N)/(1<<20), "MiB-alloc/op")
			b.ReportMetric(float64(ms.Sys)/(1<<20), "MiB-sys")
		})
	}
}
