// The host side of a step (Options.Host): each device's process has one
// CPU thread that dispatches the device's kernels, in the order they run,
// and runs ahead of the GPU.

package roofline

import (
	"fmt"
	"math"

	"github.com/placer/placer/graph"
)

// Host models the CPU side of a training step, as eager PyTorch runs it:
// each device's process has one host thread that dispatches the device's
// kernels in the order they run, each taking its dispatch time on the CPU
// (Python, the dispatcher, autograd's bookkeeping, the kernel launch), and
// that never waits for the GPU (it runs ahead, queueing kernels). A kernel
// starts when its device is free, its inputs are there, and the host has
// dispatched it: the k-th kernel of a device starts no earlier than the sum
// of the dispatch times of its first k kernels. A step of many small
// kernels is then bound by the host and one of large kernels by the GPU.
//
// A fused kernel is dispatched once, taking its first op's dispatch time
// (what CUDA graphs or torch.compile remove is the per-op cost of the
// rest). Transfers take no host time. The ops of placer's PyTorch exporter
// that stand for state, not work (types Parameter, Input and Buffer), take
// none either.
type Host struct {
	// Dispatch is the CPU time to dispatch one op of each class, in
	// seconds, indexed by graph.Class; a class left at 0 takes
	// DefaultDispatch's.
	Dispatch [graph.NumClasses]float64

	// ByType overrides Dispatch for the ops of a type (an ATen op such as
	// "addmm"). Nil: none.
	ByType map[string]float64

	// PerOp overrides all of these for single ops, by graph op index:
	// op i takes PerOp[i] where that is 0 or more (negative: no
	// measurement). Nil, or shorter than the graph: none for the rest.
	// Below PerOp, an op with a profiled dispatch time in the graph
	// (graph.Op.HasDispatch, torchexport --profile on a GPU) takes that
	// one, ahead of ByType and Dispatch, unless IgnoreProfile is set.
	PerOp []float64

	// IgnoreProfile makes ByType and Dispatch hold for ops with a
	// profiled dispatch time too (eval --dispatch: one time for every op).
	IgnoreProfile bool
}

// DefaultDispatch is the dispatch time of one op of each class (by
// graph.Class): PyTorch 2.14.1's CPU time per op on tiny CPU tensors
// (tools/torchexport/dispatch.py: an op called from Python, one thread,
// the median of 15 rounds of 2,000 calls; the median of three runs) on
// this project's machine (2 cores, nothing else running, 2026-11-25): mm
// for matmul, conv2d for conv, add for elementwise, sum for reduction,
// clone for datamove, embedding for embedding; unknown takes
// elementwise's. The kernel launch a GPU adds (cudaLaunchKernel) is not in
// them, nor a faster or slower host: a profile of the real step should
// replace them.
var DefaultDispatch = [graph.NumClasses]float64{
	graph.ClassUnknown:      1.73e-6,
	graph.ClassMatMul:       2.16e-6,
	graph.ClassConv:         4.87e-6,
	graph.ClassElementwise:  1.73e-6,
	graph.ClassReduction:    2.12e-6,
	graph.ClassDataMovement: 1.66e-6,
	graph.ClassEmbedding:    2.34e-6,
}

// dispatchTimes returns each op's dispatch time in the Model's numbering
// (orig: op -> graph op), and their sum.
func (h *Host) dispatchTimes(g *graph.Graph, orig []int32) ([]float64, float64, error) {
	var class [graph.NumClasses]float64
	for c := range class {
		v := h.Dispatch[c]
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, 0, fmt.Errorf("roofline: host dispatch time %v for class %s", v, graph.Class(c))
		}
		if v == 0 {
			v = DefaultDispatch[c]
		}
		class[c] = v
	}
	for typ, v := range h.ByType {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, 0, fmt.Errorf("roofline: host dispatch time %v for op type %q", v, typ)
		}
	}
	disp := make([]float64, len(orig))
	total := 0.0
	for v, i := range orig {
		op := g.Op(int(i))
		var t float64
		switch {
		case int(i) < len(h.PerOp) && h.PerOp[i] >= 0:
			t = h.PerOp[i]
			if math.IsInf(t, 0) {
				return nil, 0, fmt.Errorf("roofline: host dispatch time %v for op %s", t, op.Name)
			}
		case op.Type == "Parameter" || op.Type == "Input" || op.Type == "Buffer":
			t = 0
		case op.HasDispatch && !h.IgnoreProfile:
			t = op.Dispatch
		default:
			if x, ok := h.ByType[op.Type]; ok {
				t = x
			} else {
				t = class[op.Class]
			}
		}
		disp[v] = t
		total += t
	}
	return disp, total, nil
}
