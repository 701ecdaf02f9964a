package roofline

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placer/placer/graph"
)

// TestGroupedMeasured: the h100 preset's grouped convolutions are the
// rows of the lent H100's shapes.jsonl (kind conv, 1 < groups <
// channels), each forward and backward, and each, costed as the roofline
// costs a grouped convolution op of its shape, takes its measured time.
func TestGroupedMeasured(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "measurements", "2026-11-26-h100-c", "shapes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []GroupedConv
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c struct {
			Kind, Name, DType string
			FLOPs, Fwd, Bwd   float64
		}
		var raw map[string]any
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		c.Kind, _ = raw["kind"].(string)
		c.Name, _ = raw["name"].(string)
		c.DType, _ = raw["dtype"].(string)
		cin, _ := raw["cin"].(float64)
		groups, _ := raw["groups"].(float64)
		c.FLOPs, _ = raw["flops"].(float64)
		c.Fwd, _ = raw["fwd_seconds"].(float64)
		c.Bwd, _ = raw["bwd_seconds"].(float64)
		if c.Kind != "conv" || groups <= 1 || groups == cin {
			continue
		}
		prec := map[string]string{"fp32": "tf32", "bf16": "bf16"}[c.DType]
		want = append(want, GroupedConv{Name: c.Name, Precision: prec, FLOPs: c.FLOPs, Seconds: c.Fwd},
			GroupedConv{Name: c.Name, Precision: prec, Backward: true, FLOPs: c.FLOPs, Seconds: c.Bwd})
	}
	h, _ := Preset("h100")
	rows := GroupedTables[h.Grouped]
	if len(want) != 16 || len(rows) != len(want) {
		t.Fatalf("%d grouped convolutions in shapes.jsonl (want 16: 4 shapes, 2 precisions, 2 directions), %d in the preset's %q", len(want), len(rows), h.Grouped)
	}
	for k, w := range want {
		if rows[k] != w {
			t.Errorf("preset row %d %+v, shapes.jsonl %+v", k, rows[k], w)
		}
		dt := map[string]graph.DType{"tf32": graph.F32, "bf16": graph.BF16}[w.Precision]
		op := &graph.Op{Name: w.Name, Type: "convolution", Class: graph.ClassConv, DType: dt, FLOPs: 37 * w.FLOPs,
			Backward: w.Backward, GroupedFLOPs: w.FLOPs}
		_, got := opDuration(&h, op, 0, TF32{Conv: true})
		if math.Abs(got-w.Seconds) > 1e-9*w.Seconds {
			t.Errorf("%s backward %v: %.2f us, measured %.2f", w.Name, w.Backward, got*1e6, w.Seconds*1e6)
		}
	}
	// FP32 without TF32 is not measured: the roofline of its FLOPs.
	op := &graph.Op{Name: "g", Type: "convolution", Class: graph.ClassConv, DType: graph.F32, FLOPs: 1e9, GroupedFLOPs: 1e9}
	if _, got := opDuration(&h, op, 0, TF32{}); math.Abs(got-1e9/(h.FP32*h.ComputeEff[graph.ClassConv])) > 1e-15 {
		t.Errorf("FP32 without TF32: %.3g s, want the roofline's %.3g", got, 1e9/(h.FP32*h.ComputeEff[graph.ClassConv]))
	}
}

// TestGroupedTime: the rate interpolated linearly in log FLOPs between
// the bracketing measured convolutions, held beyond them. Rows: 1e9 FLOPs
// in 100 us (10 TFLOP/s) and 4e9 in 200 us (20 TFLOP/s); 2e9 lies halfway
// in log FLOPs, at 15 TFLOP/s: 133.33 us.
func TestGroupedTime(t *testing.T) {
	rows := []GroupedConv{
		{Precision: "tf32", FLOPs: 4e9, Seconds: 200e-6},
		{Precision: "tf32", FLOPs: 1e9, Seconds: 100e-6},
		{Precision: "tf32", Backward: true, FLOPs: 1e9, Seconds: 500e-6},
	}
	for _, c := range []struct {
		prec     string
		backward bool
		flops    float64
		want     float64 // seconds; 0: not measured
	}{
		{"tf32", false, 1e9, 100e-6},
		{"tf32", false, 4e9, 200e-6},
		{"tf32", false, 2e9, 2e9 / 15e12},
		{"tf32", false, 5e8, 50e-6},  // below: 10 TFLOP/s
		{"tf32", false, 8e9, 400e-6}, // above: 20 TFLOP/s
		{"tf32", true, 3e9, 1500e-6}, // one backward row: its rate, 2 TFLOP/s
		{"bf16", false, 1e9, 0},
	} {
		got, ok := GroupedTime(rows, c.prec, c.backward, c.flops)
		if ok != (c.want > 0) || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s backward %v at %g FLOPs: %.4g s (%v), want %.4g", c.prec, c.backward, c.flops, got, ok, c.want)
		}
	}
}

// TestGroupedProfile: a profile names a measured table or none; another
// name is an error naming the field; the h100 preset's round-trips.
func TestGroupedProfile(t *testing.T) {
	for _, c := range []struct {
		json, want, err string
	}{
		{`{"base": "h100", "name": "x"}`, "h100-2026-11-26", ""},
		{`{"base": "h100", "name": "x", "grouped_conv": ""}`, "", ""},
		{`{"base": "a100", "name": "x"}`, "", ""},
		{`{"base": "h100", "name": "x", "grouped_conv": "nope"}`, "", "grouped_conv"},
	} {
		h, err := DecodeHardware([]byte(c.json))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one naming %s", c.json, err, c.err)
			}
			continue
		}
		if err != nil || h.Grouped != c.want {
			t.Errorf("%s: grouped %q (%v), want %q", c.json, h.Grouped, err, c.want)
		}
	}
}
