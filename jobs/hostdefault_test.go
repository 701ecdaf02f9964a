package jobs

import (
	"context"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/inputs"
)

// TestHostByGraph: where the CLI leaves --host out (HostByGraph), a graph
// that records an eager PyTorch run on a GPU gets the host model and the
// report says why; one without the record, or recorded for a CPU, under
// CUDA graphs or torch.compile, keeps the GPU alone; --host=false
// (HostByGraph off) and --host (Host set) stay what they were. By hand:
// the MLP example's 28 ops are all dispatched, so its host issues them
// in 28 x roofline.MeasuredIssue = 28 x 14.04 us = 0.393 ms, over the
// 0.30 ms its kernels take on one H100: the step with the host is at
// least 0.393 ms, the GPU's alone below it.
func TestHostByGraph(t *testing.T) {
	hostFloor := 28 * roofline.MeasuredIssue
	eager := map[string]any{"version": 1, "device": "cuda", "optimizer_impl": "for-loop"}
	for _, c := range []struct {
		name      string
		exec      map[string]any
		byGraph   bool
		explicit  bool // --host
		wantOn    bool
		wantNoted bool // the report says the graph's record turned it on
	}{
		{"no record", nil, true, false, false, false},
		{"eager cuda", eager, true, false, true, true},
		{"eager, device unsaid, bf16 autocast", map[string]any{"version": 1, "autocast": "bf16"}, true, false, true, true},
		{"eager cuda, --host=false", eager, false, false, false, false},
		{"eager cuda, --host", eager, false, true, true, false},
		{"no record, --host", nil, false, true, true, false},
		{"cpu", map[string]any{"version": 1, "device": "cpu"}, true, false, false, false},
		{"cuda graphs", map[string]any{"version": 1, "device": "cuda", "cuda_graphs": true}, true, false, false, false},
		{"torch.compile", map[string]any{"version": 1, "device": "cuda", "compile": "default"}, true, false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := mlpWith(t, "f16", c.exec) // the example as it is: every op f16
			o := GraphEvalOptions{Graph: inputs.GraphSpec{Path: path}, Cluster: inputs.ClusterSpec{Hardware: "h100"}, Placement: "single", HostByGraph: c.byGraph}
			if c.explicit {
				o.Host = HostModel(true, 0)
			}
			e, err := EvalGraph(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if on := e.StepTime >= hostFloor; on != c.wantOn {
				t.Errorf("step %v (the host's 28 issues: %v): host modelled %v, want %v", e.StepTime, hostFloor, on, c.wantOn)
			}
			if (e.Host != "") != c.wantOn {
				t.Errorf("report's host %q, want the host model said: %v", e.Host, c.wantOn)
			}
			if noted := strings.Contains(e.Host, HostByGraphNote); noted != c.wantNoted {
				t.Errorf("report's host %q: says the graph's record turned it on %v, want %v", e.Host, noted, c.wantNoted)
			}
		})
	}
}

// TestBaselinesHostByGraph: baselines without --host on a graph that
// records an eager PyTorch run models the host in every row (the
// single-GPU row's step at least the 28 ops' issue, 0.393 ms; see
// TestHostByGraph) and its header says why; with --host=false it does
// not.
func TestBaselinesHostByGraph(t *testing.T) {
	path := mlpWith(t, "f16", map[string]any{"version": 1, "device": "cuda"})
	for _, byGraph := range []bool{true, false} {
		b, err := Baselines(context.Background(), BaselinesOptions{Graph: inputs.GraphSpec{Path: path}, Cluster: inputs.ClusterSpec{Hardware: "h100", GPUs: 1},
			Methods: []string{"single"}, HostByGraph: byGraph})
		if err != nil {
			t.Fatal(err)
		}
		if noted := strings.Contains(b.Host, HostByGraphNote); noted != byGraph {
			t.Errorf("HostByGraph %v: header's host %q", byGraph, b.Host)
		}
		if len(b.Rows) != 1 {
			t.Fatalf("HostByGraph %v: %d rows, want single's", byGraph, len(b.Rows))
		}
		if on := b.Rows[0].StepTime >= 28*roofline.MeasuredIssue; on != byGraph {
			t.Errorf("HostByGraph %v: single's step %v, host modelled %v", byGraph, b.Rows[0].StepTime, on)
		}
	}
}
