package roofline

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
)

// execChain is hostChain's ten 1 ns "add" kernels with execution settings
// e: ops 0-3 forward, 4-7 backward, 8-9 the optimizer update
// (OptimizerFrom 8); op 2 is a view (alias) when view is set.
func execChain(t *testing.T, e *graph.Execution, view bool) *graph.Graph {
	t.Helper()
	b := graph.NewBuilder("exec-chain")
	prev := -1
	for i := range 10 {
		op := b.AddOp(graph.Op{Name: "op" + string(rune('a'+i)), Type: "add", Class: graph.ClassElementwise, FLOPs: 1e3,
			Backward: i >= 4, Alias: view && i == 2})
		if prev >= 0 {
			b.AddTensor(prev, 4, op)
		}
		prev = op
	}
	b.SetExecution(e)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestHostExecution, in TestHostBoundChain's setting (ten 1 ns kernels in a
// chain, 20 us to dispatch each: host-bound, 200.001 us eager), with the
// graph's recorded settings, by hand:
//
//   - CUDA graphs: one launch (20 us) for the whole step, then the ten
//     kernels back to back: 20 us + 10 ns; the host-bound regime is gone
//     (the bound is the launch, not 200 us of dispatch).
//   - torch.compile reduce-overhead: the forward (ops 0-3) is launched at
//     20 us and runs to 20.004 us; the backward (4-7) at 40 us, to 40.004;
//     the eager update dispatches op 8 at 60 us and op 9 at 80 us: 80.001
//     us.
//   - torch.compile default: ops 0-7 at 4 us each (CompiledLaunch), the
//     view op 2 at none: 7 x 4 = 28 us; then the update at 48 and 68 us:
//     68.001 us.
//   - no settings, or eager ones (compile ""): 200.001 us as before.
func TestHostExecution(t *testing.T) {
	c := testCluster(1, 1, 0, false)
	dec := decision.Decision{Device: make([]int, 10)}
	tests := []struct {
		name   string
		exec   *graph.Execution
		view   bool
		step   float64
		starts []float64 // each kernel's start, when checked
		lb     float64
	}{
		{"eager, no settings", nil, false, 200e-6 + 1e-9, nil, 200e-6},
		{"eager, stated", &graph.Execution{Device: "cuda", OptimizerFrom: 8}, false, 200e-6 + 1e-9, nil, 200e-6},
		{"cuda graphs", &graph.Execution{CUDAGraphs: true, OptimizerFrom: 8}, false, 20e-6 + 10e-9,
			[]float64{20e-6, 20e-6 + 1e-9, 20e-6 + 2e-9, 20e-6 + 3e-9, 20e-6 + 4e-9, 20e-6 + 5e-9, 20e-6 + 6e-9, 20e-6 + 7e-9, 20e-6 + 8e-9, 20e-6 + 9e-9}, 20e-6},
		{"cuda graphs and compile", &graph.Execution{CUDAGraphs: true, Compile: "reduce-overhead"}, false, 20e-6 + 10e-9, nil, 20e-6},
		{"reduce-overhead", &graph.Execution{Compile: "reduce-overhead", OptimizerFrom: 8}, false, 80e-6 + 1e-9,
			[]float64{20e-6, 20e-6 + 1e-9, 20e-6 + 2e-9, 20e-6 + 3e-9, 40e-6, 40e-6 + 1e-9, 40e-6 + 2e-9, 40e-6 + 3e-9, 60e-6, 80e-6}, 80e-6},
		{"reduce-overhead, update unknown", &graph.Execution{Compile: "reduce-overhead"}, false, 40e-6 + 6e-9, nil, 40e-6},
		{"compile default", &graph.Execution{Compile: "default", OptimizerFrom: 8}, true, 68e-6 + 1e-9,
			[]float64{4e-6, 8e-6, 8e-6 + 1e-9, 12e-6, 16e-6, 20e-6, 24e-6, 28e-6, 48e-6, 68e-6}, 68e-6},
		{"max-autotune", &graph.Execution{Compile: "max-autotune", OptimizerFrom: 8}, false, 72e-6 + 1e-9, nil, 72e-6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := withDispatch(graph.ClassElementwise, 20e-6)
			h.GraphLaunch, h.CompiledLaunch = 20e-6, 4e-6
			g := execChain(t, tc.exec, tc.view)
			m := mustModel(t, g, c, Options{Host: h})
			rec := &starts{}
			r, err := NewSimulator(m, rec).Run(dec)
			if err != nil {
				t.Fatal(err)
			}
			if !near(r.StepTime, tc.step) {
				t.Errorf("step %v, want %v", r.StepTime, tc.step)
			}
			if !near(r.DeviceBusy[0], 10e-9) {
				t.Errorf("GPU busy %v, want 10 ns", r.DeviceBusy[0])
			}
			for k, s := range tc.starts {
				if !near(s, rec.t[k]) {
					t.Errorf("kernel %d starts at %v, want %v", k, rec.t[k], s)
				}
			}
			if lb := m.LowerBound(false); !near(lb, tc.lb) {
				t.Errorf("lower bound %v, want %v", lb, tc.lb)
			}
		})
	}
	// The defaults: a CUDA graph launch of DefaultGraphLaunch.
	m := mustModel(t, execChain(t, &graph.Execution{CUDAGraphs: true}, false), c, Options{Host: withDispatch(graph.ClassElementwise, 20e-6)})
	if _, got := run(t, m, dec); !near(got, DefaultGraphLaunch+10e-9) {
		t.Errorf("default launch: step %v, want %v", got, DefaultGraphLaunch+10e-9)
	}
	bad := withDispatch(graph.ClassElementwise, 20e-6)
	bad.GraphLaunch = -1
	if _, err := NewModel(execChain(t, nil, false), c, Options{Host: bad}); err == nil {
		t.Error("a negative graph launch time was accepted")
	}
}

// TestHostGraphPerDevice: under CUDA graphs each device's host launches
// the graph once: the chain split over two devices (ops 0-4, 5-9) takes
// one launch on each, in parallel: 20 us + 10 ns (+ the 4 ps transfer),
// not 40 us.
func TestHostGraphPerDevice(t *testing.T) {
	g := execChain(t, &graph.Execution{CUDAGraphs: true}, false)
	h := withDispatch(graph.ClassElementwise, 20e-6)
	h.GraphLaunch = 20e-6
	m := mustModel(t, g, testCluster(2, 1e12, 0, false), Options{Host: h})
	_, got := run(t, m, decision.Decision{Device: []int{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}})
	if !near(got, 20e-6+10e-9+4e-12) {
		t.Errorf("step %v, want 20.010004 us", got)
	}
	// Reused: a second run launches again.
	if _, again := run(t, m, decision.Decision{Device: []int{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}}); !near(again, got) {
		t.Errorf("second run %v, first %v", again, got)
	}
}

// TestHostExecutionProperties: on random graphs with each setting, the
// GPUs' busy time is the eager one's and no step goes below the lower
// bound, fused or not, async or sync transfers.
func TestHostExecutionProperties(t *testing.T) {
	h, _ := Preset("v100")
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		n := 20 + rng.IntN(200)
		g0 := layeredDAG(n, 1+rng.IntN(20), seed, seed%3 == 0)
		devices := 1 + rng.IntN(3)
		c, err := NewCluster(h, devices, "nvswitch")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []*graph.Execution{
			{CUDAGraphs: true}, {Compile: "reduce-overhead", OptimizerFrom: n / 2}, {Compile: "default", OptimizerFrom: n - 1},
		} {
			g, err := graph.WithExecution(g0, e)
			if err != nil {
				t.Fatal(err)
			}
			checkHost(t, fmt.Sprintf("seed %d %+v", seed, e), g, c, &Host{}, rng, false)
		}
	}
}

// TestHostGradScaler: a GPU-bound chain, ops 0-7 of 1 ms each (1e9 FLOPs
// at 1 TFLOP/s) and an update (ops 8-9, OptimizerFrom 8) of 1 ns each,
// 20 us to dispatch every op. The host runs ahead: it has dispatched all
// ten by 200 us, op 0 starts at 20 us and op 7 ends at 8.02 ms. Eager
// without a GradScaler the update runs right after: 8.02 ms + 2 ns. With
// one (GradScaler.step's .item()) the host waits at op 8 for the GPU,
// until 8.02 ms, and then dispatches op 8 (starts at 8.04 ms) and op 9
// (8.06 ms): 8.06 ms + 1 ns. Without the host model, or with the step
// in a CUDA graph (one 20 us launch, nothing dispatched), there is no
// wait: 8 ms + 2 ns and 8.02 ms + 2 ns.
func TestHostGradScaler(t *testing.T) {
	build := func(e *graph.Execution) *graph.Graph {
		b := graph.NewBuilder("scaler-chain")
		prev := -1
		for i := range 10 {
			flops := 1e9
			if i >= 8 {
				flops = 1e3
			}
			op := b.AddOp(graph.Op{Name: fmt.Sprintf("op%d", i), Type: "add", Class: graph.ClassElementwise, FLOPs: flops, Backward: i >= 4})
			if prev >= 0 {
				b.AddTensor(prev, 4, op)
			}
			prev = op
		}
		b.SetExecution(e)
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	c := testCluster(1, 1, 0, false)
	dec := decision.Decision{Device: make([]int, 10)}
	tests := []struct {
		name string
		exec *graph.Execution
		host bool
		step float64
	}{
		{"eager", &graph.Execution{Device: "cuda", OptimizerFrom: 8}, true, 8.02e-3 + 2e-9},
		{"grad scaler", &graph.Execution{Device: "cuda", OptimizerFrom: 8, GradScaler: true}, true, 8.06e-3 + 1e-9},
		{"grad scaler, no host model", &graph.Execution{Device: "cuda", OptimizerFrom: 8, GradScaler: true}, false, 8e-3 + 2e-9},
		{"grad scaler, cuda graphs", &graph.Execution{CUDAGraphs: true, OptimizerFrom: 8, GradScaler: true}, true, 8.02e-3 + 2e-9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var o Options
			if tc.host {
				h := withDispatch(graph.ClassElementwise, 20e-6)
				h.GraphLaunch = 20e-6
				o.Host = h
			}
			m := mustModel(t, build(tc.exec), c, o)
			s := NewSimulator(m, nil)
			for range 2 { // a second Run on the same simulator waits again
				r, err := s.Run(dec)
				if err != nil {
					t.Fatal(err)
				}
				if !near(r.StepTime, tc.step) {
					t.Errorf("step %v, want %v", r.StepTime, tc.step)
				}
			}
		})
	}
}
