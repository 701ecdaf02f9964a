package convlayout

import (
	"fmt"
	"strings"

	"github.com/placer/placer/graph"
)

// Format is the memory format of a step's 4-d activations, as the user
// states it.
type Format uint8

const (
	// Unsaid: not known; no transposes are charged (the model as before).
	Unsaid Format = iota
	// NCHW is PyTorch's default, torch.contiguous_format.
	NCHW
	// NHWC is torch.channels_last.
	NHWC
)

// Parse reads a memory format: "" or "graph" (Unsaid), "nchw" or
// "contiguous", "nhwc" or "channels-last".
func Parse(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "", "graph":
		return Unsaid, nil
	case "nchw", "contiguous":
		return NCHW, nil
	case "nhwc", "channels-last", "channels_last":
		return NHWC, nil
	}
	return Unsaid, fmt.Errorf("memory-format %q: want graph, nchw or nhwc", s)
}

// String is the format's name.
func (f Format) String() string {
	switch f {
	case NCHW:
		return "nchw"
	case NHWC:
		return "nhwc"
	}
	return "unsaid"
}

// TransposeBytes is the device-memory traffic, bytes, of the layout
// transposes around convolution op in format f: in NCHW, a convolution
// on tensor cores (FP16 or BF16, or FP32 where tf32 says cuDNN runs it on
// TF32 tensor cores) (forward, or the backward op that computes the
// input's and the weight's gradients) has each tensor it reads transposed
// to NHWC and each it writes transposed back, every transpose reading and
// writing the tensor once: 2 x (op.BytesRead + op.BytesWritten). The
// backward op of a dense convolution that computes both gradients is
// two cuDNN calls (PyTorch's cudnn_convolution_backward calls
// cudnn_convolution_backward_input, then cudnn_convolution_backward_weight,
// aten/src/ATen/native/cudnn/ConvShared.cpp), each transposing the
// output's gradient it reads: 2 x GradOutputBytes more. 0 for an op of
// another class or precision, a depthwise convolution (no tensor-core
// GEMM: PyTorch runs its own NCHW kernels for most of them, cuDNN's only
// for some FP16 shapes), an op with a measured time, or a format other
// than NCHW.
//
// TF32 as FP16: cuDNN's TF32 tensor-core kernels take NHWC operands as
// its FP16 ones do. The lent H100's profiled FP32 ResNet-50 steps
// (measurements/2026-11-26-h100/graphs/resnet50-b32-fp32.meta.json and
// -b8-, TF32 on for cuDNN, PyTorch's default) show each matched backward
// convolution running cuDNN's nchwToNhwcKernel<float> and nhwcToNchwKernel
// around its sm80_xmma ..._tf32f32_tf32f32 kernels (4 transposes for a
// 1x1, 6 for a 3x3), and the stem's forward 3; of the ten 1x1 forwards
// matched, seven ran a CUTLASS tf32 GEMM straight on NCHW (no transpose),
// three transposed: counted here as transposing (those measured rows
// price the H100's spatial convolutions themselves, with whatever
// transposes they ran).
func TransposeBytes(op *graph.Op, f Format, tf32 bool) int64 {
	if f != NCHW || op.Class != graph.ClassConv || op.HasTime || op.DepthwiseTaps > 0 {
		return 0
	}
	if op.DType != graph.F16 && op.DType != graph.BF16 && (op.DType != graph.F32 || !tf32) {
		return 0
	}
	return 2 * (op.BytesRead + op.BytesWritten + GradOutputBytes(op))
}

// GradOutputBytes is the bytes of the output's gradient that backward
// convolution op reads a second time: a dense convolution's backward op
// (graph.Op.DenseConv) that computes the input's gradient beside the
// weight's (its FLOPs at least 1.5 x the forward's: both gradients are
// 2 x; the weight's alone, a first layer's, 1 x) reads it once for each,
// its forward shape's batch x output channels x output pixels elements
// of op.DType. 0 for any other op (a grouped convolution's shape is not
// read).
func GradOutputBytes(op *graph.Op) int64 {
	s := op.DenseConv
	if !op.Backward || op.Class != graph.ClassConv || s.Batch <= 0 || s.Cout <= 0 || s.Pixels <= 0 {
		return 0
	}
	if !(op.FLOPs >= 1.5*s.FLOPs()) {
		return 0
	}
	return s.Batch * s.Cout * s.Pixels * op.DType.Size()
}
