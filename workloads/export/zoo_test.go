package export

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/timed"
)

// zooDir is where `make zoo` writes the exported models.
const zooDir = "../../out/zoo"

func zooFiles(tb testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join(zooDir, "*.json"))
	var graphs []string
	for _, f := range files {
		if filepath.Ext(f[:len(f)-len(".json")]) != ".meta" {
			graphs = append(graphs, f)
		}
	}
	if len(graphs) == 0 {
		tb.Skipf("no zoo graphs in %s (make zoo)", zooDir)
	}
	return graphs
}

// TestZoo checks every zoo graph: it imports in under a second, every op
// has a shape and non-negative costs (dtypes and the rest are checked by
// graph.Decode), the meta file matches, and the parameter bytes held by the
// Parameter ops are the meta file's parameters plus optimizer state.
func TestZoo(t *testing.T) {
	for _, path := range zooFiles(t) {
		start := time.Now()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := graph.Decode(data)
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		timed.Bound(t, path+"'s import", took, time.Second)
		for _, op := range g.Ops() {
			if op.Shape == nil || op.FLOPs < 0 || op.BytesRead < 0 || op.BytesWritten < 0 || op.ParamBytes < 0 {
				t.Fatalf("%s: op %+v", path, op)
			}
		}
		meta, err := ReadTorchMeta(path[:len(path)-len(".json")]+".meta.json", g)
		if err != nil {
			t.Fatal(err)
		}
		var held int64
		for i, m := range meta.Ops {
			if m.Phase == "parameter" && g.Op(i).Type == "Parameter" {
				held += g.Op(i).ParamBytes
			}
		}
		if want := meta.ParamBytes + meta.OptimizerStateBytes; held != want {
			t.Errorf("%s: Parameter ops hold %d B, want %d (parameters + optimizer state)", path, held, want)
		}
		if meta.OptimizerSlotBytes != 2*meta.ParamBytes {
			t.Errorf("%s: Adam slots %d B, want twice the %d B of parameters", path, meta.OptimizerSlotBytes, meta.ParamBytes)
		}
		t.Logf("%s: %d ops, %d tensors, %.1f GFLOPs, %d parameter bytes, imported in %v", filepath.Base(path), g.NumOps(), g.NumTensors(),
			g.Stats().FLOPs/1e9, meta.ParamBytes, took.Round(time.Millisecond))
	}
}

// BenchmarkZooImport reads each zoo graph (the target: under 1 s).
func BenchmarkZooImport(b *testing.B) {
	for _, path := range zooFiles(b) {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(path), func(b *testing.B) {
			for range b.N {
				if _, err := graph.Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
