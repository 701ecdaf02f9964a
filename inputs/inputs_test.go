package inputs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDetectFormats(t *testing.T) {
	tests := []struct{ path, wantName string }{
		{"../examples/mlp.json", "mlp"},
		{"../workloads/costgraph/testdata/regal_small.pbtxt", "regal_small"},
		{"../workloads/msrfiddle/testdata/small.json", "small"},
	}
	for _, tc := range tests {
		g, _, err := Graph(GraphSpec{Path: tc.path})
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if g.Name() != tc.wantName && !strings.Contains(g.Name(), tc.wantName) {
			t.Errorf("%s: name %q", tc.path, g.Name())
		}
	}
	p := filepath.Join(t.TempDir(), "x.txt")
	os.WriteFile(p, []byte("hello"), 0o644)
	if _, _, err := Graph(GraphSpec{Path: p}); err == nil || !strings.Contains(err.Error(), "cannot tell the graph format") {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := Graph(GraphSpec{Path: "../examples/mlp.json", Format: "costgraph"}); err == nil {
		t.Fatal("a JSON graph read as costgraph: no error")
	}
}

// TestMSRFiddleSamples evaluates every shared msr-fiddle sample with the
// GPU count and memory its file states.
func TestMSRFiddleSamples(t *testing.T) {
	files, _ := filepath.Glob("../../shared/data/msr-fiddle/*.json")
	if len(files) == 0 {
		t.Skip("../shared/data/msr-fiddle not present")
	}
	for _, f := range files {
		g, meta, err := Graph(GraphSpec{Path: f})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		c, err := Cluster(ClusterSpec{}, meta)
		if err != nil {
			t.Fatal(err)
		}
		if c.Devices != meta.Devices || c.Hardware.Memory != meta.Capacity {
			t.Fatalf("%s: cluster %d x %d B, file says %d x %d B", f, c.Devices, c.Hardware.Memory, meta.Devices, meta.Capacity)
		}
		if g.NumOps() == 0 {
			t.Fatalf("%s: no ops", f)
		}
	}
}

func TestStrategies(t *testing.T) {
	g, _, err := Graph(GraphSpec{Path: "../examples/mlp.json"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"single", "round-robin"} {
		d, err := Placement(s, g, 3)
		if err != nil || len(d) != g.NumOps() {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if p, err := Schedule("fifo", g, 2); err != nil || p != nil {
		t.Fatalf("fifo: %v %v", p, err)
	}
	if f, err := Fusion("default", g, 2); err != nil || len(f) != g.NumOps() {
		t.Fatalf("default fusion: %v", err)
	}
	if _, err := Placement("nope", g, 2); err == nil {
		t.Fatal("unknown strategy accepted")
	}
}
