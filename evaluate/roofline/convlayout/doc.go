// Package convlayout prices what a convolution's memory format costs
// beside its own kernel: the layout transposes cuDNN runs around a
// half-precision convolution whose tensors are NCHW.
//
// cuDNN's tensor-core convolution kernels take NHWC tensors. PyTorch's
// default memory format is NCHW (torch.contiguous_format); given NCHW
// FP16 or BF16 tensors, cuDNN transposes the inputs to NHWC before the
// convolution and the output back after it, each transpose a kernel of
// its own that reads and writes the whole tensor. Sources: PyTorch's
// channels-last tutorial ("(Beta) Channels Last Memory Format in
// PyTorch"); MosaicML Composer's Channels Last method card
// (docs.mosaicml.com, method_cards/channels_last: "the NCHW tensor must
// be transposed to NHWC before the convolution and transposed back to
// NCHW after", with NVIDIA's diagram); on the RTX 3090 itself a PyTorch
// report (github.com/pytorch/pytorch/issues/54324), whose profile
// of an FP16 NCHW grouped convolution is two cuDNN genericTranspose
// kernels (92% of the time) around the convolution. A channels-last
// (NHWC) step runs none of them.
//
// May import: graph
package convlayout
