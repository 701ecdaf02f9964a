package jobs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/placer/placer/inputs"
)

// TestEvalHost: placer eval --host --dispatch 1ms on the MLP example (28
// ops, each kernel well under 1 ms, 0.91 ms in all, on one V100) is bound
// by its host: kernel k starts when it is dispatched, at k ms, so the step
// is 28 ms plus the last kernel; the GPU's busy time is unchanged.
func TestEvalHost(t *testing.T) {
	opts := func(host bool, d time.Duration) GraphEvalOptions {
		o := GraphEvalOptions{Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}, Cluster: inputs.ClusterSpec{Hardware: "v100"}, Placement: "single", HostOn: host, Dispatch: d}
		o.Host = HostModel(o.HostOn, o.Dispatch)
		return o
	}
	off, err := EvalGraph(context.Background(), opts(false, 0))
	if err != nil {
		t.Fatal(err)
	}
	on, err := EvalGraph(context.Background(), opts(true, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if off.Ops != 28 {
		t.Fatalf("%d ops, want the example's 28", off.Ops)
	}
	if on.StepTime <= 28e-3 || on.StepTime > 28e-3+off.StepTime {
		t.Errorf("host-bound step %v, want 28 ms plus the last kernel (the step without the host: %v)", on.StepTime, off.StepTime)
	}
	if on.PerDevice[0].Busy != off.PerDevice[0].Busy {
		t.Errorf("GPU busy %v with the host, %v without", on.PerDevice[0].Busy, off.PerDevice[0].Busy)
	}
	// --host alone: the default dispatch times, a few us per op.
	def, err := EvalGraph(context.Background(), opts(true, 0))
	if err != nil {
		t.Fatal(err)
	}
	if def.StepTime < off.StepTime || def.StepTime >= on.StepTime {
		t.Errorf("default dispatch: step %v, want between %v and %v", def.StepTime, off.StepTime, on.StepTime)
	}
}

// TestEvalHostProfiled: placer eval --host on a graph whose ops carry
// profiled dispatch times (dispatch_s, here 1 ms on each of the MLP
// example's 28 ops) does not take them (roofline.MeasuredIssue: a
// profile's dispatch times hold the profiler's own cost): the step stays
// the kernels'; --dispatch 1us likewise.
func TestEvalHostProfiled(t *testing.T) {
	data, err := os.ReadFile("../examples/mlp.json")
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	for _, op := range g["ops"].([]any) {
		op.(map[string]any)["dispatch_s"] = 1e-3
	}
	path := filepath.Join(t.TempDir(), "mlp-profiled.json")
	data, err = json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	eval := func(d time.Duration) float64 {
		o := GraphEvalOptions{Graph: inputs.GraphSpec{Path: path}, Placement: "single", HostOn: true, Dispatch: d}
		o.Host = HostModel(o.HostOn, o.Dispatch)
		e, err := EvalGraph(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return e.StepTime
	}
	// --host takes the measured issue rate, not the profile's times
	// (torch.profiler's own cost is in them): 28 ops at 14 us issue in
	// 0.4 ms, under the kernels' 0.9.
	if s := eval(0); s >= 2e-3 {
		t.Errorf("--host on a profiled graph: step %v, want the kernels' ~1 ms (the profile's 1 ms a op not taken)", s)
	}
	if s := eval(time.Microsecond); s >= 2e-3 {
		t.Errorf("--dispatch 1us: step %v, want the kernels' ~1 ms", s)
	}
}
