package opcheck

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// three builds a chain of a measured f32 matmul, a bf16 convolution and
// an f32 add, of times scale x 3, 1 and 0.2.
func three(t *testing.T, scale float64, exec *graph.Execution) *graph.Graph {
	t.Helper()
	b := graph.NewBuilder("three")
	ops := []graph.Op{
		{Name: "mm", Type: "mm", Class: graph.ClassMatMul, DType: graph.F32, FLOPs: 1e9, HasTime: true, Time: 3 * scale},
		{Name: "conv", Type: "convolution", Class: graph.ClassConv, DType: graph.BF16, FLOPs: 1e9, HasTime: true, Time: 1 * scale},
		{Name: "add", Type: "add", Class: graph.ClassElementwise, DType: graph.F32, FLOPs: 1e6, HasTime: true, Time: 0.2 * scale},
	}
	prev := -1
	for _, op := range ops {
		i := b.AddOp(op)
		if prev >= 0 {
			b.AddTensor(prev, 4, i)
		}
		prev = i
	}
	b.SetExecution(exec)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func modelOf(t *testing.T, g *graph.Graph, hw string) *roofline.Model {
	t.Helper()
	return modelWith(t, g, hw, roofline.Options{})
}

// modelWith is modelOf with opts (a Host: the host modelled).
func modelWith(t *testing.T, g *graph.Graph, hw string, opts roofline.Options) *roofline.Model {
	t.Helper()
	h, err := roofline.Preset(hw)
	if err != nil {
		t.Fatal(err)
	}
	c, err := roofline.NewCluster(h, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := roofline.NewModel(g, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The references: two H100 steps with f32 matmuls (roofline 1 of measured
// 2, and 3 of 2: pooled 4 of 4, no error) and an H200 step with bf16
// convolutions, which an H100 graph does not count.
var testRefs = []Reference{
	{Name: "a", Hardware: "h100", Kinds: []KindTimes{{Kind: Kind{Class: "matmul", Precision: "f32"}, Ops: 1, Measured: 2, Roofline: 1}}},
	{Name: "b", Hardware: "h100", Kinds: []KindTimes{{Kind: Kind{Class: "matmul", Precision: "f32"}, Ops: 4, Measured: 2, Roofline: 3}}},
	{Name: "c", Hardware: "h200", Kinds: []KindTimes{{Kind: Kind{Class: "conv", Precision: "bf16"}, Ops: 2, Measured: 1, Roofline: 1}}},
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name      string
		scale     float64
		exec      *graph.Execution
		hw        string
		steps     int
		checked   float64
		hostBound bool
		host      *roofline.Host // the host modelled (eval's default for eager graphs)
		warnings  []string       // a part of each warning, in order
	}{
		// GPU time 4.2: the matmul 3/4.2 checked (a and b), the
		// convolution 1/4.2 = 23.8% in bf16 no H100 step has, the add
		// 0.2/4.2 = 4.8% under the 5% each warning names.
		{name: "h100", scale: 1e-3, hw: "h100", steps: 2, checked: 3 / 4.2,
			warnings: []string{"conv bf16 is 24% of the GPU time", "each under 5%: 5% of the GPU time"}},
		// The same kinds at microseconds from eager PyTorch: three
		// issues of 14.04 us and the convolution's second launch (a cuDNN
		// convolution forward launches 2: roofline.Launches) of 4.57 us,
		// 46.69 us, against 4.2 us of kernels.
		{name: "host-bound", scale: 1e-6, exec: &graph.Execution{Device: "cuda"}, hw: "h100", steps: 2, checked: 3 / 4.2, hostBound: true,
			warnings: []string{"conv bf16", "each under 5%", "host-bound at this batch: issuing its kernels takes 0.047 ms against 0.004 ms of GPU work (eval --host models the host)"}},
		// The same with the host modelled at the same issue and launch
		// times: the warning says the step's time is already the host's.
		{name: "host-bound, modelled", scale: 1e-6, exec: &graph.Execution{Device: "cuda"}, hw: "h100", steps: 2, checked: 3 / 4.2, hostBound: true,
			host:     &roofline.Host{Issue: [3]float64{14.04e-6, 14.04e-6, 14.04e-6}, Launch: 4.57e-6},
			warnings: []string{"conv bf16", "each under 5%", "takes 0.047 ms against 0.004 ms of GPU work (the step's time is the host's: placer models it; --host=false for the GPU alone)"}},
		// Under CUDA graphs the eager issue cost does not apply.
		{name: "graphs", scale: 1e-6, exec: &graph.Execution{Device: "cuda", CUDAGraphs: true}, hw: "h100", steps: 2, checked: 3 / 4.2,
			warnings: []string{"conv bf16", "each under 5%"}},
		// On a GPU no step was profiled on, nothing is checked.
		{name: "v100", scale: 1e-3, hw: "v100", steps: 0, checked: 0, warnings: []string{"no profiled step on v100"}},
		// On the H200 the convolution is checked (c) and the matmul not.
		{name: "h200", scale: 1e-3, hw: "h200", steps: 1, checked: 1 / 4.2,
			warnings: []string{"matmul f32 is 71% of the GPU time and no profiled step on h200 has it", "each under 5%"}},
	}
	for _, c := range cases {
		g := three(t, c.scale, c.exec)
		r := Check(g, modelWith(t, g, c.hw, roofline.Options{Host: c.host}), c.hw, testRefs)
		if r.Steps != c.steps || math.Abs(r.Checked-c.checked) > 1e-9 || r.HostBound != c.hostBound {
			t.Errorf("%s: steps %d, checked %.4f, host-bound %v; want %d, %.4f, %v", c.name, r.Steps, r.Checked, r.HostBound, c.steps, c.checked, c.hostBound)
		}
		if len(r.Warnings) != len(c.warnings) {
			t.Errorf("%s: warnings %q, want %d", c.name, r.Warnings, len(c.warnings))
			continue
		}
		for i, w := range c.warnings {
			if !strings.Contains(r.Warnings[i], w) {
				t.Errorf("%s: warning %d %q, want it to say %q", c.name, i, r.Warnings[i], w)
			}
		}
	}
}

// TestCheckKinds: the kinds in order of share, their references and the
// pooled error.
func TestCheckKinds(t *testing.T) {
	g := three(t, 1e-3, nil)
	r := Check(g, modelOf(t, g, "h100"), "h100", testRefs)
	want := []struct {
		kind  string
		share float64
		refs  string
		err   *float64
	}{
		{"matmul f32", 3 / 4.2, "a,b", new(float64)}, // (1+3)/(2+2) - 1
		{"conv bf16", 1 / 4.2, "", nil},
		{"elementwise f32", 0.2 / 4.2, "", nil},
	}
	if len(r.Kinds) != len(want) {
		t.Fatalf("%d kinds, want %d", len(r.Kinds), len(want))
	}
	for i, w := range want {
		k := r.Kinds[i]
		if k.Kind.String() != w.kind || math.Abs(k.Share-w.share) > 1e-9 || strings.Join(k.References, ",") != w.refs ||
			(k.Error == nil) != (w.err == nil) || (k.Error != nil && math.Abs(*k.Error-*w.err) > 1e-12) {
			t.Errorf("kind %d: %s %.4f refs %q err %v; want %s %.4f %q %v", i, k.Kind, k.Share, strings.Join(k.References, ","), k.Error, w.kind, w.share, w.refs, w.err)
		}
	}
	if l := r.Line(); !strings.Contains(l, "71% of the GPU time") || !strings.Contains(l, "not: conv bf16 24%") {
		t.Errorf("line %q", l)
	}
}

func TestKindOf(t *testing.T) {
	cases := []struct {
		op   graph.Op
		tf   roofline.TF32
		want string
	}{
		{graph.Op{Class: graph.ClassMatMul, DType: graph.F32}, roofline.TF32{}, "matmul f32"},
		{graph.Op{Class: graph.ClassMatMul, DType: graph.F32}, roofline.TF32{MatMul: true}, "matmul tf32"},
		{graph.Op{Class: graph.ClassConv, DType: graph.F32}, roofline.TF32{MatMul: true}, "conv f32"},
		{graph.Op{Class: graph.ClassConv, DType: graph.BF16, Backward: true}, roofline.TF32{Conv: true}, "conv bf16 backward"},
		{graph.Op{Class: graph.ClassConv, DType: graph.F32, DepthwiseTaps: 9, Backward: true}, roofline.TF32{Conv: true}, "conv tf32 depthwise-backward"},
		{graph.Op{Class: graph.ClassConv, DType: graph.F32, GroupedFLOPs: 1e9, Backward: true}, roofline.TF32{Conv: true}, "conv tf32 grouped-backward"},
		{graph.Op{Class: graph.ClassConv, DType: graph.BF16, GroupedFLOPs: 1e9}, roofline.TF32{}, "conv bf16 grouped"},
		{graph.Op{Class: graph.ClassMatMul, DType: graph.F32, Steps: 70}, roofline.TF32{}, "matmul f32 serial"},
	}
	for _, c := range cases {
		if got := KindOf(&c.op, c.tf).String(); got != c.want {
			t.Errorf("KindOf(%+v, %+v) = %q, want %q", c.op, c.tf, got, c.want)
		}
	}
}

// TestAddStages: per GPU of a two-GPU placement, its ops' issue against
// their GPU time. three's mm on GPU 0 (issued in 14.04 us), the
// convolution and the add on GPU 1 (18.61 us: a cuDNN convolution's two
// launches, and 14.04 us); at microseconds (3 us of GPU work on GPU 0,
// 1.2 us on GPU 1) both are host-bound, at milliseconds neither; one GPU
// gives no stages.
func TestAddStages(t *testing.T) {
	eager := &graph.Execution{Device: "cuda"}
	for _, c := range []struct {
		name   string
		scale  float64
		device []int
		want   []StageCheck
	}{
		{"microseconds", 1e-6, []int{0, 1, 1}, []StageCheck{
			{GPU: 0, Ops: 1, Issue: 14.04e-6, GPUTime: 3e-6, HostBound: true},
			{GPU: 1, Ops: 2, Issue: 2*14.04e-6 + 4.573468e-6, GPUTime: 1.2e-6, HostBound: true}}},
		{"milliseconds", 1e-3, []int{0, 1, 1}, []StageCheck{
			{GPU: 0, Ops: 1, Issue: 14.04e-6, GPUTime: 3e-3},
			{GPU: 1, Ops: 2, Issue: 2*14.04e-6 + 4.573468e-6, GPUTime: 1.2e-3}}},
		{"one GPU", 1e-6, []int{0, 0, 0}, nil},
	} {
		g := three(t, c.scale, eager)
		m := modelOf(t, g, "h100")
		r := Check(g, m, "h100", testRefs)
		r.AddStages(g, m, c.device)
		if len(r.Stages) != len(c.want) {
			t.Fatalf("%s: %d stages, want %d", c.name, len(r.Stages), len(c.want))
		}
		for k, w := range c.want {
			got := r.Stages[k]
			if got.GPU != w.GPU || got.Ops != w.Ops || got.HostBound != w.HostBound ||
				math.Abs(got.Issue-w.Issue) > 1e-12 || math.Abs(got.GPUTime-w.GPUTime) > 1e-12 {
				t.Errorf("%s: stage %d %+v, want %+v", c.name, k, got, w)
			}
		}
		warned := strings.Contains(strings.Join(r.Warnings, "\n"), "GPUs host-bound")
		if warned != (c.name == "microseconds") {
			t.Errorf("%s: warnings %q", c.name, r.Warnings)
		}
		if line := r.Line(); strings.Contains(line, "GPUs 0, 1 of 2 host-bound") != (c.name == "microseconds") {
			t.Errorf("%s: line %q", c.name, line)
		}
	}
}

// TestAddStagesNotEager: a graph that records no eager PyTorch execution
// (a paper workload) or a captured step gets no stages.
func TestAddStagesNotEager(t *testing.T) {
	for _, exec := range []*graph.Execution{nil, {Device: "cuda", CUDAGraphs: true}} {
		g := three(t, 1e-6, exec)
		m := modelOf(t, g, "h100")
		r := Check(g, m, "h100", testRefs)
		r.AddStages(g, m, []int{0, 1, 1})
		if r.Stages != nil {
			t.Errorf("execution %+v: stages %+v, want none", exec, r.Stages)
		}
	}
}
