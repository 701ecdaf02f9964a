package hw

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

const profileDir = "../../graph/testdata/profile"

// TestCalibrateFromProfile fits the efficiencies of a roofline device made
// of the profiling machine's 2 CPU cores (epyc-2core.hw.json) to the op
// times of the recorded CPU profile of the zoo's cnn, and checks that the
// written profile predicts those ops better than the one it started from
// (the RMS of the log error down by a third at least; 156% -> 90% when
// recorded), with the peaks and bandwidth kept, and that fitting the
// launch time too (2 us -> 2.89 us when recorded) never predicts them
// worse than the efficiencies alone fitted at the base's 2 us (96% when
// recorded, before the launch was fitted).
func TestCalibrateFromProfile(t *testing.T) {
	baseFile := filepath.Join(profileDir, "epyc-2core.hw.json")
	gFile := filepath.Join(profileDir, "cnn-cpu.json")
	out := filepath.Join(t.TempDir(), "fitted.json")
	var stdout, report bytes.Buffer
	o := CalibrateOptions{FromProfile: gFile, Hardware: baseFile, Out: out}
	if err := CalibrateFromProfile(&stdout, &report, o); err != nil {
		t.Fatal(err)
	}
	// With --out FILE the fit table goes to the output stream.
	if !strings.Contains(stdout.String(), "fitted to 88 measured ops of cnn-cpu") || report.Len() != 0 {
		t.Errorf("report:\n%s\nerrors:\n%s", stdout.String(), report.String())
	}
	base, err := roofline.LoadHardware(baseFile)
	if err != nil {
		t.Fatal(err)
	}
	fitted, err := roofline.LoadHardware(out)
	if err != nil {
		t.Fatal(err)
	}
	if fitted.FP32 != base.FP32 || fitted.MemBandwidth != base.MemBandwidth {
		t.Errorf("peaks or bandwidth changed: %+v", fitted)
	}
	if !strings.Contains(fitted.Source, "--from-profile") {
		t.Errorf("source %q", fitted.Source)
	}
	f, err := os.Open(gFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := graph.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	ts := ProfileTimings(g, base)
	if len(ts) != 88 { // 98 measured, less 10 views and others that do no work by the counts
		t.Errorf("%d timings, want 88", len(ts))
	}
	before, after := RMSLogError(&base, ts), RMSLogError(&fitted, ts)
	t.Logf("RMS log error %.3f -> %.3f", before, after)
	if !(after < before*2/3) {
		t.Errorf("fitted profile's error %.3f, the base's %.3f: want it down by a third", after, before)
	}
	effOnly, _, err := FitEfficiencies(base, ts)
	if err != nil {
		t.Fatal(err)
	}
	kept := RMSLogError(&effOnly, ts)
	t.Logf("launch %.3g s (base %.3g s); efficiencies alone at the base's launch: %.3f", fitted.Launch, base.Launch, kept)
	if after > kept+1e-12 {
		t.Errorf("with the launch fitted the error is %.4f, above the efficiencies' fit alone (%.4f)", after, kept)
	}
	// Every class with samples predicts its own ops no worse than before.
	for c := range graph.NumClasses {
		var cs []KernelTiming
		for _, k := range ts {
			if int(k.Class) == c {
				cs = append(cs, k)
			}
		}
		if b, a := RMSLogError(&base, cs), RMSLogError(&fitted, cs); a > b+1e-9 {
			t.Errorf("class %s: error %.3f fitted, %.3f before", graph.Class(c), a, b)
		}
	}
}

// TestCalibrateFromProfileNoHardware: without --hardware and with no meta
// file naming a GPU, it asks for the hardware.
func TestCalibrateFromProfileNoHardware(t *testing.T) {
	var out, errw bytes.Buffer
	err := CalibrateFromProfile(&out, &errw, CalibrateOptions{FromProfile: filepath.Join(profileDir, "cnn-cpu.json")})
	if !errors.Is(err, ErrNoHardware) {
		t.Errorf("err %v, want ErrNoHardware", err)
	}
	err = CalibrateFromProfile(&out, &errw, CalibrateOptions{FromProfile: filepath.Join(profileDir, "cnn.json"), Hardware: "h100"})
	if err == nil || !strings.Contains(err.Error(), "no op has a measured time") {
		t.Errorf("unprofiled graph: %v", err)
	}
}

// TestProfileTimingsTF32: an f32 matmul and convolution are held against
// the TF32 peak as the graph's recorded settings say (matmuls off,
// convolutions on: PyTorch's defaults), whatever the hardware allows; a
// graph without settings takes the hardware's.
func TestProfileTimingsTF32(t *testing.T) {
	build := func(e *graph.Execution) *graph.Graph {
		b := graph.NewBuilder("tf32")
		b.AddOp(graph.Op{Name: "mm", Type: "mm", Class: graph.ClassMatMul, DType: graph.F32, FLOPs: 1e9, BytesRead: 1e6, HasTime: true, Time: 1e-3})
		b.AddOp(graph.Op{Name: "conv", Type: "convolution", Class: graph.ClassConv, DType: graph.F32, FLOPs: 1e9, BytesRead: 1e6, HasTime: true, Time: 1e-3})
		b.AddOp(graph.Op{Name: "mm16", Type: "mm", Class: graph.ClassMatMul, DType: graph.BF16, FLOPs: 1e9, BytesRead: 1e6, HasTime: true, Time: 1e-3})
		b.SetExecution(e)
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	h, _ := roofline.Preset("h100")
	cases := []struct {
		exec  *graph.Execution
		allow bool
		want  []bool // mm, conv, mm16
	}{
		{&graph.Execution{TF32MatMul: false, TF32CuDNN: true}, false, []bool{false, true, false}},
		{&graph.Execution{TF32MatMul: true, TF32CuDNN: false}, true, []bool{true, false, false}},
		{nil, true, []bool{true, true, false}},
		{nil, false, []bool{false, false, false}},
	}
	for i, c := range cases {
		h.AllowTF32 = c.allow
		ts := ProfileTimings(build(c.exec), h)
		if len(ts) != 3 {
			t.Fatalf("case %d: %d timings", i, len(ts))
		}
		for j, w := range c.want {
			if ts[j].TF32 != w {
				t.Errorf("case %d: %s on TF32 %v, want %v", i, ts[j].Name, ts[j].TF32, w)
			}
		}
	}
}
