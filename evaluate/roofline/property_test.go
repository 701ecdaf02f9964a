package roofline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph"
)

// layeredDAG builds a random layered DAG of about n ops: each op reads one
// or two tensors of the previous layers, classes are mixed so that fusion
// has work to do, a few control edges and co-location pairs are added.
// With measured=true every op has a measured time that is a multiple of
// 1/64 s (exact in floating point).
func layeredDAG(n, width int, seed uint64, measured bool) *graph.Graph {
	return layeredDAGSpan(n, width, 0, seed, measured)
}

// layeredDAGSpan is layeredDAG where an op reads only tensors of the
// previous layer within span columns of its own (span 0 = anywhere), as in
// a grid of LSTM cells or a convolution stack.
func layeredDAGSpan(n, width, span int, seed uint64, measured bool) *graph.Graph {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := graph.NewBuilder(fmt.Sprintf("layered-%d-%d", n, seed))
	classes := []graph.Class{graph.ClassMatMul, graph.ClassElementwise, graph.ClassElementwise, graph.ClassReduction, graph.ClassDataMovement, graph.ClassConv}
	var prevOuts []int // tensors of the previous layer
	var outs []int
	for i := 0; i < n; i++ {
		if i%width == 0 && i > 0 {
			prevOuts, outs = outs, nil
		}
		c := classes[rng.IntN(len(classes))]
		op := graph.Op{Name: fmt.Sprintf("op%d", i), Type: c.String(), Class: c, DType: graph.DType(rng.IntN(3)),
			FLOPs: float64(rng.IntN(1 << 24)), BytesRead: int64(rng.IntN(1 << 22)), BytesWritten: int64(rng.IntN(1 << 22)),
			ParamBytes: int64(rng.IntN(1 << 16))}
		if measured {
			op.HasTime, op.Time, op.Class = true, float64(1+rng.IntN(64))/64, graph.ClassUnknown
		}
		if i%97 == 5 {
			op.Colocation = fmt.Sprintf("g%d", i%13)
		}
		v := b.AddOp(op)
		if len(prevOuts) > 0 {
			k := 1 + rng.IntN(2)
			seen := map[int]bool{}
			for j := 0; j < k; j++ {
				col := rng.IntN(len(prevOuts))
				if span > 0 {
					col = min(len(prevOuts)-1, max(0, i%width+rng.IntN(2*span+1)-span))
				}
				t := prevOuts[col]
				if !seen[t] {
					seen[t] = true
					b.Consume(t, v)
				}
			}
			if rng.IntN(50) == 0 {
				b.AddControl(b.TensorProducer(prevOuts[0]), v)
			}
		}
		outs = append(outs, b.AddTensor(v, int64(1+rng.IntN(1<<20))))
	}
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

func randomDecision(g *graph.Graph, devices int, rng *rand.Rand, prio, fuse, transfer bool) decision.Decision {
	d := decision.Decision{Device: make([]int, g.NumOps())}
	for i := range d.Device {
		d.Device[i] = rng.IntN(devices)
	}
	if prio {
		d.Priority = make([]int, g.NumOps())
		for i := range d.Priority {
			d.Priority[i] = rng.IntN(5)
		}
	}
	if fuse {
		d.Fusion = make([]int, g.NumOps())
		for i := range d.Fusion {
			d.Fusion[i] = rng.IntN(8) - 1
		}
	}
	if transfer {
		d.Transfer = make([]int, g.NumTensors()*devices)
		for i := range d.Transfer {
			d.Transfer[i] = rng.IntN(4)
		}
	}
	return d
}

// TestPropertiesRandomDAGs: on random DAGs and random decisions, the
// step time is at least the lower bound, every kernel runs, every tensor
// is freed by the end (memory returns to the parameters), and the same
// decision gives the same result.
func TestPropertiesRandomDAGs(t *testing.T) {
	h, _ := Preset("v100")
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		n := 20 + rng.IntN(400)
		g := layeredDAG(n, 1+rng.IntN(20), seed, seed%5 == 0)
		devices := 1 + rng.IntN(8)
		c, err := NewCluster(h, devices, []string{"nvswitch", "hybrid-cube-mesh", "pcie"}[seed%3])
		if err != nil {
			t.Fatal(err)
		}
		for _, sync := range []bool{false, true} {
			m := mustModel(t, g, c, Options{SyncTransfers: sync, IgnoreMemory: true})
			s := NewSimulator(m, nil)
			for k := 0; k < 6; k++ {
				d := randomDecision(g, devices, rng, k&1 == 1, k&2 == 2, k >= 4)
				r, err := s.Run(d)
				if err != nil {
					t.Fatalf("seed %d sync=%v: %v", seed, sync, err)
				}
				lb := m.LowerBound(d.Fusion != nil)
				if r.StepTime < lb*(1-1e-12) {
					t.Fatalf("seed %d sync=%v k=%d: step %v < lower bound %v", seed, sync, k, r.StepTime, lb)
				}
				params := make([]int64, devices)
				for i, dev := range d.Device {
					params[dev] += g.Op(i).ParamBytes
				}
				for dev := range params {
					if s.mem[dev] != params[dev] {
						t.Fatalf("seed %d sync=%v k=%d: device %d ends with %d bytes, want its %d parameter bytes", seed, sync, k, dev, s.mem[dev], params[dev])
					}
					if r.DeviceBusy[dev] > r.StepTime*(1+1e-12) {
						t.Fatalf("busy %v > step %v", r.DeviceBusy[dev], r.StepTime)
					}
				}
				first := r.Clone()
				r2, _ := s.Run(d)
				if r2.StepTime != first.StepTime || r2.BytesMoved != first.BytesMoved || r2.PeakMemory[0] != first.PeakMemory[0] {
					t.Fatalf("seed %d: not deterministic: %v vs %v", seed, first.StepTime, r2.StepTime)
				}
			}
		}
	}
}

// TestOneDeviceMeasuredSum: on one device with measured times and no
// fusion, the step time is exactly the sum of the op times.
func TestOneDeviceMeasuredSum(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		g := layeredDAG(50+int(seed)*20, 1+int(seed%7), seed, true)
		c := testCluster(1, 1, 0, false)
		m := mustModel(t, g, c, Options{})
		sum := 0.0
		for i := 0; i < g.NumOps(); i++ {
			sum += g.Op(i).Time
		}
		_, got := run(t, m, decision.Decision{Device: decision.Single(g), Priority: randomDecision(g, 1, rand.New(rand.NewPCG(seed, 3)), true, false, false).Priority})
		if got != sum {
			t.Fatalf("seed %d: step %v, want exactly %v", seed, got, sum)
		}
	}
}

func TestEvaluateBatchMatchesSequential(t *testing.T) {
	g := layeredDAG(2000, 40, 3, false)
	h, _ := Preset("h100")
	c, _ := NewCluster(h, 4, "")
	m := mustModel(t, g, c, Options{})
	e := NewEvaluator(m)
	rng := rand.New(rand.NewPCG(9, 9))
	ds := make([]decision.Decision, 16)
	for i := range ds {
		ds[i] = randomDecision(g, 4, rng, true, true, false)
	}
	out := make([]evaluate.Result, len(ds))
	if err := e.EvaluateBatch(context.Background(), ds, out); err != nil {
		t.Fatal(err)
	}
	for i, d := range ds {
		r, err := e.Evaluate(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		if r.StepTime != out[i].StepTime || r.PeakMemory[1] != out[i].PeakMemory[1] {
			t.Fatalf("decision %d: batch %v, sequential %v", i, out[i].StepTime, r.StepTime)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.EvaluateBatch(ctx, ds, out); err == nil {
		t.Fatal("cancelled batch: no error")
	}
}

// benchSetup is the speed target of the foundation issue: an 80,000-op
// layered random DAG on 8 devices, a placement by column blocks (so that
// some edges cross devices), and the default fusion.
func benchSetup(b *testing.B) (*Model, decision.Decision) { return benchSetupSpan(b, 0) }

func benchSetupSpan(b *testing.B, span int) (*Model, decision.Decision) {
	return benchSetupSized(b, 80000, span)
}

// benchSetupSized is benchSetupSpan for a graph of about n ops.
func benchSetupSized(b *testing.B, n, span int) (*Model, decision.Decision) {
	g := layeredDAGSpan(n, 200, span, 42, false)
	h, _ := Preset("v100")
	c, err := NewCluster(h, 8, "")
	if err != nil {
		b.Fatal(err)
	}
	m, err := NewModel(g, c, Options{})
	if err != nil {
		b.Fatal(err)
	}
	d := decision.Decision{Device: make([]int, g.NumOps()), Fusion: decision.TopologicalFusion(g)}
	for i := range d.Device {
		d.Device[i] = (i % 200) / 25
	}
	return m, d
}

func BenchmarkSimulate80k(b *testing.B) {
	m, d := benchSetup(b)
	benchRun(b, m, d)
}

// BenchmarkSimulate80kLocal: the same size, but ops read tensors within
// 4 columns of their own, so that fewer edges cross devices.
func BenchmarkSimulate80kLocal(b *testing.B) {
	m, d := benchSetupSpan(b, 4)
	benchRun(b, m, d)
}

func BenchmarkSimulate80kNoFusion(b *testing.B) {
	m, d := benchSetup(b)
	d.Fusion = nil
	s := NewSimulator(m, nil)
	s.Run(d)
	b.ResetTimer()
	b.ReportAllocs()
	cpuLoop(b, func() { s.Run(d) })
}

// BenchmarkEvaluateBatch80k evaluates 8 decisions per op on all cores.
func BenchmarkEvaluateBatch80k(b *testing.B) {
	m, d := benchSetup(b)
	e := NewEvaluator(m)
	ds := make([]decision.Decision, 8)
	for i := range ds {
		ds[i] = d
	}
	out := make([]evaluate.Result, len(ds))
	e.EvaluateBatch(context.Background(), ds, out)
	b.ResetTimer()
	b.ReportAllocs()
	for b.Loop() {
		if err := e.EvaluateBatch(context.Background(), ds, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N*len(ds))*1e3, "ms/decision")
}

// benchRun times one decision on a simulator warmed up by a first run
// (its buffers grow there) and reports the
// thread's CPU time, allocations, and the run's transfers and kernels.
func benchRun(b *testing.B, m *Model, d decision.Decision) {
	s := NewSimulator(m, nil)
	r, err := s.Run(d)
	if err != nil {
		b.Fatal(err)
	}
	transfers, kernels := r.Transfers, r.Kernels
	// Collect the set-up's garbage now, so that no GC cycle it started
	// runs (on this one P) inside the timed loop, which allocates nothing.
	runtime.GC()
	b.ResetTimer()
	b.ReportAllocs()
	cpuLoop(b, func() { s.Run(d) })
	b.ReportMetric(float64(transfers), "transfers")
	b.ReportMetric(float64(kernels), "kernels")
}
