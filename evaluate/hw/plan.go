package hw

import (
	"fmt"
	"math"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// KernelKind is what a planned kernel runs on the GPU.
type KernelKind uint8

// The kernel kinds.
const (
	// KernelGEMM is a cuBLAS GEMM of M x N x K at a Precision (matmul and
	// convolution groups; convolutions run as their implicit GEMM).
	KernelGEMM KernelKind = iota
	// KernelMemory is placer_rw: it reads ReadBytes and writes WriteBytes
	// of device memory with Iters FMAs per element, streaming or (Gather
	// > 0) gathering rows (every other class).
	KernelMemory
	// KernelSpin is placer_spin: it holds the GPU for SpinNS nanoseconds
	// (ops that carry a measured time instead of a cost).
	KernelSpin
)

// String is the kind's name: "gemm", "memory" or "spin".
func (k KernelKind) String() string {
	switch k {
	case KernelGEMM:
		return "gemm"
	case KernelMemory:
		return "memory"
	case KernelSpin:
		return "spin"
	}
	return fmt.Sprintf("kernel(%d)", k)
}

// Precision is the arithmetic of a cuBLAS GEMM.
type Precision uint8

// The GEMM precisions cuBLAS offers (cublasGemmEx; FP8 needs cublasLt and
// is not among them).
const (
	FP32 Precision = iota // SGEMM on CUDA cores
	TF32                  // f32 data, TF32 tensor cores (compute capability 8.0+)
	FP16                  // f16 data, f32 accumulation, tensor cores (7.0+)
	BF16                  // bf16 data, f32 accumulation, tensor cores (8.0+)
	FP64                  // DGEMM
	INT8                  // i8 data, i32 accumulation (IMMA tensor cores on 7.5+)
	numPrecisions
)

var precisionNames = [...]string{"fp32", "tf32", "fp16", "bf16", "fp64", "int8"}

// String is the precision's name: "fp32", "tf32", "fp16", "bf16", "fp64"
// or "int8".
func (p Precision) String() string {
	if int(p) < len(precisionNames) {
		return precisionNames[p]
	}
	return fmt.Sprintf("precision(%d)", p)
}

// Precisions lists every GEMM precision.
func Precisions() []Precision {
	ps := make([]Precision, numPrecisions)
	for i := range ps {
		ps[i] = Precision(i)
	}
	return ps
}

// InputSize is the size in bytes of one element of A and B.
func (p Precision) InputSize() int64 {
	switch p {
	case FP16, BF16:
		return 2
	case FP64:
		return 8
	case INT8:
		return 1
	}
	return 4
}

// OutputSize is the size in bytes of one element of C.
func (p Precision) OutputSize() int64 {
	switch p {
	case FP16, BF16:
		return 2
	case FP64:
		return 8
	}
	return 4 // fp32, tf32, and int8's i32 accumulators
}

// DType is the graph dtype whose peak (roofline.Hardware.PeakFLOPS) the
// precision's GEMMs are held against; AllowTF32 decides f32 vs tf32.
func (p Precision) DType() graph.DType {
	switch p {
	case FP16:
		return graph.F16
	case BF16:
		return graph.BF16
	case FP64:
		return graph.F64
	case INT8:
		return graph.I8
	}
	return graph.F32
}

// PrecisionFor is the GEMM precision of an op of dtype t: f32 uses TF32
// tensor cores when allowTF32; integer and boolean dtypes other than i8
// have no cuBLAS GEMM and run as FP32.
func PrecisionFor(t graph.DType, allowTF32 bool) Precision {
	switch t {
	case graph.F16:
		return FP16
	case graph.BF16:
		return BF16
	case graph.F64:
		return FP64
	case graph.I8:
		return INT8
	case graph.F32:
		if allowTF32 {
			return TF32
		}
	}
	return FP32
}

// Kernel is one planned kernel: a fusion group of the decision, run on
// the stream of its logical device.
type Kernel struct {
	Ops    []int32 // the graph ops it runs (several when fused)
	Device int     // logical device
	Kind   KernelKind
	Class  graph.Class // class of the group's dominant op

	// GEMM: C (M x N) = A (M x K) * B (K x N), column-major, at Precision.
	Precision Precision
	M, N, K   int

	// Memory kernel: bytes read and written (only the group's external
	// tensors count), FMAs per element, gather row length (0 = stream).
	ReadBytes, WriteBytes int64
	Iters                 int
	Gather                int

	// Spin kernel: nanoseconds to hold the GPU.
	SpinNS int64

	FLOPs float64 // total FLOPs of the group

	// The roofline model's schedule of this kernel (seconds from the start
	// of the step): the plan's order comes from it.
	ModelStart, ModelEnd float64

	// Wait lists the events this kernel's stream waits for before it
	// (cross-device inputs: copies, and control predecessors on other
	// devices); Record is the event recorded after it, -1 if no other
	// stream waits for it.
	Wait   []int
	Record int
}

// Copy is one planned tensor transfer between logical devices: a peer
// copy (or a device-to-device copy when both devices share a GPU) on the
// copy stream of its channel, after the producer's event.
type Copy struct {
	Tensor   int
	Src, Dst int // logical devices
	Channel  int // roofline cluster channel: copies of one channel queue on one stream
	Bytes    int64

	ModelStart, ModelEnd float64

	Wait   int // event of the producing kernel
	Record int // event recorded after the copy (its consumers wait for it)
}

// StepKind says whether a Step enqueues a kernel or a copy.
type StepKind uint8

// The step kinds.
const (
	StepKernel StepKind = iota
	StepCopy
)

// Step is one enqueue action: Plan.Kernels[Index] or Plan.Copies[Index].
type Step struct {
	Kind  StepKind
	Index int
}

// Scratch is the device memory one physical GPU needs to run a plan:
// buffers sized for its largest kernel and copies (their contents are
// never read back: only sizes and access patterns matter). GEMM buffers
// hold at least 4 bytes per element so that any GEMM can fall back to
// FP32.
type Scratch struct {
	A, B, C  int64 // GEMM operands, bytes (A and C double as the memory kernel's input and output)
	Send     int64 // largest outgoing copy
	Recv     int64 // largest incoming copy
	Launches int   // kernels and copies enqueued per step on this GPU
}

// Total is the sum of the buffers.
func (s Scratch) Total() int64 { return s.A + s.B + s.C + s.Send + s.Recv }

// Plan is a decision turned into GPU work: kernels with sizes, the global
// order to enqueue them and the copies in, and the events that carry
// dependencies between streams. Enqueueing Steps in order never waits on
// an event that has not been recorded yet (the order is causal).
type Plan struct {
	Devices int // logical devices of the cluster
	GPUs    int // physical GPUs the devices map onto
	// DeviceGPU maps a logical device to its physical GPU (d mod GPUs).
	DeviceGPU []int
	// ChannelGPU maps a copy channel to the GPU whose stream carries it
	// (the sender's).
	ChannelGPU []int
	Channels   int

	Kernels []Kernel
	Copies  []Copy
	Steps   []Step
	Events  int

	// Model is the roofline simulation the plan was derived from: its
	// step time is the prediction, its peak memory, OOM, co-location
	// violations and bytes moved carry over to the measured result.
	Model evaluate.Result

	Scratch []Scratch // per physical GPU
}

// Shared reports whether some GPU runs more than one logical device (as
// separate streams).
func (p *Plan) Shared() bool { return p.Devices > p.GPUs }

// Mapping describes how logical devices map onto GPUs, e.g. "8 devices
// on 2 GPUs: devices run as streams (GPU 0: devices 0,2,4,6; GPU 1:
// devices 1,3,5,7); transfers between devices of one GPU are
// device-to-device copies" or "4 devices on 4 GPUs".
func (p *Plan) Mapping() string {
	if !p.Shared() {
		return fmt.Sprintf("%d devices on %d GPUs", p.Devices, p.GPUs)
	}
	var parts []string
	for g := 0; g < p.GPUs; g++ {
		var ds []string
		for d, dg := range p.DeviceGPU {
			if dg == g {
				ds = append(ds, fmt.Sprint(d))
			}
		}
		parts = append(parts, fmt.Sprintf("GPU %d: devices %s", g, strings.Join(ds, ",")))
	}
	return fmt.Sprintf("%d devices on %d GPU(s): devices run as streams (%s); transfers between devices of one GPU are device-to-device copies",
		p.Devices, p.GPUs, strings.Join(parts, "; "))
}

// PlanOptions tune NewPlan.
type PlanOptions struct {
	// GPUs is the number of physical GPUs; logical device d runs on GPU
	// d mod GPUs. 0 means one GPU per device.
	GPUs int
	// MaxIters caps the FMAs per element of a memory kernel (default 4096).
	MaxIters int
}

// planRecorder keeps the roofline simulator's kernels and transfers in
// the order it started them, which is causal: a transfer starts after its
// producer, a kernel after its inputs arrived.
type planRecorder struct {
	steps   []Step
	kernels []roofline.KernelSpan
	copies  []roofline.TransferSpan
}

func (r *planRecorder) Kernel(dev int, ops []int32, start, end float64) {
	r.steps = append(r.steps, Step{Kind: StepKernel, Index: len(r.kernels)})
	r.kernels = append(r.kernels, roofline.KernelSpan{Device: dev, Ops: append([]int32(nil), ops...), Start: start, End: end})
}

func (r *planRecorder) Transfer(ch, src, dst, tensor int, bytes int64, start, end float64) {
	r.steps = append(r.steps, Step{Kind: StepCopy, Index: len(r.copies)})
	r.copies = append(r.copies, roofline.TransferSpan{Channel: ch, Src: src, Dst: dst, Tensor: tensor, Bytes: bytes, Start: start, End: end})
}

func (r *planRecorder) Memory(int, float64, int64) {}

// NewPlan turns decision d for model m (a graph compiled for a cluster)
// into a kernel plan. The fusion groups, the per-device order (the
// decision's priorities among ready ops) and the transfers are those of
// the roofline simulation of d, so the measured run executes exactly what
// the model predicts, kernel for kernel.
func NewPlan(m *roofline.Model, d decision.Decision, o PlanOptions) (*Plan, error) {
	if m.Opts.SyncTransfers {
		return nil, fmt.Errorf("hw: plans need the default transfer model, not SyncTransfers")
	}
	rec := &planRecorder{}
	res, err := roofline.NewSimulator(m, rec).Run(d)
	if err != nil {
		return nil, err
	}
	g, c := m.G, m.Cluster
	devices := c.Devices
	gpus := o.GPUs
	if gpus <= 0 || gpus > devices {
		gpus = devices
	}
	maxIters := o.MaxIters
	if maxIters <= 0 {
		maxIters = 4096
	}
	p := &Plan{
		Devices: devices, GPUs: gpus, DeviceGPU: make([]int, devices),
		Channels: c.Channels, ChannelGPU: make([]int, c.Channels),
		Steps: rec.steps, Model: res.Clone(),
		Scratch: make([]Scratch, gpus),
	}
	for dv := range p.DeviceGPU {
		p.DeviceGPU[dv] = dv % gpus
	}
	for s := 0; s < devices; s++ {
		for t := 0; t < devices; t++ {
			if s != t {
				p.ChannelGPU[c.Channel[s*devices+t]] = p.DeviceGPU[s]
			}
		}
	}
	kernelOf, err := p.addKernels(g, rec, m.TF32(), maxIters)
	if err != nil {
		return nil, err
	}
	copyTo := p.addCopies(rec)
	if err := p.addEvents(g, kernelOf, copyTo); err != nil {
		return nil, err
	}
	p.sizeScratch()
	return p, nil
}

// addKernels sets the plan's kernels, the simulation's fused groups,
// each sized (sizeKernel), and returns the op -> kernel map.
func (p *Plan) addKernels(g *graph.Graph, rec *planRecorder, tf roofline.TF32, maxIters int) ([]int32, error) {
	kernelOf := make([]int32, g.NumOps())
	for i := range kernelOf {
		kernelOf[i] = -1
	}
	p.Kernels = make([]Kernel, len(rec.kernels))
	for k, span := range rec.kernels {
		for _, v := range span.Ops {
			kernelOf[v] = int32(k)
		}
		p.Kernels[k] = Kernel{Ops: span.Ops, Device: span.Device, ModelStart: span.Start, ModelEnd: span.End, Record: -1}
	}
	for i, k := range kernelOf {
		if k < 0 {
			return nil, fmt.Errorf("hw: internal error: op %q in no simulated kernel", g.Op(i).Name)
		}
	}
	for k := range p.Kernels {
		sizeKernel(g, &p.Kernels[k], kernelOf, int32(k), tf, maxIters)
	}
	return kernelOf, nil
}

// addCopies sets the plan's copies, the simulation's transfers, and
// returns the copy that brings tensor t to device dst, by {t, dst}.
func (p *Plan) addCopies(rec *planRecorder) map[[2]int]int {
	p.Copies = make([]Copy, len(rec.copies))
	copyTo := make(map[[2]int]int, len(rec.copies))
	for x, span := range rec.copies {
		p.Copies[x] = Copy{Tensor: span.Tensor, Src: span.Src, Dst: span.Dst, Channel: span.Channel, Bytes: span.Bytes,
			ModelStart: span.Start, ModelEnd: span.End, Wait: -1, Record: -1}
		copyTo[[2]int{span.Tensor, span.Dst}] = x
	}
	return copyTo
}

// addEvents sets the plan's events and waits: a kernel records one when
// a copy or another device's kernel waits for it; every copy records one.
func (p *Plan) addEvents(g *graph.Graph, kernelOf []int32, copyTo map[[2]int]int) error {
	event := func(k int) int {
		if p.Kernels[k].Record < 0 {
			p.Kernels[k].Record = p.Events
			p.Events++
		}
		return p.Kernels[k].Record
	}
	for _, st := range p.Steps {
		switch st.Kind {
		case StepCopy:
			x := &p.Copies[st.Index]
			prod := int(kernelOf[g.Tensor(x.Tensor).Producer])
			x.Wait = event(prod)
			x.Record = p.Events
			p.Events++
		case StepKernel:
			k := &p.Kernels[st.Index]
			seen := map[int]bool{}
			wait := func(e int) {
				if !seen[e] {
					seen[e] = true
					k.Wait = append(k.Wait, e)
				}
			}
			for _, v := range k.Ops {
				for _, t := range g.Inputs(int(v)) {
					prod := int(g.Tensor(int(t)).Producer)
					pk := int(kernelOf[prod])
					if pk == st.Index || p.Kernels[pk].Device == k.Device {
						continue // same kernel, or the same stream (in order)
					}
					x, ok := copyTo[[2]int{int(t), k.Device}]
					if !ok {
						return fmt.Errorf("hw: internal error: no transfer of tensor %d to device %d", t, k.Device)
					}
					wait(p.Copies[x].Record)
				}
				for _, pr := range g.ControlPreds(int(v)) {
					pk := int(kernelOf[pr])
					if pk != st.Index && p.Kernels[pk].Device != k.Device {
						wait(event(pk))
					}
				}
			}
		}
	}
	return nil
}

// sizeScratch sets each GPU's scratch buffers: the largest GEMM operands
// and memory kernel's bytes of its kernels, the largest copy it sends and
// receives, and its launches.
func (p *Plan) sizeScratch() {
	for k := range p.Kernels {
		kn := &p.Kernels[k]
		s := &p.Scratch[p.DeviceGPU[kn.Device]]
		s.Launches++
		switch kn.Kind {
		case KernelGEMM:
			// At least 4 bytes per element, so that a GEMM can fall back
			// to FP32 on a GPU without its precision.
			in, out := max(kn.Precision.InputSize(), 4), max(kn.Precision.OutputSize(), 4)
			s.A = max(s.A, int64(kn.M)*int64(kn.K)*in)
			s.B = max(s.B, int64(kn.K)*int64(kn.N)*in)
			s.C = max(s.C, int64(kn.M)*int64(kn.N)*out)
		case KernelMemory:
			s.A = max(s.A, roundUp4(kn.ReadBytes))
			s.C = max(s.C, roundUp4(max(kn.WriteBytes, 4)))
		}
	}
	for _, x := range p.Copies {
		p.Scratch[p.DeviceGPU[x.Src]].Send = max(p.Scratch[p.DeviceGPU[x.Src]].Send, x.Bytes)
		p.Scratch[p.DeviceGPU[x.Dst]].Recv = max(p.Scratch[p.DeviceGPU[x.Dst]].Recv, x.Bytes)
		p.Scratch[p.ChannelGPU[x.Channel]].Launches++
	}
}

func roundUp4(b int64) int64 { return (b + 3) &^ 3 }

// sizeKernel fills in what kernel kn runs: a spin for measured times, a
// GEMM when the group has matmuls or convolutions, a memory kernel
// otherwise; only the group's external tensors count as memory traffic
// (the fused ones stay on chip), as in the roofline model.
//
// An f32 GEMM runs on TF32 tensor cores where tf allows it for its class
// (the model's TF32: the user's, the graph's recorded PyTorch settings,
// or the hardware's; roofline.ResolveTF32).
func sizeKernel(g *graph.Graph, kn *Kernel, kernelOf []int32, self int32, tf roofline.TF32, maxIters int) {
	var spin float64
	var measured int
	var gemmFLOPs float64
	main, gemmMain := -1, -1
	var mainBytes int64 = -1
	for _, v := range kn.Ops {
		op := g.Op(int(v))
		kn.FLOPs += op.FLOPs
		if op.HasTime {
			spin += op.Time
			measured++
			continue
		}
		if op.Class == graph.ClassMatMul || op.Class == graph.ClassConv {
			gemmFLOPs += op.FLOPs
			if gemmMain < 0 || op.FLOPs > g.Op(gemmMain).FLOPs {
				gemmMain = int(v)
			}
		}
		if b := op.BytesRead + op.BytesWritten; b > mainBytes {
			main, mainBytes = int(v), b
		}
		// External traffic: reads of tensors produced outside the group,
		// writes of tensors some consumer outside the group needs.
		read, write := op.BytesRead, op.BytesWritten
		for _, t := range g.Inputs(int(v)) {
			if kernelOf[g.Tensor(int(t)).Producer] == self {
				read -= g.Tensor(int(t)).Bytes
			}
		}
		for _, t := range g.Outputs(int(v)) {
			ts := g.Tensor(int(t))
			internal := len(ts.Consumers) > 0
			for _, c := range ts.Consumers {
				if kernelOf[c] != self {
					internal = false
					break
				}
			}
			if internal {
				write -= ts.Bytes
			}
		}
		kn.ReadBytes += max(read, 0)
		kn.WriteBytes += max(write, 0)
	}
	switch {
	case measured == len(kn.Ops) || (main < 0 && gemmMain < 0):
		kn.Kind = KernelSpin
		kn.Class = g.Op(int(kn.Ops[0])).Class
		kn.SpinNS = int64(math.Round(spin * 1e9))
	case gemmMain >= 0 && gemmFLOPs > 0:
		op := g.Op(gemmMain)
		kn.Kind = KernelGEMM
		kn.Class = op.Class
		kn.Precision = PrecisionFor(op.DType, tf.For(op.Class))
		kn.M, kn.N, kn.K = GEMMDims(op.Shape, gemmFLOPs, kn.Precision == INT8)
	default:
		op := g.Op(main)
		kn.Kind = KernelMemory
		kn.Class = op.Class
		elems := max(kn.ReadBytes, kn.WriteBytes, 4) / 4
		if kn.FLOPs > 0 {
			kn.Iters = min(int(math.Ceil(kn.FLOPs/(2*float64(elems)))), maxIters)
		}
		if op.Class == graph.ClassEmbedding {
			kn.Gather = gatherRow(op.Shape, kn.ReadBytes/4)
		}
	}
}

// gatherRow is the row length (in f32 elements) of an embedding gather:
// the last dimension of its output when it is a sensible row, else 64.
func gatherRow(shape []int64, elems int64) int {
	row := int64(64)
	if n := len(shape); n > 0 && shape[n-1] >= 1 && shape[n-1] <= 1<<16 {
		row = shape[n-1]
	}
	if row > elems {
		return 0 // fewer elements than one row: a plain stream
	}
	return int(row)
}

// maxGEMMDim bounds each GEMM dimension (cuBLAS takes int32 sizes; the
// product of two also sizes a buffer).
const maxGEMMDim = 1 << 20

// GEMMDims derives the M x N x K of a GEMM with the given FLOPs (2MNK)
// from its output shape: N is the last dimension, M the product of the
// others (batch and, for convolutions, the spatial dimensions: the
// implicit GEMM), K = FLOPs / 2MN. Without a usable shape the GEMM is
// square. Dimensions are at least 1 (multiples of 4 for INT8, which
// cuBLAS requires) and at most 2^20.
func GEMMDims(shape []int64, flops float64, int8 bool) (m, n, k int) {
	clamp := func(x float64) int {
		if math.IsNaN(x) || x < 1 {
			x = 1
		}
		x = math.Min(math.Round(x), maxGEMMDim)
		v := int(x)
		if int8 {
			v = (v + 3) &^ 3
		}
		return v
	}
	if flops <= 0 {
		flops = 2
	}
	mf, nf := 0.0, 0.0
	if len(shape) > 0 {
		nf = float64(shape[len(shape)-1])
		mf = 1
		for _, s := range shape[:len(shape)-1] {
			mf *= float64(s)
		}
	}
	if mf < 1 || nf < 1 || flops/(2*mf*nf) < 1 {
		// No shape, or the output is larger than the work (k < 1): a
		// square GEMM of the same FLOPs.
		s := math.Cbrt(flops / 2)
		return clamp(s), clamp(s), clamp(s)
	}
	m, n = clamp(mf), clamp(nf)
	return m, n, clamp(flops / (2 * float64(m) * float64(n)))
}
