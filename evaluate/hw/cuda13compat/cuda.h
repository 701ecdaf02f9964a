/*
 * cuda13compat/cuda.h: lets gorgonia.org/cu v0.9.6 (the `cuda` build's
 * driver API binding) compile against CUDA 13's cuda.h. The Makefile puts
 * this directory first on the `cuda` build's include path (CGO_CFLAGS=-I),
 * so a file that includes <cuda.h> gets this one, which includes the real
 * cuda.h (#include_next) and, under CUDA 13 or later only, then points
 * five names back at older driver entry points. Under CUDA 11.8 and 12.x
 * headers it is the real cuda.h and nothing else. (A header force-included
 * with -include cannot do this: including cuda.h ahead of a file's own
 * _GNU_SOURCE breaks runtime/cgo, which every cgo build compiles.)
 *
 * CUDA 13 maps five calls gorgonia makes to newer entry points with other
 * parameters: cuCtxCreate to cuCtxCreate_v4 (a CUctxCreateParams*),
 * cuMemAdvise and cuMemPrefetchAsync to their _v2 (a CUmemLocation), and
 * cuGraphAddDependencies and cuGraphGetEdges to their _v2 (edge data).
 * The driver (libcuda.so.1) still exports the older entry points, for
 * binaries built with older headers (CUDA 13's cuda.h declares them in its
 * __CUDA_API_VERSION_INTERNAL section). This header declares them with
 * their old parameters under the names CUDA 11.8 and 12.x headers give
 * them, so the binary imports the same driver symbols, and runs on the
 * same drivers, whichever of these headers built it.
 */
#include_next <cuda.h>

#if defined(CUDA_VERSION) && CUDA_VERSION >= 13000 && !defined(PLACER_CUDA13COMPAT_H)
#define PLACER_CUDA13COMPAT_H

#ifdef __cplusplus
extern "C" {
#endif

#undef cuCtxCreate
#define cuCtxCreate cuCtxCreate_v2
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);

#undef cuMemAdvise
CUresult CUDAAPI cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device);

#undef cuMemPrefetchAsync
#define cuMemPrefetchAsync __CUDA_API_PTSZ(cuMemPrefetchAsync)
CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream);

#undef cuGraphAddDependencies
CUresult CUDAAPI cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, size_t numDependencies);

#undef cuGraphGetEdges
CUresult CUDAAPI cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, size_t *numEdges);

#ifdef __cplusplus
}
#endif

#endif /* CUDA_VERSION >= 13000 */
