package hw

import _ "embed" // the PTX of the placer kernels

// kernelsPTX is the PTX of kernels/kernels.cu (placer_empty, placer_rw,
// placer_spin), generated with
//
//	nvcc -ptx -arch=compute_60 -O3 -o kernels/kernels.ptx kernels/kernels.cu
//
// and loaded by the CUDA executor with cuModuleLoadData.
//
//go:embed kernels/kernels.ptx
var kernelsPTX string

// KernelNames are the entry points kernelsPTX defines.
var KernelNames = []string{"placer_empty", "placer_rw", "placer_spin"}
