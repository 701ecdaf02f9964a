package roofline

import (
	"bytes"
	"os"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// profiledCNN is the zoo's cnn at batch 8 as torchexport --profile wrote
// it from a CPU run (graph/testdata/profile: 10 steps on 2 cores of an
// AMD EPYC, torch 2.14.1).
func profiledCNN(t *testing.T) *graph.Graph {
	t.Helper()
	f, err := os.Open("../../graph/testdata/profile/cnn-cpu.json")
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

func opNamed(t *testing.T, g *graph.Graph, name string) int {
	t.Helper()
	for i := range g.NumOps() {
		if g.Op(i).Name == name {
			return i
		}
	}
	t.Fatalf("graph %s has no op %q", g.Name(), name)
	return -1
}

// TestProfileIngested: the recorded profile's times are on the ops they
// were measured for (hand-checked against the exporter's output), the ops
// it could not match and the state ops have none, and the roofline model
// takes the measured times where there are some and its own estimate
// elsewhere.
func TestProfileIngested(t *testing.T) {
	g := profiledCNN(t)
	h, err := Preset("h100")
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCluster(h, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	m := mustModel(t, g, c, Options{})
	for _, w := range []struct {
		name string
		time float64 // seconds, from the exporter's run (its printout of the graph)
	}{
		{"features.0/convolution", 0.0072159575000000226},
		{"classifier/addmm", 4.738050000008661e-05},
		{"features.4/bwd/convolution_backward", 0.012545611499999998},
	} {
		i := opNamed(t, g, w.name)
		op := g.Op(i)
		if !op.HasTime || op.Time != w.time {
			t.Errorf("%s: time %v (measured %v), want %v", w.name, op.Time, op.HasTime, w.time)
		}
		if m.OpTime(i) != w.time {
			t.Errorf("%s: the model's time %v, want the measured %v", w.name, m.OpTime(i), w.time)
		}
	}
	measured, unmatched := 0, 0
	for i := range g.NumOps() {
		op := g.Op(i)
		switch {
		case op.Type == "Input" || op.Type == "Parameter" || op.Type == "Buffer":
			if op.HasTime {
				t.Errorf("%s: a state op with a measured time", op.Name)
			}
		case op.HasTime:
			measured++
			if op.HasDispatch {
				t.Errorf("%s: a CPU run's op with a dispatch time", op.Name)
			}
		default:
			unmatched++
			if op.Type != "new_empty_strided" && op.Type != "copy_" {
				t.Errorf("%s (%s): not matched to the profile", op.Name, op.Type)
			}
			want := h.Launch + float64(op.BytesRead+op.BytesWritten)/(h.MemBandwidth*h.MemEff[op.Class])
			if got := m.OpTime(i); !near(got, want) {
				t.Errorf("%s: unmeasured op's time %v, want the roofline's %v", op.Name, got, want)
			}
		}
	}
	// The exporter printed "98 ops measured, 16 unmatched".
	if measured != 98 || unmatched != 16 {
		t.Errorf("%d ops measured, %d not, want 98 and 16", measured, unmatched)
	}
}

// TestProfiledDispatch: an op's profiled dispatch time (dispatch_s) is
// what the host takes for it, through the graph file; Host.PerOp still
// overrides it.
func TestProfiledDispatch(t *testing.T) {
	b := graph.NewBuilder("dispatched")
	prev := -1
	for i := range 10 {
		op := b.AddOp(graph.Op{Name: "op" + string(rune('a'+i)), Type: "add", Class: graph.ClassElementwise, FLOPs: 1e3, HasDispatch: true, Dispatch: 30e-6})
		if prev >= 0 {
			b.AddTensor(prev, 4, op)
		}
		prev = op
	}
	g0, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := graph.Write(&buf, g0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"dispatch_s": 0.00003`)) {
		t.Fatalf("dispatch_s not written:\n%s", buf.String()[:400])
	}
	g, err := graph.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	c := testCluster(1, 1, 0, false)
	dec := decision.Decision{Device: make([]int, 10)}
	// Every class at 20 us, but the profile says 30 us per op.
	_, step := run(t, mustModel(t, g, c, Options{Host: withDispatch(graph.ClassElementwise, 20e-6)}), dec)
	if !near(step, 300e-6+1e-9) {
		t.Errorf("step %v, want 10 x 30 us + 1 ns", step)
	}
	h := withDispatch(graph.ClassElementwise, 20e-6)
	h.PerOp = []float64{10e-6, 10e-6, 10e-6, 10e-6, 10e-6, 10e-6, 10e-6, 10e-6, 10e-6, 10e-6}
	if _, step := run(t, mustModel(t, g, c, Options{Host: h}), dec); !near(step, 100e-6+1e-9) {
		t.Errorf("with PerOp: step %v, want 10 x 10 us + 1 ns", step)
	}
}

// TestProfiledDispatchIgnored: with IgnoreProfile (eval --dispatch) the
// class's dispatch time holds for profiled ops too.
func TestProfiledDispatchIgnored(t *testing.T) {
	b := graph.NewBuilder("dispatched")
	prev := -1
	for i := range 10 {
		op := b.AddOp(graph.Op{Name: "op" + string(rune('a'+i)), Type: "add", Class: graph.ClassElementwise, FLOPs: 1e3, HasDispatch: true, Dispatch: 30e-6})
		if prev >= 0 {
			b.AddTensor(prev, 4, op)
		}
		prev = op
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h := withDispatch(graph.ClassElementwise, 20e-6)
	h.IgnoreProfile = true
	dec := decision.Decision{Device: make([]int, 10)}
	if _, step := run(t, mustModel(t, g, testCluster(1, 1, 0, false), Options{Host: h}), dec); !near(step, 200e-6+1e-9) {
		t.Errorf("step %v, want 10 x 20 us + 1 ns", step)
	}
}
