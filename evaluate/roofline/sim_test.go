package roofline

import (
	"math"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// unitHardware has round numbers: 1 TFLOP/s at every precision, 1 TB/s,
// efficiencies 1, no launch overhead, 1 TB of memory.
func unitHardware() Hardware {
	h, _ := Preset("v100")
	h.Name = "unit"
	h.FP32, h.FP16, h.FP16Tensor, h.TF32, h.FP64, h.INT8Tensor = 1e12, 1e12, 1e12, 1e12, 1e12, 1e12
	h.MemBandwidth = 1e12
	h.Memory = 1 << 40
	h.Launch = 0
	for c := range h.ComputeEff {
		h.ComputeEff[c], h.MemEff[c] = 1, 1
	}
	return h
}

// testCluster wires d devices with bandwidth bw and latency lat between
// every pair; perPair gives every ordered pair its own channel, otherwise
// each device has one egress channel.
func testCluster(d int, bw, lat float64, perPair bool) *Cluster {
	c := &Cluster{Hardware: unitHardware(), Devices: d, Topology: "test",
		Bandwidth: make([]float64, d*d), Latency: make([]float64, d*d), Channel: make([]int32, d*d), LinkKind: make([]string, d*d)}
	for s := 0; s < d; s++ {
		for t := 0; t < d; t++ {
			k := s*d + t
			c.Bandwidth[k], c.Latency[k], c.LinkKind[k] = bw, lat, "test"
			if perPair {
				c.Channel[k] = int32(k)
			} else {
				c.Channel[k] = int32(s)
			}
		}
	}
	c.Channels = d
	if perPair {
		c.Channels = d * d
	}
	return c
}

// timed is an op with a measured time.
func timed(name string, t float64) graph.Op {
	return graph.Op{Name: name, Type: "Op", HasTime: true, Time: t}
}

func mustModel(t *testing.T, g *graph.Graph, c *Cluster, o Options) *Model {
	t.Helper()
	m, err := NewModel(g, c, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func run(t *testing.T, m *Model, d decision.Decision) (*Simulator, float64) {
	t.Helper()
	s := NewSimulator(m, nil)
	r, err := s.Run(d)
	if err != nil {
		t.Fatal(err)
	}
	return s, r.StepTime
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestHandComputed(t *testing.T) {
	// chain a(1) -> b(2) -> c(3)
	chain := func() *graph.Graph {
		b := graph.NewBuilder("chain")
		a, bb, c := b.AddOp(timed("a", 1)), b.AddOp(timed("b", 2)), b.AddOp(timed("c", 3))
		b.AddTensor(a, 10, bb)
		b.AddTensor(bb, 10, c)
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	// diamond a(1) -> {b(2), c(3)} -> d(1); tensor a->c 10 B, c->d 20 B
	diamond := func() *graph.Graph {
		b := graph.NewBuilder("diamond")
		a, bb, c, d := b.AddOp(timed("a", 1)), b.AddOp(timed("b", 2)), b.AddOp(timed("c", 3)), b.AddOp(timed("d", 1))
		b.AddTensor(a, 10, bb, c)
		b.AddTensor(bb, 10, d)
		b.AddTensor(c, 20, d)
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	// fan-out: a(1) sends x (10 B) to b on GPU 1 and y (10 B) to c on GPU 2.
	fanout := func() *graph.Graph {
		b := graph.NewBuilder("fanout")
		a, bb, c := b.AddOp(timed("a", 1)), b.AddOp(timed("b", 1)), b.AddOp(timed("c", 1))
		b.AddTensor(a, 10, bb)
		b.AddTensor(a, 10, c)
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	// priority: a(1) -> {b(1), c(1)} on GPU 0; c -> e(5) on GPU 1 (0 B, latency 0.5)
	prio := func() *graph.Graph {
		b := graph.NewBuilder("prio")
		a, bb, c, e := b.AddOp(timed("a", 1)), b.AddOp(timed("b", 1)), b.AddOp(timed("c", 1)), b.AddOp(timed("e", 5))
		b.AddTensor(a, 0, bb, c)
		b.AddTensor(c, 0, e)
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	tests := []struct {
		name    string
		g       *graph.Graph
		c       *Cluster
		d       decision.Decision
		want    float64
		moved   int64
		why     string
		devBusy []float64
	}{
		{"chain on one device", chain(), testCluster(1, 10, 0.5, false), decision.Decision{Device: []int{0, 0, 0}}, 6, 0, "1+2+3", []float64{6}},
		{"chain split over two devices", chain(), testCluster(2, 10, 0.5, false), decision.Decision{Device: []int{0, 1, 1}}, 7.5, 10,
			"a 0-1, send 10 B at 10 B/s + 0.5 = 1.5, b 2.5-4.5, c 4.5-7.5", []float64{1, 5}},
		{"diamond", diamond(), testCluster(2, 10, 0.5, false), decision.Decision{Device: []int{0, 0, 1, 0}}, 9, 30,
			"a 0-1; a->c 1-2.5; b 1-3; c 2.5-5.5; c->d 20 B 5.5-8; d 8-9", []float64{4, 3}},
		{"link contention (one egress channel)", fanout(), testCluster(3, 10, 0, false), decision.Decision{Device: []int{0, 1, 2}}, 4, 20,
			"a 0-1; x 1-2 then y 2-3 on GPU 0's egress; c 3-4", nil},
		{"no contention (channel per pair)", fanout(), testCluster(3, 10, 0, true), decision.Decision{Device: []int{0, 1, 2}}, 3, 20,
			"a 0-1; x and y both 1-2; b, c 2-3", nil},
		{"FIFO runs b before c", prio(), testCluster(2, 10, 0.5, false), decision.Decision{Device: []int{0, 0, 0, 1}}, 8.5, 0,
			"a 0-1; b 1-2; c 2-3; send 3-3.5; e 3.5-8.5", nil},
		{"priority runs c first", prio(), testCluster(2, 10, 0.5, false), decision.Decision{Device: []int{0, 0, 0, 1}, Priority: []int{0, 0, 1, 0}}, 7.5, 0,
			"a 0-1; c 1-2; send 2-2.5; e 2.5-7.5; b 2-3", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mustModel(t, tc.g, tc.c, Options{})
			s, got := run(t, m, tc.d)
			if !near(got, tc.want) {
				t.Errorf("step time = %v, want %v (%s)", got, tc.want, tc.why)
			}
			if s.res.BytesMoved != tc.moved {
				t.Errorf("bytes moved = %d, want %d", s.res.BytesMoved, tc.moved)
			}
			for k, b := range tc.devBusy {
				if !near(s.res.DeviceBusy[k], b) {
					t.Errorf("busy[%d] = %v, want %v", k, s.res.DeviceBusy[k], b)
				}
			}
		})
	}
}

// TestRooflineOpCost checks the op cost formula: launch + max(compute, memory).
func TestRooflineOpCost(t *testing.T) {
	h, _ := Preset("v100")
	b := graph.NewBuilder("cost")
	// compute-bound f16 matmul: 2*1024^3 flops, 6 MiB traffic
	mm := b.AddOp(graph.Op{Name: "mm", Class: graph.ClassMatMul, DType: graph.F16, FLOPs: 2 << 30, BytesRead: 4 << 20, BytesWritten: 2 << 20})
	// memory-bound f32 add: 1 Mi flops, 12 MiB traffic
	add := b.AddOp(graph.Op{Name: "add", Class: graph.ClassElementwise, DType: graph.F32, FLOPs: 1 << 20, BytesRead: 8 << 20, BytesWritten: 4 << 20})
	b.AddTensor(mm, 2<<20, add)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCluster(h, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	m := mustModel(t, g, c, Options{})
	wantMM := h.Launch + max(float64(2<<30)/(125e12*0.75), float64(6<<20)/(900e9*0.8))
	wantAdd := h.Launch + max(float64(1<<20)/(15.7e12*0.5), float64(12<<20)/(900e9*0.85))
	if !near(m.OpTime(mm), wantMM) || !near(m.OpTime(add), wantAdd) {
		t.Fatalf("op times = %v, %v; want %v, %v", m.OpTime(mm), m.OpTime(add), wantMM, wantAdd)
	}
	h.AllowTF32 = true // V100 has no TF32: f32 matmuls stay on CUDA cores
	if got := h.PeakFLOPS(graph.ClassMatMul, graph.F32); got != 15.7e12 {
		t.Fatalf("V100 f32 matmul peak with TF32 allowed = %v, want 15.7e12", got)
	}
	a, _ := Preset("a100")
	if got := a.PeakFLOPS(graph.ClassMatMul, graph.F32); got != 19.5e12 {
		t.Fatalf("A100 f32 matmul peak = %v, want 19.5e12", got)
	}
	a.AllowTF32 = true
	if got := a.PeakFLOPS(graph.ClassMatMul, graph.F32); got != 156e12 {
		t.Fatalf("A100 f32 matmul peak with TF32 = %v, want 156e12", got)
	}
	if got := a.PeakFLOPS(graph.ClassElementwise, graph.BF16); got != 78e12 {
		t.Fatalf("A100 bf16 elementwise peak = %v, want 78e12 (no tensor cores)", got)
	}
}

// TestFusionRemovesIntermediateTraffic: matmul -> relu, fused, keeps the
// intermediate tensor on chip: one launch, summed flops, and only the
// external bytes (and no memory for the intermediate).
func TestFusionRemovesIntermediateTraffic(t *testing.T) {
	hw := unitHardware()
	hw.Launch = 1e-6
	c := testCluster(1, 1, 0, false)
	c.Hardware = hw
	b := graph.NewBuilder("fuse")
	const T = 8e6 // intermediate tensor bytes
	mm := b.AddOp(graph.Op{Name: "mm", Class: graph.ClassMatMul, FLOPs: 2e6, BytesRead: 4e6, BytesWritten: T})
	relu := b.AddOp(graph.Op{Name: "relu", Class: graph.ClassElementwise, FLOPs: 2e6, BytesRead: T, BytesWritten: T})
	b.AddTensor(mm, T, relu)
	b.AddTensor(relu, T)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	m := mustModel(t, g, c, Options{})
	// unfused: mm = 1us + max(2us, 12us) = 13us; relu = 1us + max(2us, 16us) = 17us
	s, got := run(t, m, decision.Decision{Device: []int{0, 0}})
	if !near(got, 30e-6) || s.res.Kernels != 2 {
		t.Fatalf("unfused step = %v (%d kernels), want 30us (2)", got, s.res.Kernels)
	}
	if s.res.PeakMemory[0] != 2*T {
		t.Fatalf("unfused peak = %d, want %d (intermediate and output)", s.res.PeakMemory[0], int64(2*T))
	}
	// fused: 1us + max(2+2 us, (4e6 + 8e6) B / 1e12 B/s = 12us) = 13us
	s, got = run(t, m, decision.Decision{Device: []int{0, 0}, Fusion: decision.TopologicalFusion(g)})
	if !near(got, 13e-6) || s.res.Kernels != 1 {
		t.Fatalf("fused step = %v (%d kernels), want 13us (1)", got, s.res.Kernels)
	}
	if s.res.PeakMemory[0] != T {
		t.Fatalf("fused peak = %d, want %d (the output only)", s.res.PeakMemory[0], int64(T))
	}
	// fusion across devices is illegal
	c2 := testCluster(2, 1e12, 0, false)
	c2.Hardware = hw
	m2 := mustModel(t, g, c2, Options{})
	s, _ = run(t, m2, decision.Decision{Device: []int{0, 1}, Fusion: decision.TopologicalFusion(g)})
	if s.res.Kernels != 2 {
		t.Fatalf("fused across devices: %d kernels, want 2", s.res.Kernels)
	}
	// a negative fusion priority opts the consumer out
	s, _ = run(t, m, decision.Decision{Device: []int{0, 0}, Fusion: []int{1, -1}})
	if s.res.Kernels != 2 {
		t.Fatalf("relu opted out: %d kernels, want 2", s.res.Kernels)
	}
}

// TestFusionNeverCreatesCycles: a -> b -> c and a -> c with b a matmul;
// fusing c into a would need b inside too, so with b unfusible as a
// consumer the group {a, c} must not form.
func TestFusionNeverCreatesCycles(t *testing.T) {
	b := graph.NewBuilder("tri")
	a := b.AddOp(graph.Op{Name: "a", Class: graph.ClassElementwise, FLOPs: 1, BytesRead: 1, BytesWritten: 1})
	mm := b.AddOp(graph.Op{Name: "b", Class: graph.ClassMatMul, FLOPs: 1, BytesRead: 1, BytesWritten: 1})
	c := b.AddOp(graph.Op{Name: "c", Class: graph.ClassElementwise, FLOPs: 1, BytesRead: 1, BytesWritten: 1})
	b.AddTensor(a, 1, mm, c)
	b.AddTensor(mm, 1, c)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	m := mustModel(t, g, testCluster(1, 1, 0, false), Options{})
	s := NewSimulator(m, nil)
	if _, err := s.Run(decision.Decision{Device: []int{0, 0, 0}, Fusion: decision.TopologicalFusion(g)}); err != nil {
		t.Fatal(err)
	}
	// mm is fusible as producer of c: {b, c} may form; {a, c} may not.
	if s.ops[a].unit == s.ops[c].unit {
		t.Fatalf("a and c fused around b: a cycle")
	}
}

// TestREGALMemoryWalk reproduces REGAL's appendix A.9 (Fig. 10): ops 1-5,
// op 3 on device 2, the rest on device 1; op 1 makes A and B, op 2 reads A
// and makes C, op 3 reads B and makes D, op 4 reads C and makes E, op 5
// reads D and E. Synchronous transfers, as in REGAL's model. Tensor sizes
// are powers of two so that each memory level names the set of tensors
// held: A=1, B=2, C=4, D=8, E=16.
func TestREGALMemoryWalk(t *testing.T) {
	b := graph.NewBuilder("regal-a9")
	o1, o2, o3, o4, o5 := b.AddOp(timed("1", 1)), b.AddOp(timed("2", 1)), b.AddOp(timed("3", 1)), b.AddOp(timed("4", 1)), b.AddOp(timed("5", 1))
	b.AddTensor(o1, 1, o2)  // A
	b.AddTensor(o1, 2, o3)  // B
	b.AddTensor(o2, 4, o4)  // C
	b.AddTensor(o3, 8, o5)  // D
	b.AddTensor(o4, 16, o5) // E
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	m := mustModel(t, g, testCluster(2, 1, 0, false), Options{SyncTransfers: true})
	tl := &Timeline{}
	s := NewSimulator(m, tl)
	r, err := s.Run(decision.Decision{Device: []int{0, 0, 1, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	// Memory levels per device, in event order (Fig. 10's table, with the
	// frees that happen between its rows):
	//   Run 1:      dev1 {A,B}=3
	//   Transfer B: dev2 {B}=2, then dev1 frees B -> {A}=1
	//   Run 2:      dev1 {A,C}=5, then A freed -> {C}=4
	//   Run 3:      dev2 {B,D}=10, then B freed -> {D}=8
	//   Run 4:      dev1 {C,E}=20, then C freed -> {E}=16
	//   Transfer D: dev1 {E,D}=24, then dev2 frees D -> {}=0
	//   Run 5:      dev1 {D,E}=24, then frees both -> 0
	want := map[int][]int64{
		0: {0, 3, 1, 5, 4, 20, 16, 24, 0},
		1: {0, 2, 10, 8, 0},
	}
	got := map[int][]int64{}
	for _, sm := range tl.Mem {
		got[sm.Device] = append(got[sm.Device], sm.Bytes)
	}
	for dev, w := range want {
		if len(got[dev]) != len(w) {
			t.Fatalf("device %d memory walk = %v, want %v", dev+1, got[dev], w)
		}
		for i := range w {
			if got[dev][i] != w[i] {
				t.Fatalf("device %d memory walk = %v, want %v", dev+1, got[dev], w)
			}
		}
	}
	if r.PeakMemory[0] != 24 || r.PeakMemory[1] != 10 {
		t.Fatalf("peaks = %v, want [24 10]", r.PeakMemory)
	}
	// Order of kernels and transfers: 1, B, {2 on dev1, 3 on dev2}, 4, D, 5.
	if len(tl.Transfers) != 2 || tl.Transfers[0].Tensor != 1 || tl.Transfers[1].Tensor != 3 {
		t.Fatalf("transfers = %+v, want B then D", tl.Transfers)
	}
	// transfers take 2 s (B) and 8 s (D) at 1 B/s: 1 | B 1-3 | 2,3 3-4 | 4 4-5 | D 5-13 | 5 13-14
	if !near(r.StepTime, 14) {
		t.Fatalf("step = %v, want 14", r.StepTime)
	}
}

func TestMemoryLimit(t *testing.T) {
	b := graph.NewBuilder("mem")
	a := b.AddOp(graph.Op{Name: "a", HasTime: true, Time: 1, ParamBytes: 600})
	c := b.AddOp(graph.Op{Name: "c", HasTime: true, Time: 1, ParamBytes: 600})
	b.AddTensor(a, 100, c)
	g, _ := b.Build()
	cl := testCluster(2, 1000, 0, false)
	cl.Hardware.Memory = 1000
	m := mustModel(t, g, cl, Options{})
	s, _ := run(t, m, decision.Decision{Device: []int{0, 0}})
	if !s.res.OOM || s.res.PeakMemory[0] != 1300 {
		t.Fatalf("one device: OOM=%v peak=%v, want OOM at 1300", s.res.OOM, s.res.PeakMemory)
	}
	s, _ = run(t, m, decision.Decision{Device: []int{0, 1}})
	if s.res.OOM || s.res.PeakMemory[0] != 700 || s.res.PeakMemory[1] != 700 {
		t.Fatalf("split: OOM=%v peak=%v, want [700 700]", s.res.OOM, s.res.PeakMemory)
	}
}

func TestDecisionErrors(t *testing.T) {
	b := graph.NewBuilder("e")
	a := b.AddOp(timed("a", 1))
	c := b.AddOp(timed("c", 1))
	b.AddTensor(a, 1, c)
	g, _ := b.Build()
	m := mustModel(t, g, testCluster(2, 1, 0, false), Options{})
	s := NewSimulator(m, nil)
	for _, d := range []decision.Decision{
		{Device: []int{0}},
		{Device: []int{0, 2}},
		{Device: []int{0, -1}},
		{Device: []int{0, 1}, Priority: []int{1}},
		{Device: []int{0, 1}, Fusion: []int{1, 2, 3}},
		{Device: []int{0, 1}, Transfer: []int{1}},
	} {
		if _, err := s.Run(d); err == nil {
			t.Errorf("decision %+v: no error", d)
		}
	}
}
