package jobs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/placer/placer/inputs"
)

// mlpWith writes the MLP example (28 ops, f16) with every op in dtype and
// the execution object exec (nil: none), and returns its path.
func mlpWith(t *testing.T, dtype string, exec map[string]any) string {
	t.Helper()
	data, err := os.ReadFile("../examples/mlp.json")
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	for _, op := range g["ops"].([]any) {
		op.(map[string]any)["dtype"] = dtype
	}
	if exec != nil {
		g["execution"] = exec
	}
	path := filepath.Join(t.TempDir(), "mlp.json")
	if data, err = json.Marshal(g); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func evalOf(t *testing.T, o GraphEvalOptions) float64 {
	t.Helper()
	o.Host = HostModel(o.HostOn, o.Dispatch)
	e, err := EvalGraph(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return e.StepTime
}

// TestEvalTF32: on an A100 an f32 MLP whose graph records
// tf32_matmul runs its matmuls on TF32 tensor cores (156 TFLOP/s, not
// 19.5): faster than without the record; --tf32 off gives the
// unrecorded graph's time, --tf32 on the recorded one's.
func TestEvalTF32(t *testing.T) {
	plain := mlpWith(t, "f32", nil)
	rec := mlpWith(t, "f32", map[string]any{"version": 1, "tf32_matmul": true})
	run := func(path, flag string) float64 {
		return evalOf(t, GraphEvalOptions{Graph: inputs.GraphSpec{Path: path}, Cluster: inputs.ClusterSpec{Hardware: "a100"}, Placement: "single", TF32: flag})
	}
	base, on := run(plain, ""), run(rec, "")
	if !(on < base) {
		t.Errorf("recorded tf32_matmul: %v, want below strict f32's %v", on, base)
	}
	if off := run(rec, "off"); off != base {
		t.Errorf("--tf32 off: %v, want %v", off, base)
	}
	if forced := run(plain, "on"); forced != on {
		t.Errorf("--tf32 on: %v, want %v", forced, on)
	}
	bad := GraphEvalOptions{Graph: inputs.GraphSpec{Path: plain}, Placement: "single", TF32: "maybe"}
	if _, err := EvalGraph(context.Background(), bad); err == nil || !strings.Contains(err.Error(), `tf32 "maybe"`) {
		t.Errorf("tf32 maybe: %v, want an error naming it", err)
	}
}

// TestEvalExecutionHost: the MLP at 1 ms of dispatch per op is bound by
// its host (28 ms and more, TestEvalHost); recorded as captured in a CUDA
// graph it takes one launch (20 us) and its kernels, under 1 ms; under
// torch.compile eval fuses by default (fewer kernels than ops) unless
// --fusion says otherwise.
func TestEvalExecutionHost(t *testing.T) {
	o := func(path, fusion string) GraphEvalOptions {
		o := GraphEvalOptions{Graph: inputs.GraphSpec{Path: path}, Placement: "single", HostOn: true, Dispatch: time.Millisecond, Fusion: fusion}
		o.Host = HostModel(o.HostOn, o.Dispatch)
		return o
	}
	eager := evalOf(t, o(mlpWith(t, "f16", nil), ""))
	graphs := evalOf(t, o(mlpWith(t, "f16", map[string]any{"version": 1, "cuda_graphs": true}), ""))
	if eager <= 28e-3 || graphs >= 1e-3 {
		t.Errorf("eager %v (want over 28 ms), CUDA graphs %v (want under 1 ms)", eager, graphs)
	}
	comp := mlpWith(t, "f16", map[string]any{"version": 1, "compile": "default"})
	e, err := EvalGraph(context.Background(), o(comp, ""))
	if err != nil {
		t.Fatal(err)
	}
	if e.Fusion != "default" || e.Kernels >= 28 {
		t.Errorf("compiled: fusion %q, %d kernels; want default, fewer than 28", e.Fusion, e.Kernels)
	}
	e, err = EvalGraph(context.Background(), o(comp, "none"))
	if err != nil {
		t.Fatal(err)
	}
	if e.Kernels != 28 {
		t.Errorf("compiled with --fusion none: %d kernels, want 28", e.Kernels)
	}
}

// TestEvalExecutionNote: the report's "run as" line says the graph's
// settings and which f32 ops run on TF32, and who said so; a graph
// without settings and no --tf32 has none.
func TestEvalExecutionNote(t *testing.T) {
	note := func(path, flag string) string {
		o := GraphEvalOptions{Graph: inputs.GraphSpec{Path: path}, Cluster: inputs.ClusterSpec{Hardware: "a100"}, Placement: "single", TF32: flag}
		o.Host = HostModel(o.HostOn, o.Dispatch)
		e, err := EvalGraph(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return e.Execution
	}
	full := map[string]any{"version": 1, "device": "cuda", "optimizer": "adam", "optimizer_impl": "fused", "autocast": "bf16",
		"tf32_cudnn": true, "cuda_graphs": true, "compile": "max-autotune"}
	for _, tc := range []struct {
		exec map[string]any
		flag string
		want string
	}{
		{nil, "", ""},
		{nil, "graph", ""},
		{nil, "conv", "TF32 matmuls off, convs on (--tf32)"},
		{map[string]any{"version": 1, "tf32_matmul": true}, "", "TF32 matmuls on, convs off (the graph's)"},
		{full, "", "cuda, fused adam, autocast bf16, CUDA graphs, torch.compile max-autotune; TF32 matmuls off, convs on (the graph's)"},
	} {
		if got := note(mlpWith(t, "f32", tc.exec), tc.flag); got != tc.want {
			t.Errorf("%v --tf32 %q: %q, want %q", tc.exec, tc.flag, got, tc.want)
		}
	}
}
