package roofline

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// hostChain is a chain of n ops of class cl with flops each (on
// unitHardware, 1 TFLOP/s, no launch: flops/1e12 seconds each), 4-byte
// tensors between them.
func hostChain(t *testing.T, n int, cl graph.Class, flops float64, typ string) *graph.Graph {
	t.Helper()
	b := graph.NewBuilder("host-chain")
	prev := -1
	for i := range n {
		op := b.AddOp(graph.Op{Name: "op" + string(rune('a'+i)), Type: typ, Class: cl, FLOPs: flops})
		if prev >= 0 {
			b.AddTensor(prev, 4, op)
		}
		prev = op
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// starts records each kernel's start.
type starts struct{ t []float64 }

func (s *starts) Kernel(dev int, ops []int32, start, end float64)                    { s.t = append(s.t, start) }
func (s *starts) Transfer(ch, src, dst, tensor int, bytes int64, start, end float64) {}
func (s *starts) Memory(dev int, t float64, bytes int64)                             {}

func withDispatch(cl graph.Class, v float64) *Host {
	h := &Host{}
	h.Dispatch[cl] = v
	return h
}

// TestHostBoundChain: ten tiny kernels (1 ns each) dispatched at 20 us
// each: the host is the bottleneck. Kernel k (from 1) is dispatched at
// 20k us and starts then (the GPU has long finished kernel k-1), so the
// step is 10 x 20 us + 1 ns, against 10 ns without the host.
func TestHostBoundChain(t *testing.T) {
	g := hostChain(t, 10, graph.ClassElementwise, 1e3, "add")
	c := testCluster(1, 1, 0, false)
	dec := decision.Decision{Device: make([]int, 10)}
	_, off := run(t, mustModel(t, g, c, Options{}), dec)
	if !near(off, 10e-9) {
		t.Fatalf("without the host: step %v, want 10 ns", off)
	}
	m := mustModel(t, g, c, Options{Host: withDispatch(graph.ClassElementwise, 20e-6)})
	rec := &starts{}
	r, err := NewSimulator(m, rec).Run(dec)
	if err != nil {
		t.Fatal(err)
	}
	if !near(r.StepTime, 200e-6+1e-9) {
		t.Errorf("host-bound step %v, want 200.001 us", r.StepTime)
	}
	if !near(r.DeviceBusy[0], 10e-9) {
		t.Errorf("GPU busy %v, want 10 ns (the kernels only)", r.DeviceBusy[0])
	}
	for k, s := range rec.t {
		if !near(s, float64(k+1)*20e-6) {
			t.Errorf("kernel %d starts at %v, want %v", k, s, float64(k+1)*20e-6)
		}
	}
	if lb := m.LowerBound(false); !near(lb, 200e-6) {
		t.Errorf("lower bound %v, want the host's 200 us", lb)
	}
}

// TestGPUBoundChain: ten 1 ms kernels dispatched at 20 us each: the host
// runs ahead (it has dispatched all ten by 200 us), so only the first
// kernel waits for it: 20 us + 10 ms.
func TestGPUBoundChain(t *testing.T) {
	g := hostChain(t, 10, graph.ClassMatMul, 1e9, "mm")
	c := testCluster(1, 1, 0, false)
	dec := decision.Decision{Device: make([]int, 10)}
	_, off := run(t, mustModel(t, g, c, Options{}), dec)
	if !near(off, 10e-3) {
		t.Fatalf("without the host: step %v, want 10 ms", off)
	}
	_, on := run(t, mustModel(t, g, c, Options{Host: withDispatch(graph.ClassMatMul, 20e-6)}), dec)
	if !near(on, 20e-6+10e-3) {
		t.Errorf("GPU-bound step %v, want 10.02 ms", on)
	}
}

// TestHostCrossover: 1 us kernels at 20 us of dispatch for the first five,
// then five 1 ms kernels: the host is ahead by the time the big ones run.
// Dispatches end at 20, 40, ..., 200 us; kernels 1-5 end at 20k + 1 us;
// kernel 6 starts at 120 us (dispatched then; kernel 5 ended at 101 us),
// and 6-10 run back to back: 120 us + 5 ms.
func TestHostCrossover(t *testing.T) {
	b := graph.NewBuilder("crossover")
	prev := -1
	for i := range 10 {
		f := 1e6
		if i >= 5 {
			f = 1e9
		}
		op := b.AddOp(graph.Op{Name: "op" + string(rune('a'+i)), Type: "mm", Class: graph.ClassMatMul, FLOPs: f})
		if prev >= 0 {
			b.AddTensor(prev, 4, op)
		}
		prev = op
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	_, on := run(t, mustModel(t, g, testCluster(1, 1, 0, false), Options{Host: withDispatch(graph.ClassMatMul, 20e-6)}),
		decision.Decision{Device: make([]int, 10)})
	if !near(on, 120e-6+5e-3) {
		t.Errorf("step %v, want 5.12 ms", on)
	}
}

// TestHostOverrides: a type's and an op's own dispatch times replace the
// class's; the exporter's Parameter and Input ops take none; a zero class
// takes DefaultDispatch's.
func TestHostOverrides(t *testing.T) {
	b := graph.NewBuilder("overrides")
	in := b.AddOp(graph.Op{Name: "input0", Type: "Input", Class: graph.ClassDataMovement})
	w := b.AddOp(graph.Op{Name: "param:w", Type: "Parameter", Class: graph.ClassDataMovement, Alias: true})
	x := b.AddOp(graph.Op{Name: "x", Type: "add", Class: graph.ClassElementwise, FLOPs: 1e3})
	y := b.AddOp(graph.Op{Name: "y", Type: "relu", Class: graph.ClassElementwise, FLOPs: 1e3})
	z := b.AddOp(graph.Op{Name: "z", Type: "add", Class: graph.ClassElementwise, FLOPs: 1e3})
	v := b.AddOp(graph.Op{Name: "v", Type: "sum", Class: graph.ClassReduction, FLOPs: 1e3})
	b.AddTensor(in, 4, x)
	b.AddTensor(w, 4, x)
	b.AddTensor(x, 4, y)
	b.AddTensor(y, 4, z)
	b.AddTensor(z, 4, v)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h := withDispatch(graph.ClassElementwise, 10e-6)
	h.ByType = map[string]float64{"relu": 30e-6}
	h.PerOp = []float64{-1, -1, -1, -1, 100e-6} // z, measured
	m := mustModel(t, g, testCluster(1, 1, 0, false), Options{Host: h})
	// Dispatches: input0 0, param 0, x 10 us, y 30 us, z 100 us, v
	// DefaultDispatch[reduction]: done at 10, 40, 140, 140 us + that.
	rec := &starts{}
	r, err := NewSimulator(m, rec).Run(decision.Decision{Device: make([]int, 6)})
	if err != nil {
		t.Fatal(err)
	}
	want := 140e-6 + DefaultDispatch[graph.ClassReduction] + 1e-9
	if !near(r.StepTime, want) {
		t.Errorf("step %v, want %v", r.StepTime, want)
	}
	if _, err := NewModel(g, testCluster(1, 1, 0, false), Options{Host: withDispatch(graph.ClassConv, -1)}); err == nil {
		t.Error("a negative dispatch time was accepted")
	}
	bad := &Host{ByType: map[string]float64{"add": -2}}
	if _, err := NewModel(g, testCluster(1, 1, 0, false), Options{Host: bad}); err == nil {
		t.Error("a negative type dispatch time was accepted")
	}
}

// TestHostPerDevice: each device has its own host thread: two chains of
// five tiny kernels on two devices take 5 x 20 us, not 10 x 20 us.
func TestHostPerDevice(t *testing.T) {
	b := graph.NewBuilder("two")
	for c := range 2 {
		prev := -1
		for i := range 5 {
			op := b.AddOp(graph.Op{Name: string(rune('a'+c)) + string(rune('0'+i)), Type: "add", Class: graph.ClassElementwise, FLOPs: 1e3})
			if prev >= 0 {
				b.AddTensor(prev, 4, op)
			}
			prev = op
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	m := mustModel(t, g, testCluster(2, 1e12, 0, false), Options{Host: withDispatch(graph.ClassElementwise, 20e-6)})
	_, two := run(t, m, decision.Decision{Device: []int{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}})
	if !near(two, 100e-6+1e-9) {
		t.Errorf("two devices: step %v, want 100.001 us", two)
	}
	_, one := run(t, m, decision.Decision{Device: make([]int, 10)})
	if !near(one, 200e-6+1e-9) {
		t.Errorf("one device: step %v, want 200.001 us", one)
	}
}

// TestHostFusedKernel: three tiny elementwise ops fused into one kernel
// are dispatched once.
func TestHostFusedKernel(t *testing.T) {
	g := hostChain(t, 3, graph.ClassElementwise, 1e3, "add")
	m := mustModel(t, g, testCluster(1, 1, 0, false), Options{Host: withDispatch(graph.ClassElementwise, 20e-6)})
	s, got := run(t, m, decision.Decision{Device: make([]int, 3), Fusion: decision.TopologicalFusion(g)})
	if s.res.Kernels != 1 || !near(got, 20e-6+3e-9) {
		t.Errorf("fused: %d kernels, step %v; want 1 kernel, 20.003 us", s.res.Kernels, got)
	}
}

// TestHostSyncTransfers: the host model holds in REGAL's synchronous
// transfer mode too (its own event loop).
func TestHostSyncTransfers(t *testing.T) {
	g := hostChain(t, 4, graph.ClassElementwise, 1e3, "add")
	m := mustModel(t, g, testCluster(1, 1, 0, false), Options{SyncTransfers: true, Host: withDispatch(graph.ClassElementwise, 20e-6)})
	if _, got := run(t, m, decision.Decision{Device: make([]int, 4)}); !near(got, 80e-6+1e-9) {
		t.Errorf("sync transfers: step %v, want 80.001 us", got)
	}
}

// TestHostProperties: on random graphs and decisions, both transfer
// modes, the host model keeps the GPUs' busy time (the same kernels run),
// never ends a step before every host has dispatched its kernels, and
// never goes below the lower bound.
func TestHostProperties(t *testing.T) {
	h, _ := Preset("v100")
	for seed := uint64(1); seed <= 12; seed++ {
		rng := rand.New(rand.NewPCG(seed, 2))
		n := 20 + rng.IntN(300)
		g := layeredDAG(n, 1+rng.IntN(20), seed, seed%4 == 0)
		devices := 1 + rng.IntN(4)
		c, err := NewCluster(h, devices, "nvswitch")
		if err != nil {
			t.Fatal(err)
		}
		host := &Host{}
		host.Dispatch[graph.ClassElementwise] = 30e-6
		checkHost(t, fmt.Sprintf("seed %d", seed), g, c, host, rng, true)
	}
}

// checkHost runs four random decisions of g on c, with async and sync
// transfers, with and without host, and fails when the host model
// changes a GPU's busy time or ends a step below the lower bound, or (with
// hostEnd) before a device's host has dispatched its last kernel.
func checkHost(t *testing.T, what string, g *graph.Graph, c *Cluster, host *Host, rng *rand.Rand, hostEnd bool) {
	t.Helper()
	devices := c.Devices
	for _, sync := range []bool{false, true} {
		off := NewSimulator(mustModel(t, g, c, Options{SyncTransfers: sync, IgnoreMemory: true}), nil)
		m := mustModel(t, g, c, Options{SyncTransfers: sync, IgnoreMemory: true, Host: host})
		on := NewSimulator(m, nil)
		for k := 0; k < 4; k++ {
			d := randomDecision(g, devices, rng, k&1 == 1, k&2 == 2, false)
			r0, err := off.Run(d)
			if err != nil {
				t.Fatal(err)
			}
			busy := append([]float64(nil), r0.DeviceBusy...)
			r, err := on.Run(d)
			if err != nil {
				t.Fatal(err)
			}
			if lb := m.LowerBound(d.Fusion != nil); r.StepTime < lb*(1-1e-12) {
				t.Fatalf("%s sync=%v k=%d: step %v < lower bound %v", what, sync, k, r.StepTime, lb)
			}
			for dev := range devices {
				if !near(r.DeviceBusy[dev], busy[dev]) {
					t.Fatalf("%s k=%d: device %d busy %v with the host, %v without", what, k, dev, r.DeviceBusy[dev], busy[dev])
				}
				if hostEnd && r.StepTime < on.hostT[dev]*(1-1e-12) {
					t.Fatalf("%s k=%d: step %v ends before device %d's host (%v)", what, k, r.StepTime, dev, on.hostT[dev])
				}
			}
		}
	}
}

// BenchmarkSimulate80kLocalHost is BenchmarkSimulate80kLocal (80,000 ops
// on 8 V100s, the default fusion) without the host model ("off": the
// default path) and with it at the default dispatch times ("on"): what
// --host costs one evaluation.
func BenchmarkSimulate80kLocalHost(b *testing.B) {
	g := layeredDAGSpan(80000, 200, 4, 42, false)
	h, _ := Preset("v100")
	c, err := NewCluster(h, 8, "")
	if err != nil {
		b.Fatal(err)
	}
	d := decision.Decision{Device: make([]int, g.NumOps()), Fusion: decision.TopologicalFusion(g)}
	for i := range d.Device {
		d.Device[i] = (i % 200) / 25
	}
	for _, tc := range []struct {
		name string
		host *Host
	}{{"off", nil}, {"on", &Host{}}} {
		m, err := NewModel(g, c, Options{Host: tc.host})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) { benchRun(b, m, d) })
	}
}

// TestHostUnmatchedProfiledOps: in a graph with profiled dispatch times
// (torchexport --profile on a GPU), an op the profile left unmatched
// takes the median profiled time of its type in the graph, else of its
// class, else the defaults; a ByType entry still wins, --dispatch
// (IgnoreProfile) ignores the profile, and a graph without any profiled
// dispatch is as before. By hand: adds profiled at 10, 30 and 50 µs and
// a mul at 70 µs; an unmatched add takes 30 µs (the adds' median), an
// unmatched relu the elementwise median of 10, 30, 50, 70 (40 µs), an
// unmatched sum (no reduction profiled) DefaultDispatch's.
func TestHostUnmatchedProfiledOps(t *testing.T) {
	build := func(profiled bool) *graph.Graph {
		b := graph.NewBuilder("unmatched")
		prev := b.AddOp(graph.Op{Name: "param:w", Type: "Parameter", Class: graph.ClassDataMovement, Alias: true})
		add := func(name, typ string, cl graph.Class, disp float64) {
			op := graph.Op{Name: name, Type: typ, Class: cl, FLOPs: 1e3}
			if disp > 0 && profiled {
				op.HasDispatch, op.Dispatch = true, disp
			}
			o := b.AddOp(op)
			b.AddTensor(prev, 4, o)
			prev = o
		}
		add("a1", "add", graph.ClassElementwise, 10e-6)
		add("a2", "add", graph.ClassElementwise, 30e-6)
		add("a3", "add", graph.ClassElementwise, 50e-6)
		add("m", "mul", graph.ClassElementwise, 70e-6)
		add("a4", "add", graph.ClassElementwise, 0) // unmatched
		add("r", "relu", graph.ClassElementwise, 0) // unmatched, type not profiled
		add("s", "sum", graph.ClassReduction, 0)    // unmatched, class not profiled
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	us := func(v float64) float64 { return v * 1e-6 }
	dr := DefaultDispatch[graph.ClassReduction]
	de := DefaultDispatch[graph.ClassElementwise]
	for _, c := range []struct {
		name     string
		profiled bool
		host     *Host
		want     []float64 // param, a1, a2, a3, m, a4, r, s
	}{
		{"profiled", true, &Host{}, []float64{0, us(10), us(30), us(50), us(70), us(30), us(40), dr}},
		{"by type wins", true, &Host{ByType: map[string]float64{"relu": us(5)}}, []float64{0, us(10), us(30), us(50), us(70), us(30), us(5), dr}},
		{"dispatch flag", true, &Host{IgnoreProfile: true}, []float64{0, de, de, de, de, de, de, dr}},
		{"no profile", false, &Host{}, []float64{0, de, de, de, de, de, de, dr}},
	} {
		m := mustModel(t, build(c.profiled), testCluster(1, 1, 0, false), Options{Host: c.host})
		got := m.DispatchTimes()
		total := 0.0
		for i, w := range c.want {
			if !near(got[i], w) {
				t.Errorf("%s: op %d dispatch %v, want %v", c.name, i, got[i], w)
			}
			total += w
		}
		// The host bounds this chain of 1 ns kernels: the step ends 1 ns
		// after the last dispatch.
		if _, step := run(t, m, decision.Decision{Device: make([]int, 8)}); !near(step, total+1e-9) {
			t.Errorf("%s: step %v, want %v", c.name, step, total+1e-9)
		}
	}
}

// TestLaunchQueue: a 1 ms kernel then five tiny ones (1 ns), each op
// dispatched in 20 us, on one stream whose queue holds depth launches.
// Unbounded (or at the measured depth of 1,000) the host has dispatched
// all six by 120 us and the tiny kernels follow the long one at once:
// 20 us + 1 ms + 5 ns. At depth 2, kernel 2's launch waits for kernel
// 0's end (1,020 us) and is dispatched at 1,040 us; kernel 3 waits for
// kernel 1's end (1,020.001 us), so the host, free at 1,040, dispatches
// it at 1,060; kernels 4 and 5 at 1,080 and 1,100: 1,100 us + 1 ns, the
// host's again.
func TestLaunchQueue(t *testing.T) {
	b := graph.NewBuilder("queue")
	prev := -1
	for i := range 6 {
		flops := 1e3
		if i == 0 {
			flops = 1e9
		}
		op := b.AddOp(graph.Op{Name: fmt.Sprintf("op%d", i), Type: "add", Class: graph.ClassElementwise, FLOPs: flops})
		if prev >= 0 {
			b.AddTensor(prev, 4, op)
		}
		prev = op
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	c := testCluster(1, 1, 0, false)
	dec := decision.Decision{Device: make([]int, 6)}
	for _, tc := range []struct {
		depth int
		want  float64
	}{
		{-1, 20e-6 + 1e-3 + 5e-9},
		{0, 20e-6 + 1e-3 + 5e-9},
		{2, 1100e-6 + 1e-9},
	} {
		h := withDispatch(graph.ClassElementwise, 20e-6)
		h.QueueDepth = tc.depth
		if _, got := run(t, mustModel(t, g, c, Options{Host: h}), dec); !near(got, tc.want) {
			t.Errorf("queue depth %d: step %v, want %v", tc.depth, got, tc.want)
		}
	}
}
