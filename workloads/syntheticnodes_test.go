package workloads

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/graph"
)

func TestParseNodeRange(t *testing.T) {
	for _, c := range []struct {
		in   string
		want NodeRange
		ok   bool
	}{
		{"50-200", NodeRange{50, 200}, true},
		{"100-400", NodeRange{100, 400}, true},
		{" 400 ", NodeRange{400, 400}, true},
		{"5-5", NodeRange{5, 5}, true},
		{"4-10", NodeRange{}, false},    // too few for Watts-Strogatz
		{"400-100", NodeRange{}, false}, // reversed
		{"100-", NodeRange{}, false},
		{"a-b", NodeRange{}, false},
		{"1-200000", NodeRange{}, false},
	} {
		got, err := ParseNodeRange(c.in)
		if (err == nil) != c.ok || c.ok && got != c.want {
			t.Errorf("ParseNodeRange(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
	if got := SynthNodes.Scale(2); got != (NodeRange{100, 400}) || got.String() != "100-400" {
		t.Errorf("SynthNodes.Scale(2) = %v", got)
	}
}

// TestSyntheticNodes: every graph has its node count (ops less source and
// sink) in the range, and the default range gives SyntheticSet's graphs.
func TestSyntheticNodes(t *testing.T) {
	for _, c := range []struct {
		nodes NodeRange
		seed  uint64
	}{
		{SynthNodes, 1_000_001},
		{NodeRange{100, 400}, 2_000_001},
		{NodeRange{400, 400}, 2_000_001},
		{NodeRange{5, 6}, 3},
	} {
		gs, err := SyntheticSetNodes("all", 8, c.seed, c.nodes)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range gs {
			if n := g.NumOps() - 2; n < c.nodes.Min || n > c.nodes.Max {
				t.Errorf("%v: %s has %d nodes", c.nodes, g.Name(), n)
			}
		}
	}
	def, err := SyntheticSet("all", 8, 1_000_001)
	if err != nil {
		t.Fatal(err)
	}
	same, _ := SyntheticSetNodes("all", 8, 1_000_001, SynthNodes)
	for i := range def {
		var a, b bytes.Buffer
		if err := graph.Write(&a, def[i]); err != nil {
			t.Fatal(err)
		}
		if err := graph.Write(&b, same[i]); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("graph %d: SyntheticSetNodes(SynthNodes) differs from SyntheticSet", i)
		}
	}
	if _, err := SyntheticSetNodes("all", 1, 1, NodeRange{300, 200}); err == nil {
		t.Error("a reversed range was accepted")
	}
}

func TestWriteSyntheticNodes(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSyntheticNodes(dir, "ws", 3, 7, NodeRange{400, 400}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if len(files) != 3 {
		t.Fatalf("%d files, want 3", len(files))
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		g, err := graph.Read(fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if n := g.NumOps() - 2; n != 400 {
			t.Errorf("%s: %d nodes, want 400", f, n)
		}
	}
}
