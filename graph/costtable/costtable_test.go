package costtable

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/graph"
)

const dir = "../testdata/profile"

func readGraph(t *testing.T, name string) *graph.Graph {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := graph.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestFillSecondGraph: the table torchexport --profile --cost-table wrote
// from the CPU run of the zoo's cnn fills the ops of the same model
// exported without --profile (a second graph, as on a machine without
// the device): every op the profile measured gets a time, an op whose key
// occurs once in the step gets exactly the profiled graph's time, and the
// unmatched ops get none.
func TestFillSecondGraph(t *testing.T) {
	tab, err := Read(filepath.Join(dir, "cnn-cpu.costs.json"))
	if err != nil {
		t.Fatal(err)
	}
	dev, err := tab.Device("")
	if err != nil {
		t.Fatal(err)
	}
	if dev != "cpu: AMD EPYC, 2 threads" {
		t.Errorf("device %q", dev)
	}
	prof, plain := readGraph(t, "cnn-cpu.json"), readGraph(t, "cnn.json")
	for i := range plain.NumOps() {
		if plain.Op(i).HasTime {
			t.Fatalf("%s: the unprofiled export has a time", plain.Op(i).Name)
		}
	}
	filled, n, err := tab.Fill(plain, dev)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]int{}
	for i := range prof.NumOps() {
		keys[KeyOf(prof.Op(i), dev).text()]++
	}
	measured := 0
	for i := range prof.NumOps() {
		p, f := prof.Op(i), filled.Op(i)
		if p.Name != f.Name {
			t.Fatalf("op %d: %s vs %s: the two exports differ", i, p.Name, f.Name)
		}
		if p.HasTime {
			measured++
		}
		if p.HasTime != f.HasTime {
			t.Errorf("%s: filled %v, profiled %v", p.Name, f.HasTime, p.HasTime)
			continue
		}
		if p.HasTime && keys[KeyOf(p, dev).text()] == 1 && f.Time != p.Time {
			t.Errorf("%s: filled %v s, profiled %v s", p.Name, f.Time, p.Time)
		}
	}
	if n != measured || n != 98 {
		t.Errorf("filled %d ops, the profile measured %d (want 98)", n, measured)
	}
	// Hand-checked: the classifier's forward addmm, once in the step.
	for i := range filled.NumOps() {
		if op := filled.Op(i); op.Name == "classifier/addmm" && op.Time != 4.738050000008661e-05 {
			t.Errorf("classifier/addmm: %v s, want 4.738050000008661e-05", op.Time)
		}
	}
	if plain.Op(13).HasTime {
		t.Error("Fill changed its input graph")
	}
}

func TestDevice(t *testing.T) {
	tab, err := Read(filepath.Join(dir, "cnn-cpu.costs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Device("NVIDIA H100 80GB HBM3"); !errors.Is(err, ErrDevice) {
		t.Errorf("another device: %v, want ErrDevice", err)
	}
	g := readGraph(t, "cnn.json")
	if _, n, err := tab.Fill(g, "NVIDIA H100 80GB HBM3"); err != nil || n != 0 {
		t.Errorf("another device's keys: filled %d (%v), want 0", n, err)
	}
}

func TestReadBad(t *testing.T) {
	tmp := t.TempDir()
	for name, text := range map[string]string{
		"format":   `{"format": "placer-graph", "version": 1, "entries": []}`,
		"version":  `{"format": "placer-cost-table", "version": 9, "entries": []}`,
		"negative": `{"format": "placer-cost-table", "version": 1, "entries": [{"key": {"device": "d", "type": "mm"}, "time_s": -1}]}`,
		"syntax":   `{"format": `,
	} {
		p := filepath.Join(tmp, name+".json")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(p); err == nil {
			t.Errorf("%s: read without error", name)
		}
	}
}
