package convlayout

import "github.com/placer/placer/graph"

// CuDNNDepthwise says whether PyTorch runs a depthwise convolution of
// geometry d and precision dt, in format f, with cuDNN's kernels rather
// than its own (CudaDepthwise2d), as aten/src/ATen/native/Convolution.cpp
// chooses with cuDNN 8.2 or later (use_cudnn_depthwise and
// check_cudnn_depthwise_workload_with_filter; PyTorch 1.12 with CUDA 11.3
// ships cuDNN 8.3): in channels-last (NHWC) always; in NCHW an FP16 one of
// at least 32 channels, a square 1x1, 3x3 or 5x5 kernel, an input at
// least 7 wide, and stride 1, or stride 2 where (batch 1, a 3x3 or 5x5
// kernel, or a 1x1 at most 28 wide) or (a 3x3 or 5x5 kernel and at least
// 512 channels, or 256 at least 28 wide) or (a 1x1, batch at most 16, at
// least 128 channels, at most 7 wide); every other one (BF16 and FP32
// among them) PyTorch's own kernels. Unsaid: not known, false.
func CuDNNDepthwise(d graph.DepthwiseShape, dt graph.DType, f Format) bool {
	switch {
	case f == NHWC:
		return true
	case f != NCHW || dt != graph.F16 || d.Channels < 32 || d.KH != d.KW || d.Width < 7:
		return false
	case d.KW != 1 && d.KW != 3 && d.KW != 5:
		return false
	case d.Stride == 1:
		return true
	case d.Stride != 2:
		return false
	case d.Batch == 1:
		return d.KW != 1 || d.Width <= 28
	case d.KW == 1:
		return d.Batch <= 16 && d.Channels >= 128 && d.Width <= 7
	}
	return d.Channels >= 512 || (d.Channels >= 256 && d.Width >= 28)
}
