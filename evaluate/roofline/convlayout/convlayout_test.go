package convlayout

import (
	"testing"

	"github.com/placer/placer/graph"
)

func TestTransposeBytes(t *testing.T) {
	// ResNet-50's 3x3 convolution of layer1 at batch 32 in FP16: input
	// and output 32 x 64 x 56 x 56 x 2 bytes = 12,845,056 bytes each, the
	// weight 64 x 64 x 9 x 2 = 73,728. Forward reads 12,918,784 and
	// writes 12,845,056; its transposes read and write each once:
	// 2 x 25,763,840 = 51,527,680 bytes.
	fwd := graph.Op{Class: graph.ClassConv, DType: graph.F16, BytesRead: 12918784, BytesWritten: 12845056}
	// Backward reads dy, x and w (25,763,840) and writes dx and dw
	// (12,918,784): 2 x 38,682,624 = 77,365,248.
	bwd := graph.Op{Class: graph.ClassConv, DType: graph.BF16, Backward: true, BytesRead: 25763840, BytesWritten: 12918784}
	dw := fwd
	dw.DepthwiseTaps = 9
	f32 := fwd
	f32.DType = graph.F32
	timed := fwd
	timed.HasTime, timed.Time = true, 1e-4
	add := graph.Op{Class: graph.ClassElementwise, DType: graph.F16, BytesRead: 100, BytesWritten: 50}
	for _, c := range []struct {
		name string
		op   graph.Op
		f    Format
		want int64
	}{
		{"fwd nchw", fwd, NCHW, 51527680},
		{"bwd nchw", bwd, NCHW, 77365248},
		{"fwd nhwc", fwd, NHWC, 0},
		{"fwd unsaid", fwd, Unsaid, 0},
		{"depthwise", dw, NCHW, 0},
		{"f32 (TF32 kernels are not counted)", f32, NCHW, 0},
		{"measured", timed, NCHW, 0},
		{"not a convolution", add, NCHW, 0},
	} {
		if got := TransposeBytes(&c.op, c.f); got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	for s, want := range map[string]Format{"": Unsaid, "graph": Unsaid, "nchw": NCHW, "Contiguous": NCHW, "nhwc": NHWC, "channels-last": NHWC} {
		if got, err := Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := Parse("nchw8c"); err == nil || err.Error() != `memory-format "nchw8c": want graph, nchw or nhwc` {
		t.Errorf("Parse(nchw8c) error %v", err)
	}
}
