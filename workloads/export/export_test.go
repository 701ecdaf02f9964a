package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
)

// tiny is a hand-made exported graph: input x; module a (a Parameter op
// and a forward op); module b (a Parameter op, a forward op, an optimizer
// op); root "" (the loss).
func tiny(t *testing.T) (*graph.Graph, *TorchMeta) {
	t.Helper()
	b := graph.NewBuilder("tiny")
	ops := []struct {
		name, module, phase string
		flops               float64
		param               int64
	}{
		{"input0", "", "input", 0, 0},
		{"param:a.weight", "a", "parameter", 0, 400},
		{"a/mm", "a", "forward", 1000, 0},
		{"param:b.weight", "b", "parameter", 0, 40},
		{"b/mm", "b", "forward", 100, 0},
		{"model/loss", "", "forward", 10, 0},
		{"b/adam:weight/add_", "b", "optimizer", 10, 0},
	}
	m := &TorchMeta{Format: TorchMetaFormat, Version: 1}
	for _, o := range ops {
		b.AddOp(graph.Op{Name: o.name, FLOPs: o.flops, ParamBytes: o.param})
		m.Ops = append(m.Ops, TorchOp{Name: o.name, Module: o.module, Phase: o.phase})
	}
	b.AddTensor(0, 8, 2)
	b.AddTensor(1, 8, 2)
	b.AddTensor(2, 8, 4)
	b.AddTensor(3, 8, 4)
	b.AddTensor(4, 8, 5)
	b.AddTensor(5, 8, 6)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g, m
}

func TestModuleMap(t *testing.T) {
	g, meta := tiny(t)
	for _, c := range []struct {
		name    string
		dev     []int
		modules map[string]int
		split   map[string]string
	}{
		// a's state on 0, b's on 1, the loss on 1: a two-stage pipeline
		// split at b.
		{"pipeline", []int{0, 0, 0, 1, 1, 1, 1}, map[string]int{"": 1, "a": 0, "b": 1}, map[string]string{"b": "BEGINNING"}},
		// Everything on one device: one stage, no split points.
		{"single", []int{0, 0, 0, 0, 0, 0, 0}, map[string]int{"": 0, "a": 0, "b": 0}, nil},
		// b's state on 0 though its matmul runs on 1: the module follows
		// its parameters; a and b both on 0 is one stage.
		{"state decides", []int{1, 0, 0, 0, 1, 1, 0}, map[string]int{"": 1, "a": 0, "b": 0}, nil},
	} {
		mm, err := NewModuleMap(g, meta, c.dev, 2)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(mm.Modules) != len(c.modules) {
			t.Errorf("%s: modules %v, want %v", c.name, mm.Modules, c.modules)
		}
		for k, v := range c.modules {
			if got, ok := mm.Modules[k]; !ok || got != v {
				t.Errorf("%s: module %q on %d, want %d", c.name, k, got, v)
			}
		}
		switch {
		case c.split == nil && mm.Pipeline != nil:
			t.Errorf("%s: pipeline %+v, want none", c.name, mm.Pipeline)
		case c.split != nil && (mm.Pipeline == nil || len(mm.Pipeline.SplitPoints) != len(c.split)):
			t.Errorf("%s: pipeline %+v, want split points %v", c.name, mm.Pipeline, c.split)
		case c.split != nil:
			for k, v := range c.split {
				if mm.Pipeline.SplitPoints[k] != v {
					t.Errorf("%s: split points %v, want %v", c.name, mm.Pipeline.SplitPoints, c.split)
				}
			}
		}
	}
	// Not contiguous: a on 0, b on 1, then a module on 0 again.
	b := graph.NewBuilder("three")
	m := &TorchMeta{Format: TorchMetaFormat, Version: 1}
	for _, o := range []struct{ name, module string }{{"a/x", "a"}, {"b/x", "b"}, {"c/x", "c"}} {
		b.AddOp(graph.Op{Name: o.name})
		m.Ops = append(m.Ops, TorchOp{Name: o.name, Module: o.module, Phase: "forward"})
	}
	g3, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	mm, err := NewModuleMap(g3, m, []int{0, 1, 0}, 2)
	if err != nil || mm.Pipeline != nil {
		t.Errorf("0, 1, 0: pipeline %+v (%v), want none", mm.Pipeline, err)
	}
	if _, err := NewModuleMap(g, meta, []int{0, 0}, 2); err == nil {
		t.Error("short placement accepted")
	}
	if _, err := NewModuleMap(g, meta, []int{0, 0, 0, 0, 0, 0, 2}, 2); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("device 2 of 2: %v", err)
	}
}

func TestDeviceMap(t *testing.T) {
	g, _ := tiny(t)
	m, err := DeviceMap(g, []int{0, 1, 2, 3, 0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if m["a/mm"] != "/device:GPU:2" || m["input0"] != "/device:GPU:0" || len(m) != g.NumOps() {
		t.Errorf("device map %v", m)
	}
	if _, err := DeviceMap(g, []int{0}); err == nil {
		t.Error("short placement accepted")
	}
}

func TestReadTorchMeta(t *testing.T) {
	g, _ := tiny(t)
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "m.json")
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ops := `[{"name":"input0"},{"name":"param:a.weight"},{"name":"a/mm"},{"name":"param:b.weight"},{"name":"b/mm"},{"name":"model/loss"},{"name":"b/adam:weight/add_"}]`
	if _, err := ReadTorchMeta(write(`{"format":"placer-torch-meta","version":1,"ops":`+ops+`}`), g); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{`{"format":"other","ops":[]}`, `format "other"`},
		{`{"format":"placer-torch-meta","ops":[{"name":"input0"}]}`, "1 ops, graph tiny has 7"},
		{`{"format":"placer-torch-meta","ops":` + strings.Replace(ops, "a/mm", "a/mv", 1) + `}`, `ops[2] is "a/mv"`},
		{`{"format":`, "export: "},
	} {
		_, err := ReadTorchMeta(write(c.file), g)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.file, err, c.want)
		}
	}
}
