//go:build cuda

package hw

/*
#cgo CFLAGS: -I/usr/local/cuda/include -Wno-deprecated-declarations
#cgo LDFLAGS: -L/usr/local/cuda/lib64 -lcuda
#include <stdint.h>
#include <stddef.h>
#include <cuda.h>
#include <cublas_v2.h>

// cuBLAS is not linked: LoadCublas dlopens libcublas.so.13, .12 or .11
// (cublaslib.go) and placer_cublas_bind stores its functions here, typed
// by this build's cublas_v2.h (the signatures placer uses are the same
// from CUDA 11 to 13). Nothing below names a cuBLAS function except
// through these pointers, so the binary has no libcublas dependency.
// Handles, streams and pointers travel as uintptr_t so that no Go pointer
// crosses the boundary.

static __typeof__(&cublasCreate_v2) placer_p_create;
static __typeof__(&cublasDestroy_v2) placer_p_destroy;
static __typeof__(&cublasSetStream_v2) placer_p_set_stream;
static __typeof__(&cublasGemmEx) placer_p_gemmex;
static __typeof__(&cublasSgemm_v2) placer_p_sgemm;
static __typeof__(&cublasDgemm_v2) placer_p_dgemm;

static void placer_cublas_bind(uintptr_t create, uintptr_t destroy, uintptr_t set_stream, uintptr_t gemmex,
                               uintptr_t sgemm, uintptr_t dgemm) {
	placer_p_create = (__typeof__(placer_p_create))create;
	placer_p_destroy = (__typeof__(placer_p_destroy))destroy;
	placer_p_set_stream = (__typeof__(placer_p_set_stream))set_stream;
	placer_p_gemmex = (__typeof__(placer_p_gemmex))gemmex;
	placer_p_sgemm = (__typeof__(placer_p_sgemm))sgemm;
	placer_p_dgemm = (__typeof__(placer_p_dgemm))dgemm;
}

static int placer_cublas_create(uintptr_t *h) {
	cublasHandle_t hh;
	cublasStatus_t s = placer_p_create(&hh);
	*h = (uintptr_t)hh;
	return (int)s;
}

static int placer_cublas_destroy(uintptr_t h) { return (int)placer_p_destroy((cublasHandle_t)h); }

static int placer_cublas_set_stream(uintptr_t h, uintptr_t s) {
	return (int)placer_p_set_stream((cublasHandle_t)h, (cudaStream_t)s);
}

// placer_sgemm_dgemm: FP32 (d = 0) or FP64 (d = 1) through cublasSgemm /
// cublasDgemm, as the micro-benchmarks measure them.
static int placer_sgemm_dgemm(uintptr_t h, int d, int m, int n, int k, uintptr_t a, uintptr_t b, uintptr_t c) {
	if (d) {
		double one = 1.0, zero = 0.0;
		return (int)placer_p_dgemm((cublasHandle_t)h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, (const double *)a, m,
		                           (const double *)b, k, &zero, (double *)c, m);
	}
	float one = 1.0f, zero = 0.0f;
	return (int)placer_p_sgemm((cublasHandle_t)h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, (const float *)a, m,
	                           (const float *)b, k, &zero, (float *)c, m);
}

// placer_gemm: C (m x n) = A (m x k) * B (k x n), column-major, precision
// p as hw.Precision numbers it: 0 fp32, 1 tf32, 2 fp16, 3 bf16, 4 fp64,
// 5 int8 (A transposed, as the i8 tensor-core path wants).
static int placer_gemm(uintptr_t h, int p, int m, int n, int k, uintptr_t a, uintptr_t b, uintptr_t c) {
	cublasHandle_t hh = (cublasHandle_t)h;
	float one = 1.0f, zero = 0.0f;
	double done = 1.0, dzero = 0.0;
	int32_t ione = 1, izero = 0;
	void *A = (void *)a, *B = (void *)b, *C = (void *)c;
	switch (p) {
	case 0:
		return (int)placer_p_gemmex(hh, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, CUDA_R_32F, m, B, CUDA_R_32F, k,
		                         &zero, C, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	case 1:
		return (int)placer_p_gemmex(hh, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, CUDA_R_32F, m, B, CUDA_R_32F, k,
		                         &zero, C, CUDA_R_32F, m, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
	case 2:
		return (int)placer_p_gemmex(hh, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, CUDA_R_16F, m, B, CUDA_R_16F, k,
		                         &zero, C, CUDA_R_16F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
	case 3:
		return (int)placer_p_gemmex(hh, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, CUDA_R_16BF, m, B, CUDA_R_16BF, k,
		                         &zero, C, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
	case 4:
		return (int)placer_p_gemmex(hh, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &done, A, CUDA_R_64F, m, B, CUDA_R_64F, k,
		                         &dzero, C, CUDA_R_64F, m, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
	case 5:
		return (int)placer_p_gemmex(hh, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &ione, A, CUDA_R_8I, k, B, CUDA_R_8I, k,
		                         &izero, C, CUDA_R_32I, m, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
	}
	return (int)CUBLAS_STATUS_INVALID_VALUE;
}

static int placer_host_alloc(size_t n, uintptr_t *p) {
	void *q = NULL;
	CUresult r = cuMemAllocHost(&q, n);
	*p = (uintptr_t)q;
	return (int)r;
}

static int placer_host_free(uintptr_t p) { return (int)cuMemFreeHost((void *)p); }

static int placer_htod(uintptr_t dst, uintptr_t src, size_t n, uintptr_t s) {
	return (int)cuMemcpyHtoDAsync((CUdeviceptr)dst, (const void *)src, n, (CUstream)s);
}

static int placer_dtoh(uintptr_t dst, uintptr_t src, size_t n, uintptr_t s) {
	return (int)cuMemcpyDtoHAsync((void *)dst, (CUdeviceptr)src, n, (CUstream)s);
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"gorgonia.org/cu"
)

// CUDAEnabled reports whether this binary was built with the `cuda` tag.
const CUDAEnabled = true

// cublasError is a cuBLAS status.
type cublasError int

func (e cublasError) Error() string {
	names := map[int]string{1: "NOT_INITIALIZED", 3: "ALLOC_FAILED", 7: "INVALID_VALUE", 8: "ARCH_MISMATCH",
		11: "MAPPING_ERROR", 13: "EXECUTION_FAILED", 14: "INTERNAL_ERROR", 15: "NOT_SUPPORTED", 16: "LICENSE_ERROR"}
	if n, ok := names[int(e)]; ok {
		return "cuBLAS " + n
	}
	return fmt.Sprintf("cuBLAS status %d", int(e))
}

func cublasErr(s C.int) error {
	if s == 0 {
		return nil
	}
	return cublasError(s)
}

func cuErr(r C.int) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("CUDA error %d", int(r))
}

// worker runs every CUDA call on one locked OS thread: the driver API's
// current context is per thread.
type worker struct{ jobs chan func() }

func newWorker() *worker {
	w := &worker{jobs: make(chan func())}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		for f := range w.jobs {
			f()
		}
	}()
	return w
}

func (w *worker) do(f func() error) error {
	done := make(chan error, 1)
	w.jobs <- func() { done <- f() }
	return <-done
}

func (w *worker) stop() { close(w.jobs) }

// buffer is a device allocation that grows on demand.
type buffer struct {
	ptr  cu.DevicePtr
	size int64
}

func (b *buffer) ensure(n int64) error {
	if n <= b.size {
		return nil
	}
	if b.size > 0 {
		if err := cu.MemFree(b.ptr); err != nil {
			return err
		}
		b.ptr, b.size = 0, 0
	}
	p, err := cu.MemAlloc(n)
	if err != nil {
		return fmt.Errorf("cuMemAlloc(%d bytes): %w", n, err)
	}
	b.ptr, b.size = p, n
	return nil
}

func (b *buffer) free() {
	if b.size > 0 {
		cu.MemFree(b.ptr)
		b.ptr, b.size = 0, 0
	}
}

func (b *buffer) uptr() C.uintptr_t { return C.uintptr_t(b.ptr) }

// gpu is one physical GPU with its primary context, cuBLAS handle, the
// placer kernels and scratch buffers.
type gpu struct {
	ordinal int
	dev     cu.Device
	ctx     cu.CUContext
	name    string
	cc      [2]int
	sms     int
	total   int64
	blas    C.uintptr_t
	mod     cu.Module
	empty   cu.Function
	rw      cu.Function
	spin    cu.Function

	a, b, c, send, recv buffer
}

func openGPU(ordinal int) (*gpu, error) {
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return nil, fmt.Errorf("GPU %d: %w", ordinal, err)
	}
	g := &gpu{ordinal: ordinal, dev: dev}
	if g.name, err = dev.Name(); err != nil {
		return nil, err
	}
	attrs, err := dev.Attributes(cu.ComputeCapabilityMajor, cu.ComputeCapabilityMinor, cu.MultiprocessorCount)
	if err != nil {
		return nil, err
	}
	g.cc, g.sms = [2]int{attrs[0], attrs[1]}, attrs[2]
	if g.total, err = dev.TotalMem(); err != nil {
		return nil, err
	}
	if g.ctx, err = dev.RetainPrimaryCtx(); err != nil {
		return nil, fmt.Errorf("GPU %d: retain primary context: %w", ordinal, err)
	}
	if err := cu.SetCurrentContext(g.ctx); err != nil {
		return nil, err
	}
	if g.mod, err = cu.LoadData(kernelsPTX); err != nil {
		return nil, fmt.Errorf("GPU %d: load placer kernels (PTX needs a driver for CUDA 11.8 or later): %w", ordinal, err)
	}
	for _, f := range []struct {
		fn   *cu.Function
		name string
	}{{&g.empty, "placer_empty"}, {&g.rw, "placer_rw"}, {&g.spin, "placer_spin"}} {
		if *f.fn, err = g.mod.Function(f.name); err != nil {
			return nil, fmt.Errorf("GPU %d: kernel %s: %w", ordinal, f.name, err)
		}
	}
	if err := bindCublas(); err != nil {
		return nil, fmt.Errorf("GPU %d: %w", ordinal, err)
	}
	var h C.uintptr_t
	if err := cublasErr(C.placer_cublas_create(&h)); err != nil {
		return nil, fmt.Errorf("GPU %d: cublasCreate: %w", ordinal, err)
	}
	g.blas = h
	return g, nil
}

// bindCublas loads cuBLAS (LoadCublas) and hands its functions to the C
// side, once per process.
func bindCublas() error {
	lib, err := LoadCublas()
	if err != nil {
		return err
	}
	cublasBindOnce.Do(func() {
		f := func(name string) C.uintptr_t { return C.uintptr_t(lib.sym(name)) }
		C.placer_cublas_bind(f("cublasCreate_v2"), f("cublasDestroy_v2"), f("cublasSetStream_v2"), f("cublasGemmEx"),
			f("cublasSgemm_v2"), f("cublasDgemm_v2"))
	})
	return nil
}

var cublasBindOnce sync.Once

func (g *gpu) current() error { return cu.SetCurrentContext(g.ctx) }

func (g *gpu) close() {
	if g.current() != nil {
		return
	}
	for _, b := range []*buffer{&g.a, &g.b, &g.c, &g.send, &g.recv} {
		b.free()
	}
	if g.blas != 0 {
		C.placer_cublas_destroy(g.blas)
		g.blas = 0
	}
	g.mod.Unload()
	g.dev.ReleasePrimaryCtx()
}

func streamPtr(s cu.Stream) C.uintptr_t { return C.uintptr_t(uintptr(unsafe.Pointer(s.C()))) }

// gemm enqueues a GEMM on stream s using the scratch buffers.
func (g *gpu) gemm(s cu.Stream, p Precision, m, n, k int) error {
	if err := cublasErr(C.placer_cublas_set_stream(g.blas, streamPtr(s))); err != nil {
		return err
	}
	return cublasErr(C.placer_gemm(g.blas, C.int(p), C.int(m), C.int(n), C.int(k), g.a.uptr(), g.b.uptr(), g.c.uptr()))
}

// sgemmDgemm enqueues an FP32 (cublasSgemm) or FP64 (cublasDgemm) GEMM on
// stream s using the scratch buffers.
func (g *gpu) sgemmDgemm(s cu.Stream, p Precision, m, n, k int) error {
	if err := cublasErr(C.placer_cublas_set_stream(g.blas, streamPtr(s))); err != nil {
		return err
	}
	d := C.int(0)
	if p == FP64 {
		d = 1
	}
	return cublasErr(C.placer_sgemm_dgemm(g.blas, d, C.int(m), C.int(n), C.int(k), g.a.uptr(), g.b.uptr(), g.c.uptr()))
}

// hostAlloc allocates n bytes of pinned (page-locked) host memory.
func hostAlloc(n int64) (uintptr, error) {
	var p C.uintptr_t
	if err := cuErr(C.placer_host_alloc(C.size_t(n), &p)); err != nil {
		return 0, fmt.Errorf("cuMemAllocHost(%d bytes): %w", n, err)
	}
	return uintptr(p), nil
}

func hostFree(p uintptr) { C.placer_host_free(C.uintptr_t(p)) }

// htod and dtoh copy n bytes between pinned host memory and the device
// on stream s.
func htod(dst cu.DevicePtr, src uintptr, n int64, s cu.Stream) error {
	return cuErr(C.placer_htod(C.uintptr_t(dst), C.uintptr_t(src), C.size_t(n), streamPtr(s)))
}

func dtoh(dst uintptr, src cu.DevicePtr, n int64, s cu.Stream) error {
	return cuErr(C.placer_dtoh(C.uintptr_t(dst), C.uintptr_t(src), C.size_t(n), streamPtr(s)))
}

func u64(v uint64) unsafe.Pointer { return unsafe.Pointer(&v) }

// launchRW enqueues placer_rw reading nin and writing nout floats.
func (g *gpu) launchRW(s cu.Stream, in, out cu.DevicePtr, nin, nout int64, iters, gather int) error {
	n := max(nin, nout, 1)
	blocks := min((n+255)/256, int64(g.sms)*16)
	args := []unsafe.Pointer{u64(uint64(in)), u64(uint64(nin)), u64(uint64(out)), u64(uint64(nout)), u64(uint64(iters)), u64(uint64(gather))}
	return g.rw.Launch(int(blocks), 1, 1, 256, 1, 1, 0, s, args)
}

func (g *gpu) launchEmpty(s cu.Stream) error { return g.empty.Launch(1, 1, 1, 1, 1, 1, 0, s, nil) }

func (g *gpu) launchSpin(s cu.Stream, ns int64) error {
	return g.spin.Launch(1, 1, 1, 1, 1, 1, 0, s, []unsafe.Pointer{u64(uint64(max(ns, 0)))})
}

// cudaExecutor runs plans (executor).
type cudaExecutor struct {
	w    *worker
	gpus []*gpu
	// streams and events, kept across runs of plans of the same shape
	compute []cu.Stream // per logical device
	copies  []cu.Stream // per channel
	events  []cu.Event
	evGPU   []int
	devices int
}

func newExecutor(o EvalOptions, devices int) (executor, error) {
	w := newWorker()
	ex := &cudaExecutor{w: w}
	err := w.do(func() error {
		n, err := cu.NumDevices()
		if err != nil {
			return err
		}
		if o.FirstGPU < 0 || o.FirstGPU >= n {
			return fmt.Errorf("hw: GPU %d does not exist (%d GPUs)", o.FirstGPU, n)
		}
		use := min(n-o.FirstGPU, devices)
		if o.GPUs > 0 {
			use = min(use, o.GPUs)
		}
		for i := 0; i < use; i++ {
			g, err := openGPU(o.FirstGPU + i)
			if err != nil {
				return err
			}
			ex.gpus = append(ex.gpus, g)
		}
		enablePeers(ex.gpus)
		return nil
	})
	if err != nil {
		ex.Close()
		return nil, err
	}
	return ex, nil
}

// enablePeers turns on peer access between every pair of GPUs that
// supports it (copies between the others are staged by the driver).
func enablePeers(gs []*gpu) {
	for _, a := range gs {
		for _, b := range gs {
			if a == b {
				continue
			}
			if ok, err := a.dev.CanAccessPeer(b.dev); err != nil || ok == 0 {
				continue
			}
			if a.current() == nil {
				if err := b.ctx.EnablePeerAccess(0); err != nil && !errors.Is(err, cu.PeerAccessAlreadyEnabled) {
					continue
				}
			}
		}
	}
}

func (ex *cudaExecutor) GPUs() int { return len(ex.gpus) }

func (ex *cudaExecutor) Close() error {
	if ex.w == nil {
		return nil
	}
	ex.w.do(func() error {
		ex.releaseStreams()
		for _, g := range ex.gpus {
			g.close()
		}
		return nil
	})
	ex.w.stop()
	ex.w = nil
	return nil
}

func (ex *cudaExecutor) releaseStreams() {
	for i := range ex.events {
		ex.gpus[ex.evGPU[i]].current()
		cu.DestroyEvent(&ex.events[i])
	}
	for i := range ex.compute {
		ex.compute[i].Destroy()
	}
	for i := range ex.copies {
		ex.copies[i].Destroy()
	}
	ex.compute, ex.copies, ex.events, ex.evGPU = nil, nil, nil, nil
}

// prepare allocates scratch, streams and events for p (on the worker).
func (ex *cudaExecutor) prepare(p *Plan) error {
	for i, g := range ex.gpus {
		s := p.Scratch[i]
		if err := g.current(); err != nil {
			return err
		}
		need := s.Total()
		have := g.a.size + g.b.size + g.c.size + g.send.size + g.recv.size
		if free, _, err := cu.MemInfo(); err == nil && need-have > free {
			return fmt.Errorf("hw: the plan needs %.2f GiB of scratch memory on GPU %d (%s); %.2f GiB are free",
				float64(need)/(1<<30), g.ordinal, g.name, float64(free+have)/(1<<30))
		}
		for _, b := range []struct {
			buf *buffer
			n   int64
		}{{&g.a, s.A}, {&g.b, s.B}, {&g.c, s.C}, {&g.send, s.Send}, {&g.recv, s.Recv}} {
			if err := b.buf.ensure(max(b.n, 4)); err != nil {
				return fmt.Errorf("GPU %d: %w", g.ordinal, err)
			}
		}
	}
	if ex.devices != p.Devices || len(ex.copies) != p.Channels {
		ex.releaseStreams()
		ex.devices = p.Devices
		for d := 0; d < p.Devices; d++ {
			g := ex.gpus[p.DeviceGPU[d]]
			g.current()
			s, err := cu.MakeStream(cu.NonBlocking)
			if err != nil {
				return err
			}
			ex.compute = append(ex.compute, s)
		}
		for ch := 0; ch < p.Channels; ch++ {
			g := ex.gpus[p.ChannelGPU[ch]]
			g.current()
			s, err := cu.MakeStream(cu.NonBlocking)
			if err != nil {
				return err
			}
			ex.copies = append(ex.copies, s)
		}
	}
	// Events live in the context of the stream that records them.
	want := make([]int, p.Events)
	for _, k := range p.Kernels {
		if k.Record >= 0 {
			want[k.Record] = p.DeviceGPU[k.Device]
		}
	}
	for _, x := range p.Copies {
		want[x.Record] = p.ChannelGPU[x.Channel]
	}
	for i, gi := range want {
		if i < len(ex.events) && ex.evGPU[i] == gi {
			continue
		}
		g := ex.gpus[gi]
		g.current()
		e, err := cu.MakeEvent(cu.DisableTiming)
		if err != nil {
			return err
		}
		if i < len(ex.events) {
			ex.gpus[ex.evGPU[i]].current()
			cu.DestroyEvent(&ex.events[i])
			ex.events[i], ex.evGPU[i] = e, gi
		} else {
			ex.events = append(ex.events, e)
			ex.evGPU = append(ex.evGPU, gi)
		}
	}
	return nil
}

// Run implements executor.
func (ex *cudaExecutor) Run(ctx context.Context, p *Plan, runs int) (RunTimes, error) {
	var rt RunTimes
	err := ex.w.do(func() error {
		if err := ex.prepare(p); err != nil {
			return err
		}
		notes := map[string]bool{}
		for r := 0; r < runs; r++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := ex.syncAll(); err != nil {
				return err
			}
			t0 := time.Now()
			if err := ex.enqueue(p, nil, notes); err != nil {
				return err
			}
			if err := ex.syncAll(); err != nil {
				return err
			}
			rt.Step = append(rt.Step, time.Since(t0).Seconds())
		}
		busy, kernels, err := ex.profile(p, notes)
		if err != nil {
			return err
		}
		rt.Busy, rt.Kernel = busy, kernels
		for n := range notes {
			rt.Notes = append(rt.Notes, n)
		}
		return nil
	})
	return rt, err
}

func (ex *cudaExecutor) syncAll() error {
	for _, g := range ex.gpus {
		if err := g.current(); err != nil {
			return err
		}
		if err := cu.Synchronize(); err != nil {
			return fmt.Errorf("GPU %d: %w", g.ordinal, err)
		}
	}
	return nil
}

// profile runs p once more with timing events around every kernel and
// returns each logical device's summed kernel time.
func (ex *cudaExecutor) profile(p *Plan, notes map[string]bool) ([]float64, []float64, error) {
	timing := make([][2]cu.Event, len(p.Kernels))
	defer func() {
		for k := range timing {
			if timing[k][0] != (cu.Event{}) {
				ex.gpus[p.DeviceGPU[p.Kernels[k].Device]].current()
				cu.DestroyEvent(&timing[k][0])
				cu.DestroyEvent(&timing[k][1])
			}
		}
	}()
	for k := range p.Kernels {
		ex.gpus[p.DeviceGPU[p.Kernels[k].Device]].current()
		for j := 0; j < 2; j++ {
			e, err := cu.MakeEvent(cu.DefaultEvent)
			if err != nil {
				return nil, nil, err
			}
			timing[k][j] = e
		}
	}
	if err := ex.syncAll(); err != nil {
		return nil, nil, err
	}
	if err := ex.enqueue(p, timing, notes); err != nil {
		return nil, nil, err
	}
	if err := ex.syncAll(); err != nil {
		return nil, nil, err
	}
	busy := make([]float64, p.Devices)
	kernels := make([]float64, len(p.Kernels))
	for k, kn := range p.Kernels {
		ex.gpus[p.DeviceGPU[kn.Device]].current()
		ms, err := timing[k][0].Elapsed(timing[k][1])
		if err != nil {
			return nil, nil, err
		}
		busy[kn.Device] += ms / 1e3
		kernels[k] = ms / 1e3
	}
	return busy, kernels, nil
}

// enqueue issues every step of p once; with timing, it records a pair of
// timing events around each kernel.
func (ex *cudaExecutor) enqueue(p *Plan, timing [][2]cu.Event, notes map[string]bool) error {
	cur := -1
	use := func(gi int) error {
		if gi == cur {
			return nil
		}
		cur = gi
		return ex.gpus[gi].current()
	}
	for _, st := range p.Steps {
		switch st.Kind {
		case StepKernel:
			k := &p.Kernels[st.Index]
			gi := p.DeviceGPU[k.Device]
			if err := use(gi); err != nil {
				return err
			}
			g, s := ex.gpus[gi], ex.compute[k.Device]
			for _, e := range k.Wait {
				if err := s.Wait(ex.events[e], 0); err != nil {
					return fmt.Errorf("stream wait: %w", err)
				}
			}
			if timing != nil {
				if err := timing[st.Index][0].Record(s); err != nil {
					return err
				}
			}
			if err := ex.launch(g, s, k, notes); err != nil {
				return fmt.Errorf("kernel %d (%s, op %d): %w", st.Index, k.Kind, k.Ops[0], err)
			}
			if timing != nil {
				if err := timing[st.Index][1].Record(s); err != nil {
					return err
				}
			}
			if k.Record >= 0 {
				if err := ex.events[k.Record].Record(s); err != nil {
					return err
				}
			}
		case StepCopy:
			x := &p.Copies[st.Index]
			gi := p.ChannelGPU[x.Channel]
			if err := use(gi); err != nil {
				return err
			}
			s := ex.copies[x.Channel]
			if err := s.Wait(ex.events[x.Wait], 0); err != nil {
				return fmt.Errorf("stream wait: %w", err)
			}
			if x.Bytes > 0 {
				src, dst := ex.gpus[p.DeviceGPU[x.Src]], ex.gpus[p.DeviceGPU[x.Dst]]
				var err error
				if src == dst {
					err = cu.MemcpyDtoDAsync(dst.recv.ptr, src.send.ptr, x.Bytes, s)
				} else {
					err = cu.MemcpyPeerAsync(dst.recv.ptr, dst.ctx, src.send.ptr, src.ctx, x.Bytes, s)
				}
				if err != nil {
					return fmt.Errorf("copy of tensor %d (%d -> %d): %w", x.Tensor, x.Src, x.Dst, err)
				}
			}
			if err := ex.events[x.Record].Record(s); err != nil {
				return err
			}
		}
	}
	return nil
}

func (ex *cudaExecutor) launch(g *gpu, s cu.Stream, k *Kernel, notes map[string]bool) error {
	switch k.Kind {
	case KernelGEMM:
		err := g.gemm(s, k.Precision, k.M, k.N, k.K)
		var ce cublasError
		if errors.As(err, &ce) && (ce == 15 || ce == 8) && k.Precision != FP32 { // NOT_SUPPORTED, ARCH_MISMATCH
			notes[fmt.Sprintf("GPU %d (%s) has no %s GEMM: those ran as FP32", g.ordinal, g.name, k.Precision)] = true
			return g.gemm(s, FP32, k.M, k.N, k.K)
		}
		return err
	case KernelMemory:
		return g.launchRW(s, g.a.ptr, g.c.ptr, k.ReadBytes/4, max(k.WriteBytes/4, 1), k.Iters, k.Gather)
	case KernelSpin:
		return g.launchSpin(s, k.SpinNS)
	}
	return fmt.Errorf("unknown kernel kind %d", k.Kind)
}
