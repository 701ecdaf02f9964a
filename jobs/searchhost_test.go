package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/report/placements"
)

// hostSplitProblem writes the graph and the hardware of the host tests:
// 2 GPUs of 1 TFLOP/s without launch overhead on PCIe at 1 GB/s without
// latency, and a step of batch 2: a chain of four matmuls f1 -> f2 -> f3
// -> f4 (f4 a backward op), each 40 MFLOP at batch 2 (40 us; 20 us at one
// example), with 4-byte activations, f4 making a 10,000-byte gradient
// that an update op u (1 MFLOP that does not scale with the batch: 1 us)
// reads. DDP's all-reduce of it on two GPUs is a ring of 2 steps of
// 5,000 bytes: 10 us, all past the last gradient.
func hostSplitProblem(t *testing.T) (inputs.GraphSpec, inputs.ClusterSpec) {
	t.Helper()
	b := graph.NewBuilder("host-split")
	b.SetBatch(2)
	var chain []int
	for i, name := range []string{"f1", "f2", "f3", "f4"} {
		chain = append(chain, b.AddOp(graph.Op{Name: name, Type: "mm", Class: graph.ClassMatMul, FLOPs: 40e6, Backward: i == 3}))
		if i > 0 {
			b.AddTensorFull(graph.Tensor{Producer: chain[i-1], Bytes: 4, Consumers: []int{chain[i]}, BatchDim: 0})
		}
	}
	u := b.AddOp(graph.Op{Name: "u", Type: "mm", Class: graph.ClassMatMul, FLOPs: 1e6, FixedFLOPs: 1e6})
	b.AddTensorFull(graph.Tensor{Producer: chain[3], Bytes: 10000, Consumers: []int{u}, BatchDim: graph.NoBatch})
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gPath := filepath.Join(dir, "host-split.json")
	var buf bytes.Buffer
	if err := graph.Write(&buf, g); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	h, _ := roofline.Preset("v100")
	h.Name = "unit"
	h.FP32, h.FP16, h.FP16Tensor, h.TF32, h.FP64, h.INT8Tensor = 1e12, 1e12, 1e12, 1e12, 1e12, 1e12
	h.MemBandwidth, h.Launch = 1e12, 0
	h.PCIeBandwidth, h.PCIeLatency = 1e9, 0
	for c := range h.ComputeEff {
		h.ComputeEff[c], h.MemEff[c] = 1, 1
	}
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	hPath := filepath.Join(dir, "unit.hw.json")
	if err := os.WriteFile(hPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return inputs.GraphSpec{Path: gPath}, inputs.ClusterSpec{GPUs: 2, Hardware: hPath, Topology: "pcie"}
}

// TestHostUnsplitsTheBatch: a split of the batch that looks faster
// without the host model is no longer chosen with it (hostSplitProblem's
// step; by hand, kernel k of a GPU dispatched at 40k us with --dispatch
// 40us):
//
//	                 no host                   --host --dispatch 40us
//	single (batch 2) 4 x 40 + 1 = 161 us       f1 40-80, f2 80-120, f3 120-160,
//	                                           f4 160-200, u 200-201: 201 us
//	ddp (dp=2)       4 x 20 + 1 + 10 = 91 us   f1 40-60, f2 80-100, f3 120-140,
//	                                           f4 160-180, u 200-201, + 10: 211 us
//	zero2 (dp=2,     4 x 20 + 0.5 + 5 + 5      as ddp's, u 200-200.5,
//	shard=zero2)     = 90.5 us                 + 5 + 5: 210.5 us
//
// (ZeRO-2: u, the optimizer, does half its work on each GPU; the
// gradient's reduce-scatter, one ring step of 5,000 bytes, and the
// all-gather of the weights it updates, as many bytes, 5 us each.) So
// baselines' zero2 row is 1.78x single's without the host and 0.95x with
// it, and the search answers with zero2's 90.5 us (a split) without it
// and with 201 us and no strategy with it: every GPU's first kernel
// waits 40 us for its dispatch and the kernels of batch 2 are a 161 us
// chain, so 201 us is the best any decision without a split can do, and
// no split does as well (the all-reduce, or the host dispatching every
// micro-batch's kernels again).
func TestHostUnsplitsTheBatch(t *testing.T) {
	gs, cs := hostSplitProblem(t)
	for _, tc := range []struct {
		host                    bool
		single, ddp, zero2, ans float64
		split                   bool
		note                    string
	}{
		{false, 161e-6, 91e-6, 90.5e-6, 90.5e-6, true, ""},
		{true, 201e-6, 211e-6, 210.5e-6, 201e-6, false, "host dispatch 40µs per op"},
	} {
		var d time.Duration
		if tc.host {
			d = 40 * time.Microsecond
		}
		bo := BaselinesOptions{Graph: gs, Cluster: cs, Methods: []string{"single", "ddp", "zero2"}, Dispatch: d, Host: HostModel(false, d)}
		b, err := Baselines(context.Background(), bo)
		if err != nil {
			t.Fatal(err)
		}
		if b.Host != tc.note {
			t.Errorf("host %v: header note %q, want %q", tc.host, b.Host, tc.note)
		}
		for _, r := range b.Rows {
			want := map[string]float64{"single": tc.single, "ddp": tc.ddp, "zero2": tc.zero2}[r.Method]
			if r.Error != "" || math.Abs(r.StepTime-want) > 1e-9*want {
				t.Errorf("host %v: %s step %v (%s), want %v", tc.host, r.Method, r.StepTime, r.Error, want)
			}
		}
		so := GraphSearchOptions{Graph: gs, Cluster: cs, Evals: 200, Seed: 1, HostOn: tc.host, Dispatch: d, Host: HostModel(tc.host, d), PPO: gdp.DefaultPPO}
		rep, err := SearchGraph(context.Background(), so)
		if err != nil {
			t.Fatal(err)
		}
		res := rep.Result
		st := res.Decision.Strategy
		if math.Abs(res.StepTime-tc.ans) > 1e-9*tc.ans {
			t.Errorf("host %v: search answers %v (%v), want %v", tc.host, res.StepTime, st, tc.ans)
		}
		if split := st != nil && !st.IsZero(); split != tc.split {
			t.Errorf("host %v: the answer's strategy %v, want a split %v", tc.host, st, tc.split)
		}
		if rep.Comparison.Host != tc.note {
			t.Errorf("host %v: search's header note %q, want %q", tc.host, rep.Comparison.Host, tc.note)
		}
		var out bytes.Buffer
		if err := placements.WriteBaselines(&out, rep.Comparison); err != nil {
			t.Fatal(err)
		}
		if on := strings.Contains(out.String(), "host model on: "+tc.note+"\n"); on != tc.host {
			t.Errorf("host %v: table header:\n%s", tc.host, out.String())
		}
		// Without --host the report is as before: no line, no JSON field.
		js, err := json.Marshal(rep.Comparison)
		if err != nil {
			t.Fatal(err)
		}
		if on := strings.Contains(string(js), `"host":`) || strings.Contains(out.String(), "host model"); on != tc.host {
			t.Errorf("host %v: the report names a host model: %v", tc.host, on)
		}
	}
}
