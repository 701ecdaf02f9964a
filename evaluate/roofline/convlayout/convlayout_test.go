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
	// The same backward op of a dense convolution of known shape (batch
	// 32, 64 -> 64 channels, 9 taps, 3,136 output pixels: forward FLOPs
	// 2 x 32 x 3,136 x 64 x 64 x 9 = 7,398,752,256) computing both
	// gradients (twice that) is two cuDNN calls, each transposing dy
	// (32 x 64 x 3,136 x 2 = 12,845,056 bytes): 77,365,248 + 2 x
	// 12,845,056 = 103,055,360. A first layer's, the weight's gradient
	// alone (FLOPs the forward's), reads dy once: 77,365,248.
	shape := graph.ConvShape{Batch: 32, Cin: 64, Cout: 64, Taps: 9, Pixels: 3136}
	dense := bwd
	dense.DenseConv, dense.FLOPs = shape, 2*7398752256
	first := dense
	first.FLOPs = 7398752256
	denseFwd := fwd
	denseFwd.DenseConv, denseFwd.FLOPs = shape, 7398752256
	for _, c := range []struct {
		name string
		op   graph.Op
		f    Format
		want int64
	}{
		{"fwd nchw", fwd, NCHW, 51527680},
		{"bwd nchw", bwd, NCHW, 77365248},
		{"dense bwd nchw, dy twice", dense, NCHW, 103055360},
		{"dense bwd, weight gradient alone", first, NCHW, 77365248},
		{"dense fwd nchw", denseFwd, NCHW, 51527680},
		{"dense bwd nhwc", dense, NHWC, 0},
		{"fwd nhwc", fwd, NHWC, 0},
		{"fwd unsaid", fwd, Unsaid, 0},
		{"depthwise", dw, NCHW, 0},
		{"f32 without TF32 (CUDA-core kernels, NCHW as they are)", f32, NCHW, 0},
		{"measured", timed, NCHW, 0},
		{"not a convolution", add, NCHW, 0},
	} {
		if got := TransposeBytes(&c.op, c.f, false); got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, got, c.want)
		}
	}
	// On TF32 tensor cores an FP32 convolution is transposed as an FP16
	// one, at 4 bytes an element: the layer1 3x3 above in FP32 reads
	// 25,837,568 (x and w) and writes 25,690,112: 2 x 51,527,680 =
	// 103,055,360. Its backward of known shape reads dy, x and w
	// (51,527,680) and writes dx and dw (25,837,568) and reads dy twice
	// more (2 x 25,690,112): 2 x (77,365,248 + 25,690,112) = 206,110,720.
	tf := graph.Op{Class: graph.ClassConv, DType: graph.F32, BytesRead: 25837568, BytesWritten: 25690112}
	tfBwd := graph.Op{Class: graph.ClassConv, DType: graph.F32, Backward: true, BytesRead: 51527680,
		BytesWritten: 25837568, DenseConv: shape, FLOPs: 2 * 7398752256}
	tfDw := tf
	tfDw.DepthwiseTaps = 9
	for _, c := range []struct {
		name string
		op   graph.Op
		f    Format
		tf32 bool
		want int64
	}{
		{"tf32 fwd nchw", tf, NCHW, true, 103055360},
		{"tf32 dense bwd nchw", tfBwd, NCHW, true, 206110720},
		{"fp32 without tf32", tf, NCHW, false, 0},
		{"tf32 nhwc", tf, NHWC, true, 0},
		{"tf32 depthwise", tfDw, NCHW, true, 0},
		{"fp16 whatever tf32 says", fwd, NCHW, true, 51527680},
	} {
		if got := TransposeBytes(&c.op, c.f, c.tf32); got != c.want {
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

// TestCuDNNDepthwise: PyTorch's choice between cuDNN's depthwise kernels
// and its own, case by case from Convolution.cpp's rule (cuDNN 8.2 on):
// NCHW FP16 3x3 stride 1 of 32 channels at 112 wide is cuDNN's, of 16
// channels PyTorch's; a 7x7 (ConvNeXt's) PyTorch's; BF16 and FP32
// PyTorch's; 3x3 stride 2 of 96 channels at 112 wide PyTorch's, of 512
// channels at 14 wide cuDNN's, of 256 at 28 cuDNN's and at 14 PyTorch's;
// a 6 wide input PyTorch's; a 1x1 stride 2 at batch 8 of 128 channels 7
// wide cuDNN's, at batch 32 PyTorch's; batch 1 stride 2 3x3 of 32
// channels cuDNN's; in NHWC every one cuDNN's; unsaid none.
func TestCuDNNDepthwise(t *testing.T) {
	dw := func(n, c, w, k, s int64) graph.DepthwiseShape {
		return graph.DepthwiseShape{Batch: n, Channels: c, Width: w, KH: k, KW: k, Stride: s}
	}
	for _, tc := range []struct {
		name string
		d    graph.DepthwiseShape
		dt   graph.DType
		f    Format
		want bool
	}{
		{"3x3 s1 32ch", dw(256, 32, 112, 3, 1), graph.F16, NCHW, true},
		{"3x3 s1 16ch", dw(256, 16, 112, 3, 1), graph.F16, NCHW, false},
		{"7x7 s1", dw(256, 96, 56, 7, 1), graph.F16, NCHW, false},
		{"3x3 s1 bf16", dw(256, 32, 112, 3, 1), graph.BF16, NCHW, false},
		{"3x3 s1 fp32", dw(256, 32, 112, 3, 1), graph.F32, NCHW, false},
		{"3x3 s2 96ch 112", dw(256, 96, 112, 3, 2), graph.F16, NCHW, false},
		{"3x3 s2 512ch 14", dw(256, 512, 14, 3, 2), graph.F16, NCHW, true},
		{"5x5 s2 256ch 28", dw(256, 256, 28, 5, 2), graph.F16, NCHW, true},
		{"3x3 s2 256ch 14", dw(256, 256, 14, 3, 2), graph.F16, NCHW, false},
		{"3x3 s1 6 wide", dw(256, 64, 6, 3, 1), graph.F16, NCHW, false},
		{"1x1 s2 b8 128ch 7", dw(8, 128, 7, 1, 2), graph.F16, NCHW, true},
		{"1x1 s2 b32 128ch 7", dw(32, 128, 7, 1, 2), graph.F16, NCHW, false},
		{"3x3 s2 b1 32ch", dw(1, 32, 56, 3, 2), graph.F16, NCHW, true},
		{"1x3 kernel", graph.DepthwiseShape{Batch: 8, Channels: 64, Width: 56, KH: 1, KW: 3, Stride: 1}, graph.F16, NCHW, false},
		{"7x7 channels-last", dw(256, 96, 56, 7, 1), graph.F16, NHWC, true},
		{"3x3 s1 32ch unsaid", dw(256, 32, 112, 3, 1), graph.F16, Unsaid, false},
	} {
		if got := CuDNNDepthwise(tc.d, tc.dt, tc.f); got != tc.want {
			t.Errorf("%s: CuDNNDepthwise = %v, want %v", tc.name, got, tc.want)
		}
	}
}
