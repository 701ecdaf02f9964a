//go:build cuda

package hw

import (
	"context"
	"fmt"
	"io"
	"time"

	"gorgonia.org/cu"

	"github.com/placer/placer/graph"
)

// eventTimer measures GPU time on one stream between two events.
type eventTimer struct {
	s           cu.Stream
	start, stop cu.Event
}

func newEventTimer(s cu.Stream) (*eventTimer, error) {
	t := &eventTimer{s: s}
	var err error
	if t.start, err = cu.MakeEvent(cu.DefaultEvent); err != nil {
		return nil, err
	}
	if t.stop, err = cu.MakeEvent(cu.DefaultEvent); err != nil {
		cu.DestroyEvent(&t.start)
		return nil, err
	}
	return t, nil
}

func (t *eventTimer) close() {
	cu.DestroyEvent(&t.start)
	cu.DestroyEvent(&t.stop)
}

// time enqueues f reps times between the events and returns the GPU time
// per repetition in seconds.
func (t *eventTimer) time(reps int, f func() error) (float64, error) {
	if err := t.start.Record(t.s); err != nil {
		return 0, err
	}
	for i := 0; i < reps; i++ {
		if err := f(); err != nil {
			return 0, err
		}
	}
	if err := t.stop.Record(t.s); err != nil {
		return 0, err
	}
	if err := t.stop.Synchronize(); err != nil {
		return 0, err
	}
	ms, err := t.start.Elapsed(t.stop)
	if err != nil {
		return 0, err
	}
	return ms / 1e3 / float64(reps), nil
}

// samples times f (one repetition each) n times after one warm-up.
func (t *eventTimer) samples(n int, f func() error) ([]float64, error) {
	if _, err := t.time(1, f); err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for i := range out {
		s, err := t.time(1, f)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs[1:] {
		m = min(m, x)
	}
	return m
}

func pciBusID(dev cu.Device) string {
	a, err := dev.Attributes(cu.PciDomainID, cu.PciBusID, cu.PciDeviceID)
	if err != nil {
		return ""
	}
	return NormalizeBusID(fmt.Sprintf("%x:%x:%x.0", a[0], a[1], a[2]))
}

// nvmlIndex maps CUDA ordinals to NVML's GPU indices by PCI address (the
// two orders differ under CUDA_DEVICE_ORDER=FASTEST_FIRST, the default).
func nvmlIndex(inv *Inventory, gs []*gpu) []int {
	idx := make([]int, len(gs))
	for i, g := range gs {
		idx[i] = -1
		if inv == nil {
			continue
		}
		bus := pciBusID(g.dev)
		for j, ng := range inv.GPUs {
			if ng.PCIBusID == bus {
				idx[i] = j
			}
		}
	}
	return idx
}

func openAll(n int) ([]*gpu, error) {
	var gs []*gpu
	for i := 0; i < n; i++ {
		g, err := openGPU(i)
		if err != nil {
			for _, o := range gs {
				o.close()
			}
			return nil, err
		}
		gs = append(gs, g)
	}
	return gs, nil
}

func runBench(ctx context.Context, o BenchOptions, errw io.Writer) (*BenchReport, error) {
	inv, _ := Discover() // NVLink counts; the benchmarks run without NVML too
	w := newWorker()
	defer w.stop()
	rep := &BenchReport{Index: o.GPU, NVLinks: -1}
	err := w.do(func() error {
		n, err := cu.NumDevices()
		if err != nil {
			return err
		}
		if o.GPU < 0 || o.GPU >= n {
			return fmt.Errorf("hw: GPU %d does not exist (%d GPUs)", o.GPU, n)
		}
		gs, err := openAll(n)
		if err != nil {
			return err
		}
		defer func() {
			for _, g := range gs {
				g.close()
			}
		}()
		enablePeers(gs)
		nv := nvmlIndex(inv, gs)
		g := gs[o.GPU]
		rep.GPU, rep.SMs, rep.MemoryTotal, rep.CUDADriver = g.name, g.sms, g.total, cu.Version()
		rep.ComputeCapability = fmt.Sprintf("%d.%d", g.cc[0], g.cc[1])
		if a, err := g.dev.Attributes(cu.MemoryClockRate, cu.GlobalMemoryBusWidth); err == nil {
			rep.TheoreticalMemBandwidth = float64(a[0]) * 1e3 * 2 * float64(a[1]) / 8
		}
		if nv[o.GPU] >= 0 {
			rep.NVLinks = len(inv.GPUs[nv[o.GPU]].NVLinks)
		}
		if err := g.current(); err != nil {
			return err
		}
		s, err := cu.MakeStream(cu.NonBlocking)
		if err != nil {
			return err
		}
		defer s.Destroy()
		tm, err := newEventTimer(s)
		if err != nil {
			return err
		}
		defer tm.close()
		reps, big, dim := 10, int64(256<<20), 8192
		if o.Quick {
			reps, big, dim = 3, 32<<20, 2048
		}
		gemmBytes := int64(dim) * int64(dim) * 8
		for _, b := range []*buffer{&g.a, &g.b, &g.c} {
			if err := b.ensure(max(gemmBytes, big)); err != nil {
				return err
			}
		}
		br := &benchRun{ctx: ctx, o: o, errw: errw, rep: rep, inv: inv, nv: nv, gs: gs, g: g, s: s, tm: tm, reps: reps, big: big, dim: dim}
		if err := br.gemms(); err != nil {
			return err
		}

		// Device memory: copy engine and streaming kernel.
		rep.Copies = append(rep.Copies, br.copyRes("d2d", o.GPU, o.GPU, big, 2*float64(big),
			func() error { return cu.MemcpyDtoDAsync(g.c.ptr, g.a.ptr, big, s) },
			func() error { return cu.MemcpyDtoDAsync(g.c.ptr, g.a.ptr, 4, s) }))
		rep.Copies = append(rep.Copies, br.copyRes("rw", o.GPU, o.GPU, big, 2*float64(big),
			func() error { return g.launchRW(s, g.a.ptr, g.c.ptr, big/4, big/4, 0, 0) }, nil))

		// Host <-> device through pinned memory.
		if host, err := hostAlloc(big); err != nil {
			rep.Notes = append(rep.Notes, "no pinned host memory: "+err.Error())
		} else {
			defer hostFree(host)
			rep.Copies = append(rep.Copies, br.copyRes("h2d", -1, o.GPU, big, float64(big),
				func() error { return htod(g.a.ptr, host, big, s) },
				func() error { return htod(g.a.ptr, host, 4, s) }))
			rep.Copies = append(rep.Copies, br.copyRes("d2h", o.GPU, -1, big, float64(big),
				func() error { return dtoh(host, g.a.ptr, big, s) },
				func() error { return dtoh(host, g.a.ptr, 4, s) }))
		}
		if err := br.peers(); err != nil {
			return err
		}
		if err := br.launch(); err != nil {
			return err
		}
		if len(gs) == 1 {
			rep.Notes = append(rep.Notes, "one GPU: no peer copies measured")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// benchRun is one runBench's state on the benchmarked GPU g (of gs, each
// GPU's NVML index in nv): its stream s and event timer tm, the repeats
// of each timing and the sizes (big: a copy's bytes; dim: a GEMM's), and
// the report being filled.
type benchRun struct {
	ctx  context.Context
	o    BenchOptions
	errw io.Writer
	rep  *BenchReport
	inv  *Inventory
	nv   []int
	gs   []*gpu
	g    *gpu
	s    cu.Stream
	tm   *eventTimer
	reps int
	big  int64
	dim  int
}

// gemms times a GEMM at every precision.
func (br *benchRun) gemms() error {
	ctx, g, s, tm, rep, reps, dim, errw := br.ctx, br.g, br.s, br.tm, br.rep, br.reps, br.dim, br.errw
	for _, p := range Precisions() {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := dim
		if p == FP32 || p == FP64 {
			d = dim / 2 // CUDA-core GEMMs: 4096 is plenty and 8x faster to run
		}
		r := GEMMResult{Precision: p, M: d, N: d, K: d}
		f := func() error { return g.gemm(s, p, d, d, d) }
		if p == FP32 || p == FP64 {
			// FP32/FP64 through cublasSgemm/cublasDgemm (until
			// 2026-11-25 gorgonia.org/cu/blas's, on the default stream;
			// it links libcublas, so placer calls them itself).
			f = func() error { return g.sgemmDgemm(s, p, d, d, d) }
		}
		t := &eventTimer{s: s, start: tm.start, stop: tm.stop}
		xs, err := t.samples(reps, f)
		if err != nil {
			r.Error = err.Error()
		} else {
			r.Seconds = minOf(xs)
			r.FLOPS = 2 * float64(d) * float64(d) * float64(d) / r.Seconds
		}
		rep.GEMM = append(rep.GEMM, r)
		fmt.Fprintf(errw, "gemm %s %dx%dx%d: %s\n", p, d, d, d, gemmSummary(r))
	}
	return nil
}

// copyRes times a copy (f; small, where not nil, a 4-byte one for its
// latency) of bytes from src to dst moving traffic bytes, with br.tm.
func (br *benchRun) copyRes(kind string, src, dst int, bytes int64, traffic float64, f func() error, small func() error) CopyResult {
	tm, reps, errw := br.tm, br.reps, br.errw
	c := CopyResult{Kind: kind, Src: src, Dst: dst, Bytes: bytes}
	xs, err := tm.samples(reps, f)
	if err != nil {
		c.Error = err.Error()
		return c
	}
	c.Seconds = minOf(xs)
	c.Bandwidth = traffic / c.Seconds
	if small != nil {
		if lat, err := tm.time(100, small); err == nil {
			c.Latency = lat
		}
	}
	fmt.Fprintf(errw, "%s %s -> %s: %.1f GB/s\n", kind, endpoint(src), endpoint(dst), c.Bandwidth/1e9)
	return c
}

// peers times the copies between every ordered pair of GPUs, each on a
// stream and timer of its own.
func (br *benchRun) peers() error {
	ctx, gs, inv, nv, big, rep := br.ctx, br.gs, br.inv, br.nv, br.big, br.rep
	for i, a := range gs {
		for j, b := range gs {
			if i == j {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := b.current(); err != nil {
				return err
			}
			if err := b.recv.ensure(big); err != nil {
				return err
			}
			if err := a.current(); err != nil {
				return err
			}
			if err := a.send.ensure(big); err != nil {
				return err
			}
			ps, err := cu.MakeStream(cu.NonBlocking)
			if err != nil {
				return err
			}
			pt, err := newEventTimer(ps)
			if err != nil {
				ps.Destroy()
				return err
			}
			old := br.tm
			br.tm = pt
			c := br.copyRes("peer", i, j, big, float64(big),
				func() error { return cu.MemcpyPeerAsync(b.recv.ptr, b.ctx, a.send.ptr, a.ctx, big, ps) },
				func() error { return cu.MemcpyPeerAsync(b.recv.ptr, b.ctx, a.send.ptr, a.ctx, 4, ps) })
			br.tm = old
			pt.close()
			ps.Destroy()
			if nv[i] >= 0 && nv[j] >= 0 {
				c.NVLinks = inv.Topology[nv[i]][nv[j]].NVLinks
			}
			rep.Copies = append(rep.Copies, c)
		}
	}
	return nil
}

// launch times an empty kernel's launch, on the GPU and on the host.
func (br *benchRun) launch() error {
	g, s, tm, rep := br.g, br.s, br.tm, br.rep
	if err := g.current(); err != nil {
		return err
	}
	nl := 2000
	if br.o.Quick {
		nl = 200
	}
	if _, err := tm.time(10, func() error { return g.launchEmpty(s) }); err != nil {
		return err
	}
	t0 := time.Now()
	gpuT, err := tm.time(nl, func() error { return g.launchEmpty(s) })
	if err != nil {
		return err
	}
	rep.Launch = LaunchResult{GPU: gpuT, Host: time.Since(t0).Seconds() / float64(nl)}
	return nil
}

func gemmSummary(r GEMMResult) string {
	if r.Error != "" {
		return r.Error
	}
	return fmt.Sprintf("%.1f TFLOP/s", r.FLOPS/1e12)
}

// runCalibrate measures kernels of every class at several sizes on GPU
// o.GPU: GEMMs (matmul), streaming and FMA-bound placer_rw (elementwise),
// placer_rw with few outputs (reduction), cuMemcpyDtoD (data movement)
// and gathering placer_rw (embedding); each timing is the median of its
// repeats after a warm-up, measured with events around a single kernel.
func runCalibrate(ctx context.Context, o CalibrateOptions, errw io.Writer) (CalibrationRun, error) {
	w := newWorker()
	defer w.stop()
	var run CalibrationRun
	err := w.do(func() error {
		n, err := cu.NumDevices()
		if err != nil {
			return err
		}
		if o.GPU < 0 || o.GPU >= n {
			return fmt.Errorf("hw: GPU %d does not exist (%d GPUs)", o.GPU, n)
		}
		g, err := openGPU(o.GPU)
		if err != nil {
			return err
		}
		defer g.close()
		run.GPU, run.MemoryTotal = g.name, g.total
		s, err := cu.MakeStream(cu.NonBlocking)
		if err != nil {
			return err
		}
		defer s.Destroy()
		tm, err := newEventTimer(s)
		if err != nil {
			return err
		}
		defer tm.close()
		reps := 5
		gemmSizes := []int{256, 512, 1024, 2048, 4096, 8192}
		streamSizes := []int64{1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26} // floats
		if o.Quick {
			reps, gemmSizes, streamSizes = 2, []int{512, 2048}, []int64{1 << 20, 1 << 24}
		}
		maxDim := int64(gemmSizes[len(gemmSizes)-1])
		buf := max(maxDim*maxDim*4, streamSizes[len(streamSizes)-1]*4)
		for _, b := range []*buffer{&g.a, &g.b, &g.c} {
			if err := b.ensure(buf); err != nil {
				return err
			}
		}
		measure := func(t KernelTiming, f func() error) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			xs, err := tm.samples(reps, f)
			if err != nil {
				run.Notes = append(run.Notes, fmt.Sprintf("%s: %v", t.Name, err))
				return nil
			}
			t.Seconds = Median(xs)
			run.Timings = append(run.Timings, t)
			fmt.Fprintf(errw, "%-40s %10.1f us\n", t.Name, t.Seconds*1e6)
			return nil
		}

		// Launch overhead: back-to-back empty kernels.
		if _, err := tm.time(10, func() error { return g.launchEmpty(s) }); err != nil {
			return err
		}
		t0 := time.Now()
		gpuT, err := tm.time(1000, func() error { return g.launchEmpty(s) })
		if err != nil {
			return err
		}
		run.Launch = max(gpuT, time.Since(t0).Seconds()/1000)

		if err := calibrateGEMMs(measure, g, s, gemmSizes); err != nil {
			return err
		}
		if err := calibrateMemory(measure, g, s, streamSizes); err != nil {
			return err
		}
		run.Notes = append(run.Notes, "convolutions are not measured (no cuDNN): their compute efficiency scales with the matmul fit")
		return nil
	})
	return run, err
}

// timeKernel times one kernel (run by f) as runCalibrate's measure does:
// a timing kept, or a note where it failed; an error only for a
// cancelled context.
type timeKernel func(t KernelTiming, f func() error) error

// calibrateGEMMs times g's GEMMs of every size in gemmSizes (square) at FP32
// and FP16, and TF32 and BF16 from compute capability 8.
func calibrateGEMMs(measure timeKernel, g *gpu, s cu.Stream, gemmSizes []int) error {
	precs := []Precision{FP32, FP16}
	if g.cc[0] >= 8 {
		precs = append(precs, TF32, BF16)
	}
	for _, p := range precs {
		for _, d := range gemmSizes {
			m := int64(d)
			t := KernelTiming{Class: graph.ClassMatMul, DType: p.DType(), TF32: p == TF32,
				Name:  fmt.Sprintf("gemm %s %dx%dx%d", p, d, d, d),
				FLOPs: 2 * float64(m*m*m), Bytes: float64(2*m*m*p.InputSize() + m*m*p.OutputSize())}
			if err := measure(t, func() error { return g.gemm(s, p, d, d, d) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// calibrateMemory times g's memory-bound kernels of every size in
// streamSizes (floats): a streaming elementwise kernel, a reduction, a device copy
// and a gather; then FMA-bound elementwise kernels.
func calibrateMemory(measure timeKernel, g *gpu, s cu.Stream, streamSizes []int64) error {
	for _, e := range streamSizes {
		b := float64(8 * e)
		if err := measure(KernelTiming{Class: graph.ClassElementwise, DType: graph.F32, Name: fmt.Sprintf("elementwise stream %d", e), FLOPs: 2 * float64(e), Bytes: b},
			func() error { return g.launchRW(s, g.a.ptr, g.c.ptr, e, e, 1, 0) }); err != nil {
			return err
		}
		if err := measure(KernelTiming{Class: graph.ClassReduction, DType: graph.F32, Name: fmt.Sprintf("reduction %d/1024", e), FLOPs: float64(e), Bytes: float64(4*e + 4*max(e/1024, 1))},
			func() error { return g.launchRW(s, g.a.ptr, g.c.ptr, e, max(e/1024, 1), 0, 0) }); err != nil {
			return err
		}
		if err := measure(KernelTiming{Class: graph.ClassDataMovement, DType: graph.F32, Name: fmt.Sprintf("memcpy d2d %d", e), Bytes: b},
			func() error { return cu.MemcpyDtoDAsync(g.c.ptr, g.a.ptr, 4*e, s) }); err != nil {
			return err
		}
		if err := measure(KernelTiming{Class: graph.ClassEmbedding, DType: graph.F32, Name: fmt.Sprintf("gather rows of 128, %d", e), Bytes: b},
			func() error { return g.launchRW(s, g.a.ptr, g.c.ptr, e, e, 0, 128) }); err != nil {
			return err
		}
	}
	// FMA-bound elementwise kernels pin the elementwise compute efficiency.
	for _, iters := range []int{64, 256} {
		e := int64(1 << 22)
		if err := measure(KernelTiming{Class: graph.ClassElementwise, DType: graph.F32, Name: fmt.Sprintf("elementwise fma x%d %d", iters, e), FLOPs: 2 * float64(iters) * float64(e), Bytes: float64(8 * e)},
			func() error { return g.launchRW(s, g.a.ptr, g.c.ptr, e, e, iters, 0) }); err != nil {
			return err
		}
	}
	return nil
}
