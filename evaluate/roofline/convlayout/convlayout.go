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
// transposes around convolution op in format f: in NCHW, an FP16 or BF16
// convolution (forward, or the backward op that computes the input's and
// the weight's gradients) has each tensor it reads transposed to NHWC
// and each it writes transposed back, every transpose reading and
// writing the tensor once: 2 x (op.BytesRead + op.BytesWritten). 0 for
// an op of another class or precision, a depthwise convolution (no
// tensor-core GEMM: PyTorch runs its own NCHW kernels for most of them,
// cuDNN's only for some FP16 shapes), an op with a measured time, or a
// format other than NCHW.
func TransposeBytes(op *graph.Op, f Format) int64 {
	if f != NCHW || op.Class != graph.ClassConv || op.HasTime || op.DepthwiseTaps > 0 {
		return 0
	}
	if op.DType != graph.F16 && op.DType != graph.BF16 {
		return 0
	}
	return 2 * (op.BytesRead + op.BytesWritten)
}
