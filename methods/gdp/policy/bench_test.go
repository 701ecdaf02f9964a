package policy

import (
	"fmt"
	"sync"
	"syscall"
	"testing"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/nn/nntest"
)

var benchGraphs sync.Map

func benchGraph(b testing.TB, n int) *graph.Graph {
	if g, ok := benchGraphs.Load(n); ok {
		return g.(*graph.Graph)
	}
	g, err := nntest.RandomDAG(fmt.Sprintf("dag%d", n), n, 0.3, uint64(n))
	if err != nil {
		b.Fatal(err)
	}
	benchGraphs.Store(n, g)
	return g
}

func benchForward(b *testing.B, n int, cfg *Config, backward bool) {
	benchPass(b, n, cfg, backward, false)
}

func benchPass(b *testing.B, n int, cfg *Config, backward, infer bool) {
	g := benchGraph(b, n)
	p, err := New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	in, err := p.Prepare(g, 8, nil)
	if err != nil {
		b.Fatal(err)
	}
	step := func() {
		run := p.Forward
		if infer {
			run = p.Infer
		}
		out, err := run(in)
		if err != nil {
			b.Fatal(err)
		}
		if backward {
			d := out.Argmax()
			if err := out.AddLogProbGrad(d, 1); err != nil {
				b.Fatal(err)
			}
			out.AddEntropyGrad(0.1)
			out.AddValueGrad(1)
			if err := out.Backward(); err != nil {
				b.Fatal(err)
			}
		}
		out.Release()
	}
	// Warm up: the first pass allocates the activation arena, the second
	// the single chunk it is consolidated into.
	step()
	step()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for b.Loop() {
		step()
	}
	// On a shared machine wall time depends on the neighbours; the
	// process's CPU time per pass (user + system, all threads) does not.
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(in.NumNodes()), "nodes")
}

func BenchmarkForward2k(b *testing.B)          { benchForward(b, 2000, nil, false) }
func BenchmarkForward84k(b *testing.B)         { benchForward(b, 84000, nil, false) }
func BenchmarkInfer84k(b *testing.B)           { benchPass(b, 84000, nil, false, true) }
func BenchmarkInfer2k(b *testing.B)            { benchPass(b, 2000, nil, false, true) }
func BenchmarkForwardBackward84k(b *testing.B) { benchForward(b, 84000, nil, true) }
func BenchmarkForward84kCoarsened(b *testing.B) {
	benchForward(b, 84000, &Config{Coarsen: true}, false)
}
func BenchmarkForwardBackward84kCoarsened(b *testing.B) {
	benchForward(b, 84000, &Config{Coarsen: true}, true)
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
