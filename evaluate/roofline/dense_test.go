package roofline

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/placer/placer/graph"
)

// TestDenseMeasured: the h100 preset's dense convolutions are the rows of
// the lent H100's shapes.jsonl (kind conv, groups 1), each forward and
// backward, and each spatial one, costed as the roofline costs a dense
// convolution op of its shape, takes its measured time (the launch and
// the memory's roofline aside).
func TestDenseMeasured(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "measurements", "2026-11-26-h100-c", "shapes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []DenseConvRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r struct {
			Kind, Name, DType                            string
			Batch, Cin, HW, Cout, Kernel, Stride, Groups int64
			FLOPs                                        float64
			Fwd                                          float64 `json:"fwd_seconds"`
			Bwd                                          float64 `json:"bwd_seconds"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Kind != "conv" || r.Groups != 1 {
			continue
		}
		out := (r.HW + r.Stride - 1) / r.Stride
		s := graph.ConvShape{Batch: r.Batch, Cin: r.Cin, Cout: r.Cout, Taps: r.Kernel * r.Kernel, Pixels: out * out}
		if s.FLOPs() != r.FLOPs {
			t.Errorf("%s: %g FLOPs from its shape, kernelbench's %g", r.Name, s.FLOPs(), r.FLOPs)
		}
		prec := map[string]string{"fp32": "tf32", "bf16": "bf16"}[r.DType]
		want = append(want, DenseConvRow{Name: r.Name, Precision: prec, Shape: s, Seconds: r.Fwd},
			DenseConvRow{Name: r.Name, Precision: prec, Backward: true, Shape: s, Seconds: r.Bwd})
	}
	h, _ := Preset("h100")
	rows := DenseTables[h.DenseConv]
	if len(want) != 52 || len(rows) != len(want) {
		t.Fatalf("%d dense convolutions in shapes.jsonl (want 52: 13 shapes, 2 precisions, 2 directions), %d in the preset's %q", len(want), len(rows), h.DenseConv)
	}
	for k, w := range want {
		if rows[k] != w {
			t.Errorf("preset row %d %+v, shapes.jsonl %+v", k, rows[k], w)
		}
		if w.Shape.Taps == 1 {
			continue // pointwise: the roofline (DenseTime)
		}
		dt := map[string]graph.DType{"tf32": graph.F32, "bf16": graph.BF16}[w.Precision]
		op := &graph.Op{Name: w.Name, Type: "convolution", Class: graph.ClassConv, DType: dt, FLOPs: 2 * w.Shape.FLOPs(),
			Backward: w.Backward, DenseConv: w.Shape}
		_, got := opDuration(&h, op, 0, TF32{Conv: true})
		if math.Abs(got-w.Seconds) > 1e-9*w.Seconds {
			t.Errorf("%s backward %v: %.2f us, measured %.2f", w.Name, w.Backward, got*1e6, w.Seconds*1e6)
		}
	}
	// FP32 without TF32 is not measured: the roofline of its FLOPs.
	op := &graph.Op{Name: "c", Type: "convolution", Class: graph.ClassConv, DType: graph.F32, FLOPs: 1e9, DenseConv: want[0].Shape}
	if _, got := opDuration(&h, op, 0, TF32{}); math.Abs(got-1e9/(h.FP32*h.ComputeEff[graph.ClassConv])) > 1e-15 {
		t.Errorf("FP32 without TF32: %.3g s, want the roofline's %.3g", got, 1e9/(h.FP32*h.ComputeEff[graph.ClassConv]))
	}
}

// TestDenseTime: the nearest measured shape of the op's precision,
// direction and kind, its time per forward FLOP. Rows: A, 3x3 64 -> 64
// channels at 3,136 px, batch 32 (7,398,752,256 FLOPs), 100 us forward
// and 200 backward; B, 3x3 512 -> 512 at 49 px, 60 us; P, pointwise 32 ->
// 16 at 12,544 px (411,041,792 FLOPs), 35 us; a BF16 forward of A's shape
// in 50 us.
func TestDenseTime(t *testing.T) {
	a := graph.ConvShape{Batch: 32, Cin: 64, Cout: 64, Taps: 9, Pixels: 3136}
	rows := []DenseConvRow{
		{Name: "A", Precision: "tf32", Shape: a, Seconds: 100e-6},
		{Name: "A", Precision: "tf32", Backward: true, Shape: a, Seconds: 200e-6},
		{Name: "B", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 512, Cout: 512, Taps: 9, Pixels: 49}, Seconds: 60e-6},
		{Name: "P", Precision: "tf32", Shape: graph.ConvShape{Batch: 32, Cin: 32, Cout: 16, Taps: 1, Pixels: 12544}, Seconds: 35e-6},
		{Name: "A", Precision: "bf16", Shape: a, Seconds: 50e-6},
	}
	cases := []struct {
		name     string
		prec     string
		backward bool
		s        graph.ConvShape
		opFLOPs  float64
		want     float64 // seconds; 0: none
	}{
		// 3x3 128 -> 128 at 784 px, batch 8: |log| ratios to A ln 2 + ln 2 + ln 4 = 4 ln 2,
		// to B ln 4 + ln 4 + ln 16 = 8 ln 2: A's rate; its FLOPs a quarter of A's: 25 us.
		{"nearest spatial", "tf32", false, graph.ConvShape{Batch: 8, Cin: 128, Cout: 128, Taps: 9, Pixels: 784}, 0, 25e-6},
		// 3x3 384 -> 384 at 64 px: to A ln 6 + ln 6 + ln 49 = 7.48, to B 2 ln(4/3) + ln(64/49) = 0.84: B's rate.
		// FLOPs 2 x 32 x 64 x 384 x 384 x 9 against B's 2 x 32 x 49 x 512 x 512 x 9: 60 us x 0.73469... x 0.5625.
		{"nearest is B", "tf32", false, graph.ConvShape{Batch: 32, Cin: 384, Cout: 384, Taps: 9, Pixels: 64}, 0, 60e-6 * (64.0 / 49) * (384.0 * 384 / (512 * 512))},
		// pointwise 64 -> 32 at 3,136 px, batch 8: P is measured, but pointwise keeps the roofline.
		{"pointwise: the roofline", "tf32", false, graph.ConvShape{Batch: 8, Cin: 64, Cout: 32, Taps: 1, Pixels: 3136}, 0, 0},
		// a spatial 32 -> 16 at 12,544 px (P's channels and pixels, 3x3): nearest A (ln 2 + ln 4 + ln 4), not P.
		{"spatial never maps to pointwise", "tf32", false, graph.ConvShape{Batch: 32, Cin: 32, Cout: 16, Taps: 9, Pixels: 12544}, 0, 100e-6 * (32.0 * 16 * 12544) / (64 * 64 * 3136)},
		{"bf16 of A's shape", "bf16", false, a, 0, 50e-6},
		// A's backward, both gradients (op FLOPs 2 x forward): 200 us; the weight's alone (1 x forward): 100 us.
		{"backward, both gradients", "tf32", true, a, 2 * a.FLOPs(), 200e-6},
		{"backward, weight gradient alone", "tf32", true, a, a.FLOPs(), 100e-6},
		{"bf16 backward: none measured", "bf16", true, a, 0, 0},
		{"fp32 without TF32: none", "", false, a, 0, 0},
		{"no shape", "tf32", false, graph.ConvShape{}, 0, 0},
	}
	for _, c := range cases {
		got, ok := DenseTime(rows, c.prec, c.backward, c.s, c.opFLOPs)
		if ok != (c.want > 0) || math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("%s: %.6g s (%v), want %.6g", c.name, got, ok, c.want)
		}
	}
}
