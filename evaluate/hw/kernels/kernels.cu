// Kernels of placer's CUDA executor and micro-benchmarks (package hw).
//
// The PTX in ../ptx.go is generated from this file by
//
//     nvcc -ptx -arch=compute_60 -O3 -o kernels.ptx kernels.cu
//
// (Debian's nvidia-cuda-toolkit 11.8; see docs/hardware.md). compute_60 PTX
// is JIT-compiled by the driver for every GPU from Pascal (P100) on.
// Every parameter is 64 bits wide: gorgonia.org/cu's Function.Launch
// copies each kernel argument as 8 bytes.

// placer_empty does nothing: launch overhead.
extern "C" __global__ void placer_empty() {}

// placer_rw reads nin floats of in and writes nout floats of out (each
// element once), doing iters dependent FMAs per element. With gather > 0
// the reads are rows of gather floats at pseudo-random row indices (an
// embedding lookup); otherwise they stream. Reads past nout are folded
// into a sum that is written only if it hits a value it never reaches, so
// the compiler cannot drop them.
extern "C" __global__ void placer_rw(const float* __restrict__ in, unsigned long long nin,
                                     float* __restrict__ out, unsigned long long nout,
                                     unsigned long long iters, unsigned long long gather) {
    unsigned long long n = nin > nout ? nin : nout;
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    unsigned long long rows = gather > 0 ? nin / gather : 0;
    float acc = 0.0f;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = 1.0f;
        if (i < nin) {
            unsigned long long j = i;
            if (rows > 0) {
                unsigned long long r = i / gather;
                j = ((r * 2654435761ull) % rows) * gather + (i - r * gather);
            }
            v = in[j];
        }
        for (unsigned long long k = 0; k < iters; k++) {
            v = fmaf(v, 0.999f, 0.5f);
        }
        if (i < nout) {
            out[i] = v;
        } else {
            acc += v;
        }
    }
    if (acc == 1234.5f && nout > 0) {
        out[0] = acc;
    }
}

// placer_spin busy-waits ns nanoseconds of the GPU's global timer: an op
// whose only cost is a measured time. Launch it with one thread.
extern "C" __global__ void placer_spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}
