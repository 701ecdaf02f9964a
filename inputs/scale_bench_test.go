package inputs

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// writeChain writes a chain of n ops (each reads the one before) as a
// native graph file, byte for byte what graph.Write writes for it
// (TestWriteChain), without building the graph first: 2,000,000 ops in a
// few seconds instead of half a minute and 3 GB.
func writeChain(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, "{\n \"format\": %q,\n \"version\": 1,\n \"name\": \"chain%d\",\n \"ops\": [\n", graph.FormatName, n) // a graph without batch information is version 1
	for i := range n {
		sep := ","
		if i == n-1 {
			sep = ""
		}
		fmt.Fprintf(bw, "  {\n   \"name\": \"op%d\",\n   \"class\": \"elementwise\",\n   \"dtype\": \"f32\",\n   \"flops\": 1000000,\n   \"bytes_read\": 1048576,\n   \"bytes_written\": 1048576\n  }%s\n", i, sep)
	}
	bw.WriteString(" ],\n \"tensors\": [")
	if n < 2 {
		bw.WriteString("]\n}\n")
		return bw.Flush()
	}
	bw.WriteString("\n")
	for i := range n - 1 {
		sep := ","
		if i == n-2 {
			sep = ""
		}
		fmt.Fprintf(bw, "  {\n   \"producer\": \"op%d\",\n   \"consumers\": [\n    \"op%d\"\n   ],\n   \"bytes\": 1048576\n  }%s\n", i, i+1, sep)
	}
	bw.WriteString(" ]\n}\n")
	return bw.Flush()
}

// TestWriteChain: the benchmark's chain file is what graph.Write writes
// for the chain built op by op.
func TestWriteChain(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		gb := graph.NewBuilder(fmt.Sprintf("chain%d", n))
		for i := range n {
			op := gb.AddOp(graph.Op{Name: fmt.Sprintf("op%d", i), Class: graph.ClassElementwise, FLOPs: 1e6, BytesRead: 1 << 20, BytesWritten: 1 << 20})
			if i > 0 {
				gb.AddTensor(op-1, 1<<20, op)
			}
		}
		g, err := gb.Build()
		if err != nil {
			t.Fatal(err)
		}
		var want, got bytes.Buffer
		if err := graph.Write(&want, g); err != nil {
			t.Fatal(err)
		}
		if err := writeChain(&got, n); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("n = %d: writeChain wrote\n%s\ngraph.Write\n%s", n, got.String(), want.String())
		}
	}
}

var chainFiles = struct {
	sync.Mutex
	dir   string
	paths map[int]string
}{paths: map[int]string{}}

// TestMain removes the benchmark's chain files.
func TestMain(m *testing.M) {
	code := m.Run()
	if chainFiles.dir != "" {
		os.RemoveAll(chainFiles.dir)
	}
	os.Exit(code)
}

// chainFile returns the path of a chain file of n ops, written once per
// process (the benchmark function runs more than once per size).
func chainFile(b *testing.B, n int) string {
	b.Helper()
	chainFiles.Lock()
	defer chainFiles.Unlock()
	if p, ok := chainFiles.paths[n]; ok {
		return p
	}
	if chainFiles.dir == "" {
		dir, err := os.MkdirTemp("", "placer-chain-")
		if err != nil {
			b.Fatal(err)
		}
		chainFiles.dir = dir
	}
	p := filepath.Join(chainFiles.dir, fmt.Sprintf("chain%d.json", n))
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if err := writeChain(f, n); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	chainFiles.paths[n] = p
	return p
}

// decodeEvaluate is the work measured: read the graph file, evaluate it
// on 2 GPUs, round-robin, with the roofline model.
func decodeEvaluate(path string) error {
	g, meta, err := Graph(GraphSpec{Path: path})
	if err != nil {
		return err
	}
	c, err := Cluster(ClusterSpec{GPUs: 2}, meta)
	if err != nil {
		return err
	}
	m, err := roofline.NewModel(g, c, roofline.Options{})
	if err != nil {
		return err
	}
	_, err = roofline.NewEvaluator(m).Evaluate(context.Background(), decision.Decision{Device: decision.RoundRobin(g, 2)})
	return err
}

// chainChildEnv names the graph file that TestChainChild decodes and
// evaluates in a process of its own.
const chainChildEnv = "PLACER_CHAIN_CHILD"

// TestChainChild is BenchmarkChainDecodeEvaluate's child process: with
// PLACER_CHAIN_CHILD set it decodes and evaluates that file and prints
// the seconds it took; otherwise it does nothing.
func TestChainChild(t *testing.T) {
	path := os.Getenv(chainChildEnv)
	if path == "" {
		t.Skip("run by BenchmarkChainDecodeEvaluate")
	}
	start := time.Now()
	if err := decodeEvaluate(path); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("chain-child-seconds %.6f\n", time.Since(start).Seconds())
}

// BenchmarkChainDecodeEvaluate reads a chain graph file and evaluates it
// on 2 GPUs, round-robin, with the roofline model: the project's scale
// bound (2,000,000 ops in at most 20 s and 1.5 GB; docs/history.md,
// "The 2,000,000-op chain"). Sizes: 100k, 500k, 2M ops
// (-bench 'Chain.*/2000000' for the largest). Each run is a process of
// its own (this test binary, TestChainChild), so that its peak resident
// memory is the work's alone, not the file writer's or an earlier run's:
// ns/op is the decoding and evaluation as timed in the child,
// peak-RSS-MiB the largest of the children's maximum resident set sizes
// and cpu-s/op their user and system time (getrusage; on a shared machine
// steadier than ns/op), s/op-process the child's whole life, start-up
// included.
func BenchmarkChainDecodeEvaluate(b *testing.B) {
	for _, n := range []int{100_000, 500_000, 2_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			path := chainFile(b, n)
			b.ResetTimer()
			var work, life, cpu time.Duration
			var peak int64
			for range b.N {
				cmd := exec.Command(os.Args[0], "-test.run=^TestChainChild$", "-test.count=1", "-test.v")
				cmd.Env = append(os.Environ(), chainChildEnv+"="+path)
				start := time.Now()
				out, err := cmd.CombinedOutput()
				life += time.Since(start)
				if err != nil {
					b.Fatalf("child: %v\n%s", err, out)
				}
				var secs float64
				i := bytes.Index(out, []byte("chain-child-seconds "))
				if i < 0 {
					b.Fatalf("child printed no time:\n%s", out)
				}
				if _, err := fmt.Sscan(string(out[i+len("chain-child-seconds "):]), &secs); err != nil {
					b.Fatal(err)
				}
				work += time.Duration(secs * 1e9)
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					peak = max(peak, ru.Maxrss) // KiB on Linux
					cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(work.Nanoseconds())/float64(b.N), "ns/op")
			b.ReportMetric(life.Seconds()/float64(b.N), "s/op-process")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
			b.ReportMetric(float64(peak)*1024/float64(n), "peak-RSS-B/graph-op")
		})
	}
}
