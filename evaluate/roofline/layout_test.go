package roofline

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline/convlayout"
	"github.com/placer/placer/graph"
)

// TestLayoutTransposes: on the rtx3090 preset (no measured convolutions)
// an FP16 convolution of 1 GFLOP reading 10 MB and writing 6 MB takes,
// alone, 5 us launch + max(1e9 / (71.16e12 x 0.6) = 23.42 us, 16e6 /
// (936e9 x 0.8) = 21.37 us) = 28.42 us; in NCHW its transposes move 2 x
// 16 MB = 32 MB more at the convolution class's 748.8 GB/s: + 42.74 us =
// 71.16 us, whatever bound the convolution itself is at. NHWC and an
// unsaid format leave it; an elementwise op never changes; on the h100
// preset a dense spatial convolution priced by its measured shapes
// changes in neither format (they were timed with their transposes).
func TestLayoutTransposes(t *testing.T) {
	conv := graph.Op{Name: "conv", Type: "convolution", Class: graph.ClassConv, DType: graph.F16, FLOPs: 1e9, BytesRead: 10e6, BytesWritten: 6e6}
	add := graph.Op{Name: "add", Type: "add", Class: graph.ClassElementwise, DType: graph.F16, BytesRead: 4e6, BytesWritten: 2e6}
	b := graph.NewBuilder("layout")
	b.AddOp(conv)
	b.AddOp(add)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := Preset("rtx3090")
	c, err := NewCluster(h, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	base := 5e-6 + math.Max(1e9/(h.FP16Tensor*0.6), 16e6/(936e9*0.8))
	if math.Abs(base-28.42e-6) > 0.01e-6 {
		t.Fatalf("worked base %.4g s, not 28.42 us: the preset changed", base)
	}
	trans := 32e6 / (936e9 * 0.8)
	for _, f := range []struct {
		format   convlayout.Format
		conv     float64
		addTimes float64
	}{
		{convlayout.Unsaid, base, 0},
		{convlayout.NHWC, base, 0},
		{convlayout.NCHW, base + trans, 0},
	} {
		m, err := NewModel(g, c, Options{MemoryFormat: f.format})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.OpTime(0); math.Abs(got-f.conv) > 1e-12 {
			t.Errorf("%v: convolution %.6g s, want %.6g", f.format, got, f.conv)
		}
		if got, want := m.OpTime(1), 5e-6+6e6/(936e9*0.85); math.Abs(got-want) > 1e-12 {
			t.Errorf("%v: elementwise op %.6g s, want %.6g", f.format, got, want)
		}
	}

	// h100: a dense 3x3 convolution of a measured shape (c3.64x56) in
	// BF16 is the measured row's time in either format.
	hb := graph.NewBuilder("layout-h100")
	hb.AddOp(graph.Op{Name: "conv", Type: "convolution", Class: graph.ClassConv, DType: graph.BF16, FLOPs: 7.4e9, BytesRead: 25e6, BytesWritten: 13e6,
		DenseConv: graph.ConvShape{Batch: 32, Cin: 64, Cout: 64, Taps: 9, Pixels: 3136}})
	hg, err := hb.Build()
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := Preset("h100")
	c1, _ := NewCluster(h1, 1, "")
	var times []float64
	for _, f := range []convlayout.Format{convlayout.Unsaid, convlayout.NCHW} {
		m, err := NewModel(hg, c1, Options{MemoryFormat: f})
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, m.OpTime(0))
	}
	// 5 us launch + the row's 57.904 us (its shape's FLOPs are the op's
	// DenseConv's), over the 14.2 us its 38 MB take at 3,350 GB/s x 0.8.
	if want := 5e-6 + 5.790399946272373e-05; math.Abs(times[0]-want) > 1e-12 {
		t.Errorf("h100 measured convolution: %g s, want the measured row's %g", times[0], want)
	}
	if times[0] != times[1] {
		t.Errorf("h100 measured convolution: %g s unsaid, %g s in NCHW; want the same", times[0], times[1])
	}
}
