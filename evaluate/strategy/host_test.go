package strategy

import (
	"context"
	"math"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// hostCluster is n devices of 1 TFLOP/s without launch overhead on
// NVSwitch, their links too fast to matter (1e18 B/s, no latency).
func hostCluster(t *testing.T, n int) *roofline.Cluster {
	h, _ := roofline.Preset("v100")
	h.Name = "unit"
	h.FP32, h.FP16, h.FP16Tensor, h.TF32, h.FP64, h.INT8Tensor = 1e12, 1e12, 1e12, 1e12, 1e12, 1e12
	h.MemBandwidth, h.Memory, h.Launch = 1e12, 1<<40, 0
	h.NVLinkBandwidth, h.NVLinkLatency, h.PCIeBandwidth, h.PCIeLatency = 1e18, 0, 1e18, 0
	for c := range h.ComputeEff {
		h.ComputeEff[c], h.MemEff[c] = 1, 1
	}
	c, err := roofline.NewCluster(h, n, "nvswitch")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHostStrategies: with a host model (roofline.Options.Host) every
// strategy's step waits for its host threads. The graph (batch 2) is a
// forward f0 -> f1 and a backward b1 -> b0, each op 2 MFLOP at batch 2
// (2 us on 1 TFLOP/s, 1 us at one example), tiny activations between
// them; with the host every op takes 10 us to dispatch. By hand:
//   - no strategy, all on GPU 0: 4 x 2 us = 8 us; with the host kernel k
//     (1 to 4) starts at 10k us, the last ends at 42 us;
//   - dp=2, one GPU per replica (one example each): 4 x 1 us = 4 us; with
//     the host 40 + 1 = 41 us (no gradients to all-reduce);
//   - two stages (f0, b0 on GPU 0; f1, b1 on GPU 1), mb=2 GPipe: each
//     stage's forward and backward of a micro-batch take 1 us, the
//     pipeline (M + S - 1)(F + B) = 3 x 2 = 6 us; with the host each takes
//     max(1 us of GPU, 10 us of dispatch) = 10 us: 3 x 20 = 60 us;
//   - mb=2 through one GPU (one stage): 2 x (2 + 2) us = 8 us; with the
//     host 2 x (20 + 20) = 80 us.
func TestHostStrategies(t *testing.T) {
	b := graph.NewBuilder("host-strategies")
	b.SetBatch(2)
	f0 := b.AddOp(graph.Op{Name: "f0", Type: "mm", Class: graph.ClassMatMul, FLOPs: 2e6})
	f1 := b.AddOp(graph.Op{Name: "f1", Type: "mm", Class: graph.ClassMatMul, FLOPs: 2e6})
	b1 := b.AddOp(graph.Op{Name: "b1", Type: "mm", Class: graph.ClassMatMul, FLOPs: 2e6, Backward: true})
	b0 := b.AddOp(graph.Op{Name: "b0", Type: "mm", Class: graph.ClassMatMul, FLOPs: 2e6, Backward: true})
	for _, e := range [][2]int{{f0, f1}, {f1, b1}, {b1, b0}} {
		b.AddTensorFull(graph.Tensor{Producer: e[0], Bytes: 4, Consumers: []int{e[1]}, BatchDim: 0})
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	host := &roofline.Host{}
	host.Dispatch[graph.ClassMatMul] = 10e-6
	c := hostCluster(t, 2)
	cases := []struct {
		name      string
		device    []int
		s         decision.Strategy
		off, with float64
	}{
		{"single", []int{0, 0, 0, 0}, decision.Strategy{}, 8e-6, 42e-6},
		{"dp=2", []int{0, 0, 0, 0}, decision.Strategy{Replicas: 2}, 4e-6, 41e-6},
		{"two stages, mb=2", []int{0, 1, 1, 0}, decision.Strategy{MicroBatches: 2}, 6e-6, 60e-6},
		{"one stage, mb=2", []int{0, 0, 0, 0}, decision.Strategy{MicroBatches: 2}, 8e-6, 80e-6},
	}
	for _, tc := range cases {
		for _, h := range []*roofline.Host{nil, host} {
			e, err := NewEvaluator(g, c, roofline.Options{Host: h})
			if err != nil {
				t.Fatal(err)
			}
			r, err := e.Evaluate(context.Background(), decision.Decision{Device: tc.device, Strategy: tc.s})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			want := tc.off
			if h != nil {
				want = tc.with
			}
			if math.Abs(r.StepTime-want) > 1e-9*want {
				t.Errorf("%s, host %v: step %v, want %v", tc.name, h != nil, r.StepTime, want)
			}
		}
	}
}

// BenchmarkEvaluateHost is one evaluation of trxl2 with a strategy around
// one replica on one GPU, without and with the host model (default
// dispatch times): DDP on 8 GPUs, and 4 micro-batches through one GPU
// (the pipelined path, which books the host per phase).
func BenchmarkEvaluateHost(b *testing.B) {
	g := trxl(b)
	c := cluster(b, 8, "nvswitch")
	for _, st := range []struct {
		name string
		s    decision.Strategy
	}{{"ddp8", decision.Strategy{Replicas: 8}}, {"mb4", decision.Strategy{MicroBatches: 4}}} {
		for _, h := range []*roofline.Host{nil, {}} {
			e, err := NewEvaluator(g, c, roofline.Options{Host: h})
			if err != nil {
				b.Fatal(err)
			}
			d := decision.Decision{Device: decision.Single(g), Strategy: st.s}
			name := st.name + "/off"
			if h != nil {
				name = st.name + "/on"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := e.Evaluate(context.Background(), d); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
