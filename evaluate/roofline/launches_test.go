package roofline

import (
	"math"
	"testing"

	"github.com/placer/placer/graph"
)

// TestLaunches: each op's launches by Launches's rule, or the profile's
// where the graph has one, and the host's issue time of each in eager
// PyTorch (EagerIssue: 14.04 us for the dispatch and first launch, 17.86
// us for a backward op's (graph.PhaseBackward: the convolutions' backward
// with work that scales with the batch; the zero-work backward ops below
// count in the update's phase, at 14.04), 4.573 us for each further
// launch, 14.04 - 4.573 = 9.467 us for an op that launches nothing) and
// under eval --host (Host.Launch).
func TestLaunches(t *testing.T) {
	b := graph.NewBuilder("launches")
	w := b.AddOp(graph.Op{Name: "w", Type: "Parameter", Class: graph.ClassDataMovement, Shape: []int64{8, 1, 3, 3}})
	x := b.AddOp(graph.Op{Name: "x", Type: "Input", Class: graph.ClassDataMovement, Shape: []int64{2, 8, 4, 4}})
	ops := []struct {
		op     graph.Op
		in     []int
		want   int
		issues float64 // EagerIssue, us
	}{
		{graph.Op{Name: "conv", Type: "convolution", Class: graph.ClassConv, DType: graph.F32, FLOPs: 1}, nil, 2, 14.04 + 4.573468},
		{graph.Op{Name: "dw", Type: "convolution", Class: graph.ClassConv, DType: graph.F32, FLOPs: 1}, []int{w}, 1, 14.04},
		{graph.Op{Name: "dwbwd", Type: "convolution_backward", Class: graph.ClassConv, DType: graph.F32, FLOPs: 1, Backward: true}, []int{w}, 2, 17.86 + 4.573468},
		{graph.Op{Name: "dwbf16", Type: "convolution", Class: graph.ClassConv, DType: graph.BF16, FLOPs: 1}, []int{w}, 2, 14.04 + 4.573468},
		{graph.Op{Name: "convbwd", Type: "convolution_backward", Class: graph.ClassConv, DType: graph.F32, FLOPs: 1, Backward: true}, nil, 7, 17.86 + 6*4.573468},
		{graph.Op{Name: "view", Type: "view", Class: graph.ClassDataMovement, Alias: true}, nil, 0, 14.04 - 4.573468},
		{graph.Op{Name: "empty", Type: "new_empty_strided", Class: graph.ClassDataMovement, Backward: true}, nil, 0, 14.04 - 4.573468},
		{graph.Op{Name: "gradcopy", Type: "copy_", Class: graph.ClassDataMovement, Backward: true}, []int{-1}, 0, 14.04 - 4.573468},
		{graph.Op{Name: "copy", Type: "copy_", Class: graph.ClassDataMovement, Backward: true}, nil, 1, 14.04},
		{graph.Op{Name: "sum", Type: "sum", Class: graph.ClassReduction, Backward: true}, nil, 2, 14.04 + 4.573468},
		{graph.Op{Name: "sumfwd", Type: "sum", Class: graph.ClassReduction}, nil, 1, 14.04},
		{graph.Op{Name: "profiled", Type: "convolution_backward", Class: graph.ClassConv, Backward: true, HasLaunches: true, Launches: 9}, nil, 9, 14.04 + 8*4.573468},
	}
	idx := make([]int, len(ops))
	empty := -1
	for k, c := range ops {
		i := b.AddOp(c.op)
		idx[k] = i
		if c.op.Name == "empty" {
			empty = i
		}
		for _, p := range c.in {
			if p < 0 {
				p = empty
			}
			b.AddTensor(p, 4, i)
		}
	}
	b.AddTensor(x, 4, idx[0])
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range ops {
		if got := Launches(g, idx[k]); got != c.want {
			t.Errorf("%s: %d launches, want %d", c.op.Name, got, c.want)
		}
		if got := EagerIssue(g, idx[k]); math.Abs(got-c.issues*1e-6) > 1e-12 {
			t.Errorf("%s: issued in %.4f us, want %.4f", c.op.Name, got*1e6, c.issues)
		}
	}
	if Launches(g, w) != 0 || EagerIssue(g, x) != 0 {
		t.Errorf("state ops: %d launches, issued in %g s; want none", Launches(g, w), EagerIssue(g, x))
	}
	// eval --host: the same times from the host model (jobs.HostModel's:
	// MeasuredIssueBwd in the backward, MeasuredIssue in the other phases,
	// MeasuredLaunch per further launch).
	h := &Host{IgnoreProfile: true, Issue: [3]float64{MeasuredIssue, MeasuredIssueBwd, MeasuredIssue}, Launch: MeasuredLaunch}
	order := make([]int32, g.NumOps())
	for i := range order {
		order[i] = int32(i)
	}
	disp, _, err := h.dispatchTimes(g, order)
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range ops {
		if math.Abs(disp[idx[k]]-c.issues*1e-6) > 1e-12 {
			t.Errorf("--host: %s issued in %.4f us, want %.4f", c.op.Name, disp[idx[k]]*1e6, c.issues)
		}
	}
}
