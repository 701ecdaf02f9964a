package hw

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

func mustCluster(t testing.TB, preset string, n int, topo string) *roofline.Cluster {
	t.Helper()
	h, err := roofline.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	c, err := roofline.NewCluster(h, n, topo)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustPlan(t testing.TB, g *graph.Graph, c *roofline.Cluster, d decision.Decision, o PlanOptions) *Plan {
	t.Helper()
	m, err := roofline.NewModel(g, c, roofline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(m, d, o)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, g, p, d)
	return p
}

// checkPlan verifies the invariants every plan must keep: each op in
// exactly one kernel on its decided device; every event waited for was
// recorded by an earlier step (a wait enqueued before its record would be
// a no-op on the GPU); every cross-device input arrives through a copy the
// consumer waits for; each device's kernels are enqueued in the model's
// start order; scratch covers every kernel.
func checkPlan(t testing.TB, g *graph.Graph, p *Plan, d decision.Decision) {
	t.Helper()
	seen := make([]int, g.NumOps())
	for i := range seen {
		seen[i] = -1
	}
	for k, kn := range p.Kernels {
		for _, v := range kn.Ops {
			if seen[v] >= 0 {
				t.Fatalf("op %d in kernels %d and %d", v, seen[v], k)
			}
			seen[v] = k
			if d.Device[v] != kn.Device {
				t.Fatalf("op %d decided for device %d runs on %d", v, d.Device[v], kn.Device)
			}
		}
	}
	for v, k := range seen {
		if k < 0 {
			t.Fatalf("op %d in no kernel", v)
		}
	}
	recorded := make([]bool, p.Events)
	record := func(e int) {
		if e < 0 || e >= p.Events {
			t.Fatalf("event %d out of range (%d events)", e, p.Events)
		}
		recorded[e] = true
	}
	waitOK := func(e int, what string) {
		if e < 0 || e >= p.Events || !recorded[e] {
			t.Fatalf("%s waits for event %d before it is recorded", what, e)
		}
	}
	lastStart := make([]float64, p.Devices)
	stepsOf := map[StepKind]int{}
	for _, st := range p.Steps {
		stepsOf[st.Kind]++
		switch st.Kind {
		case StepKernel:
			kn := p.Kernels[st.Index]
			for _, e := range kn.Wait {
				waitOK(e, fmt.Sprintf("kernel %d", st.Index))
			}
			if kn.ModelStart < lastStart[kn.Device] {
				t.Fatalf("kernel %d enqueued out of its device's order", st.Index)
			}
			lastStart[kn.Device] = kn.ModelStart
			if kn.Record >= 0 {
				record(kn.Record)
			}
		case StepCopy:
			x := p.Copies[st.Index]
			waitOK(x.Wait, fmt.Sprintf("copy %d", st.Index))
			if x.Bytes != g.Tensor(x.Tensor).Bytes || x.Src == x.Dst {
				t.Fatalf("copy %+v", x)
			}
			record(x.Record)
		}
	}
	if stepsOf[StepKernel] != len(p.Kernels) || stepsOf[StepCopy] != len(p.Copies) {
		t.Fatalf("steps %v for %d kernels, %d copies", stepsOf, len(p.Kernels), len(p.Copies))
	}
	for v := 0; v < g.NumOps(); v++ {
		k := p.Kernels[seen[v]]
		for _, tt := range g.Inputs(v) {
			prod := g.Tensor(int(tt)).Producer
			if d.Device[prod] == d.Device[v] {
				continue
			}
			found := false
			for _, x := range p.Copies {
				if x.Tensor == int(tt) && x.Dst == d.Device[v] {
					for _, e := range k.Wait {
						found = found || e == x.Record
					}
				}
			}
			if !found {
				t.Fatalf("op %d does not wait for the copy of tensor %d", v, tt)
			}
		}
	}
	for _, kn := range p.Kernels {
		s := p.Scratch[p.DeviceGPU[kn.Device]]
		switch kn.Kind {
		case KernelGEMM:
			if int64(kn.M)*int64(kn.K)*4 > s.A || int64(kn.K)*int64(kn.N)*4 > s.B || int64(kn.M)*int64(kn.N)*4 > s.C {
				t.Fatalf("GEMM %dx%dx%d exceeds scratch %+v", kn.M, kn.N, kn.K, s)
			}
		case KernelMemory:
			if kn.ReadBytes > s.A || kn.WriteBytes > s.C {
				t.Fatalf("memory kernel %d/%d bytes exceeds scratch %+v", kn.ReadBytes, kn.WriteBytes, s)
			}
		}
	}
}

// mlp: x -> matmul (dev 0) -> relu -> matmul (dev 1) -> softmax-sum.
func mlpGraph(t testing.TB) *graph.Graph {
	b := graph.NewBuilder("mlp")
	mm1 := b.AddOp(graph.Op{Name: "mm1", Type: "MatMul", Class: graph.ClassMatMul, DType: graph.F16, Shape: []int64{64, 1024},
		FLOPs: 2 * 64 * 1024 * 512, BytesRead: (64*512 + 512*1024) * 2, BytesWritten: 64 * 1024 * 2, ParamBytes: 512 * 1024 * 2})
	relu := b.AddOp(graph.Op{Name: "relu", Type: "Relu", Class: graph.ClassElementwise, DType: graph.F16, Shape: []int64{64, 1024},
		FLOPs: 64 * 1024, BytesRead: 64 * 1024 * 2, BytesWritten: 64 * 1024 * 2})
	mm2 := b.AddOp(graph.Op{Name: "mm2", Type: "MatMul", Class: graph.ClassMatMul, DType: graph.F32, Shape: []int64{64, 10},
		FLOPs: 2 * 64 * 10 * 1024, BytesRead: (64*1024 + 1024*10) * 4, BytesWritten: 64 * 10 * 4})
	sum := b.AddOp(graph.Op{Name: "sum", Type: "Sum", Class: graph.ClassReduction, DType: graph.F32, Shape: []int64{64},
		FLOPs: 640, BytesRead: 640 * 4, BytesWritten: 64 * 4})
	b.AddTensor(mm1, 64*1024*2, relu)
	b.AddTensor(relu, 64*1024*2, mm2)
	b.AddTensor(mm2, 64*10*4, sum)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestPlanTwoDevices(t *testing.T) {
	g := mlpGraph(t)
	c := mustCluster(t, "a100", 2, "")
	d := decision.Decision{Device: []int{0, 0, 1, 1}}
	p := mustPlan(t, g, c, d, PlanOptions{})
	if len(p.Kernels) != 4 || len(p.Copies) != 1 || p.Shared() || p.GPUs != 2 {
		t.Fatalf("plan: %d kernels, %d copies, %d GPUs", len(p.Kernels), len(p.Copies), p.GPUs)
	}
	x := p.Copies[0]
	if x.Tensor != 1 || x.Src != 0 || x.Dst != 1 || x.Bytes != 64*1024*2 {
		t.Fatalf("copy %+v", x)
	}
	k := p.Kernels[0]
	if k.Kind != KernelGEMM || k.Precision != FP16 || k.M != 64 || k.N != 1024 || k.K != 512 {
		t.Fatalf("mm1 kernel %+v", k)
	}
	var mm2 Kernel
	for _, kn := range p.Kernels {
		if len(kn.Ops) == 1 && kn.Ops[0] == 2 {
			mm2 = kn
		}
	}
	// a100 allows no TF32 by default: f32 runs as FP32.
	if mm2.Kind != KernelGEMM || mm2.Precision != FP32 || mm2.K != 1024 || len(mm2.Wait) != 1 {
		t.Fatalf("mm2 kernel %+v", mm2)
	}
	if p.Model.StepTime <= 0 || p.Model.Transfers != 1 || p.Model.BytesMoved != x.Bytes {
		t.Fatalf("model result %+v", p.Model)
	}
	if !strings.Contains(p.Mapping(), "2 devices on 2 GPUs") {
		t.Fatalf("mapping %q", p.Mapping())
	}
}

func TestPlanFusionExternalBytesOnly(t *testing.T) {
	g := mlpGraph(t)
	c := mustCluster(t, "a100", 1, "")
	d := decision.Decision{Device: []int{0, 0, 0, 0}, Fusion: decision.TopologicalFusion(g)}
	p := mustPlan(t, g, c, d, PlanOptions{})
	if p.Model.Kernels != len(p.Kernels) || len(p.Kernels) >= 4 {
		t.Fatalf("fusion: %d kernels (model %d)", len(p.Kernels), p.Model.Kernels)
	}
	// relu fuses into mm1: the group is a GEMM, and the relu's tensor
	// between them never reaches memory.
	for _, kn := range p.Kernels {
		has := map[int32]bool{}
		for _, v := range kn.Ops {
			has[v] = true
		}
		if has[0] && has[1] {
			if kn.Kind != KernelGEMM || kn.WriteBytes != 64*1024*2 || kn.ReadBytes != (64*512+512*1024)*2 {
				t.Fatalf("fused mm1+relu: %+v", kn)
			}
			return
		}
	}
	t.Fatalf("relu did not fuse into mm1: %+v", p.Kernels)
}

func TestPlanSharedGPU(t *testing.T) {
	g := mlpGraph(t)
	c := mustCluster(t, "h100", 4, "")
	d := decision.Decision{Device: []int{0, 1, 2, 3}}
	p := mustPlan(t, g, c, d, PlanOptions{GPUs: 1})
	if !p.Shared() || p.GPUs != 1 || len(p.Scratch) != 1 || len(p.Copies) != 3 {
		t.Fatalf("shared plan: %+v", p)
	}
	for _, dg := range p.DeviceGPU {
		if dg != 0 {
			t.Fatal("device not on GPU 0")
		}
	}
	if m := p.Mapping(); !strings.Contains(m, "4 devices on 1 GPU(s): devices run as streams (GPU 0: devices 0,1,2,3)") {
		t.Fatalf("mapping %q", m)
	}
	if p.Scratch[0].Send == 0 || p.Scratch[0].Recv == 0 || p.Scratch[0].Launches != 7 {
		t.Fatalf("scratch %+v", p.Scratch[0])
	}
	p2 := mustPlan(t, g, c, d, PlanOptions{GPUs: 2})
	if p2.DeviceGPU[2] != 0 || p2.DeviceGPU[3] != 1 || !strings.Contains(p2.Mapping(), "GPU 1: devices 1,3") {
		t.Fatalf("2 GPUs: %v %q", p2.DeviceGPU, p2.Mapping())
	}
}

func TestPlanPriorityOrder(t *testing.T) {
	b := graph.NewBuilder("fork")
	src := b.AddOp(graph.Op{Name: "src", Class: graph.ClassElementwise, BytesRead: 1 << 20, BytesWritten: 1 << 20})
	l := b.AddOp(graph.Op{Name: "left", Class: graph.ClassElementwise, BytesRead: 1 << 20, BytesWritten: 1 << 20})
	r := b.AddOp(graph.Op{Name: "right", Class: graph.ClassElementwise, BytesRead: 1 << 20, BytesWritten: 1 << 20})
	b.AddTensor(src, 1<<20, l, r)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	c := mustCluster(t, "v100", 1, "")
	order := func(prio []int) []int32 {
		p := mustPlan(t, g, c, decision.Decision{Device: []int{0, 0, 0}, Priority: prio}, PlanOptions{})
		var o []int32
		for _, st := range p.Steps {
			o = append(o, p.Kernels[st.Index].Ops[0])
		}
		return o
	}
	if o := order(nil); o[1] != 1 || o[2] != 2 {
		t.Fatalf("FIFO order %v, want src left right", o)
	}
	if o := order([]int{0, 1, 5}); o[1] != 2 || o[2] != 1 {
		t.Fatalf("priority order %v, want src right left", o)
	}
}

func TestPlanKernelKinds(t *testing.T) {
	b := graph.NewBuilder("kinds")
	m := b.AddOp(graph.Op{Name: "measured", Class: graph.ClassUnknown, HasTime: true, Time: 1.5e-3})
	e := b.AddOp(graph.Op{Name: "emb", Class: graph.ClassEmbedding, DType: graph.F32, Shape: []int64{64, 512},
		BytesRead: 64 * 512 * 4, BytesWritten: 64 * 512 * 4})
	cv := b.AddOp(graph.Op{Name: "conv", Class: graph.ClassConv, DType: graph.BF16, Shape: []int64{32, 28, 28, 256},
		FLOPs: 2 * 32 * 28 * 28 * 256 * 1152, BytesRead: 1 << 20, BytesWritten: 1 << 20})
	q := b.AddOp(graph.Op{Name: "qmm", Class: graph.ClassMatMul, DType: graph.I8, Shape: []int64{30, 30}, FLOPs: 2 * 30 * 30 * 30})
	ew := b.AddOp(graph.Op{Name: "tanh", Class: graph.ClassElementwise, DType: graph.F32, FLOPs: 20 * 1024, BytesRead: 4096, BytesWritten: 4096})
	b.AddTensor(m, 4096, e)
	b.AddTensor(e, 4096, cv)
	b.AddTensor(cv, 4096, q)
	b.AddTensor(q, 4096, ew)
	b.AddControl(m, ew)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	c := mustCluster(t, "a100", 2, "")
	p := mustPlan(t, g, c, decision.Decision{Device: []int{0, 1, 1, 1, 1}}, PlanOptions{})
	by := map[string]Kernel{}
	for _, k := range p.Kernels {
		by[g.Op(int(k.Ops[0])).Name] = k
	}
	if k := by["measured"]; k.Kind != KernelSpin || k.SpinNS != 1500000 || k.Record < 0 {
		t.Errorf("measured: %+v", k)
	}
	if k := by["emb"]; k.Kind != KernelMemory || k.Gather != 512 || k.ReadBytes != 64*512*4 {
		t.Errorf("embedding: %+v", k)
	}
	if k := by["conv"]; k.Kind != KernelGEMM || k.Precision != BF16 || k.M != 32*28*28 || k.N != 256 || k.K != 1152 {
		t.Errorf("conv: %+v", k)
	}
	if k := by["qmm"]; k.Precision != INT8 || k.M%4 != 0 || k.N%4 != 0 || k.K%4 != 0 {
		t.Errorf("int8: %+v", k)
	}
	if k := by["tanh"]; k.Kind != KernelMemory || k.Iters != 10 || len(k.Wait) != 1 || k.Wait[0] != by["measured"].Record {
		t.Errorf("tanh (waits for the control edge from device 0): %+v", k)
	}
}

func TestGEMMDims(t *testing.T) {
	for _, c := range []struct {
		shape   []int64
		flops   float64
		int8    bool
		m, n, k int
	}{
		{[]int64{32, 64, 128}, 2 * 32 * 64 * 128 * 256, false, 2048, 128, 256},
		{nil, 2 * 512 * 512 * 512, false, 512, 512, 512},
		{[]int64{10, 10}, 2 * 10 * 10 * 10, true, 12, 12, 8},
		{[]int64{1 << 21, 1 << 21}, 2, false, 1, 1, 1}, // output larger than the work: cube
		{[]int64{1024}, 2 * 1024 * 7, false, 1, 1024, 7},
		{[]int64{64, 0}, 2e9, false, 1000, 1000, 1000},
	} {
		m, n, k := GEMMDims(c.shape, c.flops, c.int8)
		if m != c.m || n != c.n || k != c.k {
			t.Errorf("GEMMDims(%v, %g, %v) = %d,%d,%d, want %d,%d,%d", c.shape, c.flops, c.int8, m, n, k, c.m, c.n, c.k)
		}
	}
	if m, n, k := GEMMDims(nil, 1e30, false); m != maxGEMMDim || n != maxGEMMDim || k != maxGEMMDim {
		t.Errorf("huge GEMM not capped: %d %d %d", m, n, k)
	}
}

func TestPrecisionFor(t *testing.T) {
	if PrecisionFor(graph.F32, false) != FP32 || PrecisionFor(graph.F32, true) != TF32 || PrecisionFor(graph.BF16, true) != BF16 ||
		PrecisionFor(graph.I32, false) != FP32 || PrecisionFor(graph.F64, false) != FP64 || PrecisionFor(graph.I8, false) != INT8 {
		t.Fatal("PrecisionFor")
	}
	for _, p := range Precisions() {
		var q Precision
		b, _ := p.MarshalText()
		if err := q.UnmarshalText(b); err != nil || q != p {
			t.Fatalf("precision %v round trip: %v %v", p, q, err)
		}
	}
}

// randomGraph is a layered DAG of n ops of mixed classes with some
// control edges.
func randomGraph(t testing.TB, rng *rand.Rand, n int) *graph.Graph {
	b := graph.NewBuilder("random")
	classes := []graph.Class{graph.ClassMatMul, graph.ClassElementwise, graph.ClassReduction, graph.ClassDataMovement, graph.ClassEmbedding, graph.ClassConv}
	for i := 0; i < n; i++ {
		op := graph.Op{Name: fmt.Sprintf("op%d", i), Class: classes[rng.Intn(len(classes))], DType: graph.DType(rng.Intn(3)),
			Shape: []int64{int64(1 + rng.Intn(64)), int64(1 + rng.Intn(256))}, FLOPs: float64(rng.Intn(1 << 24)),
			BytesRead: int64(rng.Intn(1 << 20)), BytesWritten: int64(rng.Intn(1 << 20)), ParamBytes: int64(rng.Intn(1 << 16))}
		if rng.Intn(20) == 0 {
			op = graph.Op{Name: op.Name, HasTime: true, Time: rng.Float64() * 1e-4}
		}
		b.AddOp(op)
		if i == 0 {
			continue
		}
		p := rng.Intn(i)
		b.AddTensor(p, int64(1+rng.Intn(1<<20)), i)
		if i > 2 && rng.Intn(3) == 0 {
			q := rng.Intn(i)
			if q != p {
				b.AddTensor(q, int64(1+rng.Intn(1<<18)), i)
			}
		}
		if i > 3 && rng.Intn(8) == 0 {
			b.AddControl(rng.Intn(i), i)
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestPlanInvariantsRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 40; trial++ {
		g := randomGraph(t, rng, 20+rng.Intn(80))
		devices := 1 + rng.Intn(4)
		topo := []string{"nvswitch", "pcie", "hybrid-cube-mesh"}[rng.Intn(3)]
		c := mustCluster(t, "v100", devices, topo)
		d := decision.Decision{Device: make([]int, g.NumOps())}
		for i := range d.Device {
			d.Device[i] = rng.Intn(devices)
		}
		if rng.Intn(2) == 0 {
			d.Priority = make([]int, g.NumOps())
			for i := range d.Priority {
				d.Priority[i] = rng.Intn(10)
			}
		}
		if rng.Intn(2) == 0 {
			d.Fusion = decision.TopologicalFusion(g)
		}
		p := mustPlan(t, g, c, d, PlanOptions{GPUs: 1 + rng.Intn(devices)})
		if p.Model.Kernels != len(p.Kernels) {
			t.Fatalf("trial %d: %d kernels, model ran %d", trial, len(p.Kernels), p.Model.Kernels)
		}
	}
}

func TestPlanRejectsBadDecision(t *testing.T) {
	g := mlpGraph(t)
	m, err := roofline.NewModel(g, mustCluster(t, "v100", 2, ""), roofline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPlan(m, decision.Decision{Device: []int{0, 1, 2, 0}}, PlanOptions{}); err == nil {
		t.Fatal("device 2 of a 2-device cluster accepted")
	}
	ms, err := roofline.NewModel(g, mustCluster(t, "v100", 2, ""), roofline.Options{SyncTransfers: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPlan(ms, decision.Decision{Device: []int{0, 0, 1, 1}}, PlanOptions{}); err == nil {
		t.Fatal("SyncTransfers model accepted")
	}
}

func TestKernelNamesInPTX(t *testing.T) {
	for _, n := range KernelNames {
		if !strings.Contains(kernelsPTX, ".entry "+n+"(") {
			t.Errorf("kernels.ptx lacks entry %s", n)
		}
	}
	// gorgonia.org/cu copies every kernel argument as 8 bytes.
	for _, line := range strings.Split(kernelsPTX, "\n") {
		if strings.Contains(line, ".param .") && !strings.Contains(line, ".param .u64") {
			t.Errorf("kernel parameter not 64 bits wide: %s", strings.TrimSpace(line))
		}
	}
}

// TestPlanTF32FromGraph: the replay's GEMM precision follows the model's
// TF32 per class: a graph recording PyTorch's defaults (tf32_matmul off,
// tf32_cudnn on) replays its f32 convolution as TF32 and its f32 matmul as
// FP32 on an a100, whose own allow_tf32 is false; --tf32 on (Options.TF32)
// makes both TF32.
func TestPlanTF32FromGraph(t *testing.T) {
	b := graph.NewBuilder("tf32")
	mm := b.AddOp(graph.Op{Name: "mm", Type: "mm", Class: graph.ClassMatMul, DType: graph.F32, Shape: []int64{256, 256}, FLOPs: 2 * 256 * 256 * 256, BytesRead: 2 * 256 * 256 * 4, BytesWritten: 256 * 256 * 4})
	cv := b.AddOp(graph.Op{Name: "conv", Type: "convolution", Class: graph.ClassConv, DType: graph.F32, Shape: []int64{256, 256}, FLOPs: 2 * 256 * 256 * 256, BytesRead: 256 * 256 * 4, BytesWritten: 256 * 256 * 4})
	b.AddTensor(mm, 256*256*4, cv)
	b.SetExecution(&graph.Execution{Device: "cuda", TF32CuDNN: true})
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	c := mustCluster(t, "a100", 1, "")
	d := decision.Decision{Device: []int{0, 0}}
	for _, tc := range []struct {
		override   string
		mmP, convP Precision
	}{{"", FP32, TF32}, {"on", TF32, TF32}, {"off", FP32, FP32}} {
		tf, err := roofline.ParseTF32(tc.override)
		if err != nil {
			t.Fatal(err)
		}
		m, err := roofline.NewModel(g, c, roofline.Options{TF32: tf})
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(m, d, PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[int32]Precision{}
		for _, k := range p.Kernels {
			got[k.Ops[0]] = k.Precision
		}
		if got[int32(mm)] != tc.mmP || got[int32(cv)] != tc.convP {
			t.Errorf("--tf32 %q: matmul %v, conv %v; want %v, %v", tc.override, got[int32(mm)], got[int32(cv)], tc.mmP, tc.convP)
		}
	}
}
