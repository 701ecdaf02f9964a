// The host side of a step (Options.Host): each device's process has one
// CPU thread that dispatches the device's kernels, in the order they run,
// and runs ahead of the GPU.

package roofline

import (
	"fmt"
	"math"
	"sort"

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
// A fused kernel is dispatched once, taking its first op's dispatch time.
// Transfers take no host time. The ops of placer's PyTorch exporter that
// stand for state, not work (types Parameter, Input and Buffer), take none
// either.
//
// The graph's execution settings (graph.Execution, torchexport
// --cuda-graphs and --compile) change what the host does:
//
//   - CUDA graphs (cuda_graphs): the user captured the whole step
//     (forward, backward and the optimizer update) in one CUDA graph and
//     replays it: no op is dispatched; each device's host launches the
//     graph once (GraphLaunch), and every kernel of the step waits for
//     that launch only.
//   - torch.compile in mode reduce-overhead: Inductor's CUDA graphs
//     capture the compiled forward (one region: the ops not marked
//     backward) and the compiled backward (a second: the backward ops
//     before the optimizer update, graph.Execution.OptimizerFrom); each is
//     one launch per device. The optimizer update runs eagerly, op by op.
//   - torch.compile in modes default and max-autotune: the forward's and
//     backward's kernels are launched by Inductor's generated code, one
//     launch per kernel (CompiledLaunch) rather than an eager dispatch per
//     op: a fused kernel (the decision's fusion: Inductor fuses too) once,
//     a view (alias op) never. The update runs eagerly.
//
// An update whose start the graph does not say (OptimizerFrom 0) counts
// as part of the backward.
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
	// one, ahead of ByType and Dispatch, unless IgnoreProfile is set; in
	// such a graph, an op without one (the profile left it unmatched)
	// takes, after ByType, the median profiled time of its type in the
	// graph, else of its class (profiledDispatch), before Dispatch.
	PerOp []float64

	// IgnoreProfile makes ByType and Dispatch hold for ops with a
	// profiled dispatch time too (eval --dispatch: one time for every op).
	IgnoreProfile bool

	// Issue, where set (above 0), is the host's measured time to issue
	// one op of each phase (graph.Phase: forward, backward, update),
	// dispatch and kernel launch, in seconds: it takes the place of
	// Dispatch's class defaults and of a profile's dispatch times (a
	// profile's include torch.profiler's own cost of recording each op;
	// MeasuredIssue says how much). ByType and PerOp still override it.
	Issue [3]float64

	// Launch, where set (above 0) beside Issue, is the host's time for
	// each launch of an op beyond its first, in seconds (MeasuredLaunch):
	// an op that puts n kernels on the stream (Launches: a cuDNN
	// convolution several, a view none) is issued in Issue + (n-1) x
	// Launch. 0: every op takes Issue, whatever it launches.
	Launch float64

	// GraphLaunch is the CPU time of one CUDA graph launch (a captured
	// region's replay), and CompiledLaunch that of one kernel launched by
	// torch.compile's generated code, in seconds; 0 takes
	// DefaultGraphLaunch and DefaultCompiledLaunch.
	GraphLaunch    float64
	CompiledLaunch float64

	// QueueDepth is how many launches a device's stream holds before its
	// host thread waits (launchQueue): 0 takes MeasuredQueueDepth; a
	// negative depth lifts the bound (a host that runs ahead without end,
	// as before the queue was modelled).
	QueueDepth int
}

// MeasuredQueueDepth is how many kernel launches a CUDA stream holds
// pending before the next launch blocks the host until a kernel ends:
// about 1,000, measured by a user launching 10,000 kernels of 190 us each
// on one stream (the first ~1,000 launches took 4-5 us each, every later
// one about one kernel's time, 190 us; three streams held ~1,000 each),
// and not lifted by cudaLimitDevRuntimePendingLaunchCount (NVIDIA
// developer forums, "CUDA stream are blocked when launching lots of
// kernels (>1000)", topic 68937, 2018; Stack Overflow question 53970187).
// NVIDIA documents no size. It bounds how far eager PyTorch's host runs
// ahead of a GPU-bound backward, so that an update of many small kernels
// (the for-loop optimizers: several a parameter) behind more than a
// queue's worth of them waits for its host again.
const MeasuredQueueDepth = 1000

// queueDepth is h's launch queue depth (QueueDepth, MeasuredQueueDepth
// for 0), or 0 for none.
func (h *Host) queueDepth() int {
	switch {
	case h.QueueDepth < 0:
		return 0
	case h.QueueDepth == 0:
		return MeasuredQueueDepth
	}
	return h.QueueDepth
}

// launchSlots returns how many launches each op (the Model's numbering;
// orig: op -> graph op) puts on its stream's queue when eager PyTorch
// dispatches it (Launches; none for an op a CUDA graph replays or that
// torch.compile's code launches, whose launches the queue bound leaves
// out).
func (h *Host) launchSlots(g *graph.Graph, orig []int32) []int8 {
	e := g.Execution()
	capt, _, _ := h.captured(g, orig)
	slots := make([]int8, len(orig))
	for v, i := range orig {
		if (capt != nil && capt[v] >= 0) || compiled(e, int(i)) {
			continue
		}
		slots[v] = int8(min(Launches(g, int(i)), 127))
	}
	return slots
}

// DefaultGraphLaunch and DefaultCompiledLaunch are assumptions, not
// measurements (no GPU was at hand): cudaGraphLaunch of a captured step
// costs the CPU a few microseconds whatever the graph's size, and
// torch.compile's replay of a CUDA graph tree adds its Python bookkeeping
// (checking and copying the inputs into the graph's static buffers): 20
// us per region. A kernel launched from Inductor's generated wrapper skips
// the dispatcher and autograd: about a cudaLaunchKernel, 4 us. A profile
// of the real step (torchexport --profile with the same settings) should
// replace them.
const (
	DefaultGraphLaunch    = 20e-6
	DefaultCompiledLaunch = 4e-6
)

// captured is each op's captured region in the Model's numbering (orig:
// op -> graph op), the number of regions and the launch time of one, or
// nil, 0, 0 when the graph's settings capture nothing (no CUDA graphs).
func (h *Host) captured(g *graph.Graph, orig []int32) ([]int8, int, float64) {
	e := g.Execution()
	if e == nil || (!e.CUDAGraphs && e.Compile != "reduce-overhead") {
		return nil, 0, 0
	}
	launch := h.GraphLaunch
	if launch <= 0 || math.IsNaN(launch) || math.IsInf(launch, 0) {
		launch = DefaultGraphLaunch
	}
	region := make([]int8, len(orig))
	regions := 1
	for v, i := range orig {
		switch {
		case e.CUDAGraphs: // the whole step
			region[v] = 0
		case e.OptimizerFrom > 0 && int(i) >= e.OptimizerFrom: // the eager update
			region[v] = -1
		case g.Op(int(i)).Backward:
			region[v], regions = 1, 2
		default:
			region[v] = 0
		}
	}
	return region, regions, launch
}

// hostSyncFrom is the graph op from which on the ops are the update, where
// the host waits for the GPU under torch.cuda.amp.GradScaler
// (graph.Execution.GradScaler), or -1 when it does not wait: no host
// model, no GradScaler, or the update captured in a CUDA graph.
// GradScaler.step reads the found-inf flags its unscale wrote on the GPU
// with .item() before it calls optimizer.step() ("if not sum(v.item()
// for v in optimizer_state["found_inf_per_device"].values()): retval =
// optimizer.step(...)": pytorch/pytorch's torch/cuda/amp/grad_scaler.py,
// GradScaler.step, PyTorch 1.6 to 1.8, as in mcarilli/pytorch d7cbf9cd;
// torch/amp/grad_scaler.py's _maybe_opt_step since): the host thread
// blocks until the GPU has run what it was given, the backward and the
// unscale, and only then dispatches the update's kernels, so the update's
// host time is not hidden behind the backward. The first update kernel a
// device's host reaches takes the wait (Simulator.charge).
func hostSyncFrom(g *graph.Graph, host bool) int32 {
	e := g.Execution()
	if !host || e == nil || !e.GradScaler || e.OptimizerFrom <= 0 || e.CUDAGraphs {
		return -1
	}
	return int32(e.OptimizerFrom)
}

// compiled says whether graph op i is launched by torch.compile's code
// (modes default and max-autotune) rather than dispatched eagerly.
func compiled(e *graph.Execution, i int) bool {
	if e == nil || (e.Compile != "default" && e.Compile != "max-autotune") || e.CUDAGraphs {
		return false
	}
	return e.OptimizerFrom == 0 || i < e.OptimizerFrom
}

// MeasuredIssue is the time eager PyTorch's host takes to issue one op of
// a training step on a GPU, dispatch and kernel launch, in seconds: a
// multiply recorded for autograd, 500 in a row with the GPU kept busy so
// that none waits, on the lent H100 machine of 2026-11-26 (an Intel Xeon
// of 16 vCPUs, torch 2.11, CUDA 13; kernelbench --only host,
// measurements/2026-11-26-h100-c/host.jsonl, issue.mul_autograd: 14.04
// us). The same image on another H100 machine measured 20.0 us
// (moehost-kernels.jsonl): the host is the noisiest figure of a step.
// A profile's per-op dispatch times (torchexport --profile) are larger:
// torch.profiler records each op, and on EfficientNet-B0, whose step
// waits on its host half the time, they predict it twice as slow as it
// ran (docs/performance-model.md, "The host").
const MeasuredIssue = 14.04e-6

// MeasuredIssueBwd is the time eager PyTorch's autograd engine takes to
// run one node of a backward on a GPU, its dispatch and kernel launch
// included, in seconds: a chain of 500 multiplies by a constant, each
// node of whose backward launches one multiply, run backward with the GPU
// kept busy ahead (kernelbench --only host, issue.backward_node: the
// backward call's host time over 500) on the same lent H100 machine as
// MeasuredIssue (measurements/2026-11-26-h100-c/host.jsonl: 17.86 us;
// 16.25 us on the second H100 machine, host-moehost.jsonl; 15.99 and
// 15.71 us on the H200 machine, 2026-11-26-h200-b/host.jsonl and
// host-after.jsonl). The engine's thread pops each node from its ready
// queue, calls it and accumulates its outputs' gradients in C++, without
// Python; on each of these machines that took 1.1 to 1.7 times a Python
// op's issue. planner/kernels's Host.IssueBwd is the same figure.
// A backward ATen op of the graph is charged one node's time: the graph
// records the ops, not the nodes (an addmm's node runs two mm and a sum).
const MeasuredIssueBwd = 17.86e-6

// DefaultDispatch is the dispatch time of one op of each class (by
// graph.Class): PyTorch 2.14.1's CPU time per op on tiny CPU tensors
// (tools/dev/torchexport/dispatch.py: an op called from Python, one thread,
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
	e := g.Execution()
	capt, _, _ := h.captured(g, orig)
	compLaunch := h.CompiledLaunch
	if compLaunch < 0 || math.IsNaN(compLaunch) || math.IsInf(compLaunch, 0) {
		return nil, 0, fmt.Errorf("roofline: compiled launch time %v", compLaunch)
	}
	if h.GraphLaunch < 0 || math.IsNaN(h.GraphLaunch) || math.IsInf(h.GraphLaunch, 0) {
		return nil, 0, fmt.Errorf("roofline: CUDA graph launch time %v", h.GraphLaunch)
	}
	if compLaunch == 0 {
		compLaunch = DefaultCompiledLaunch
	}
	if h.Launch < 0 || math.IsNaN(h.Launch) || math.IsInf(h.Launch, 0) {
		return nil, 0, fmt.Errorf("roofline: host launch time %v", h.Launch)
	}
	var prof *profiledDispatch
	if !h.IgnoreProfile {
		prof = profiledDispatchOf(g)
	}
	disp := make([]float64, len(orig))
	total := 0.0
	for v, i := range orig {
		op := g.Op(int(i))
		var t float64
		switch {
		case capt != nil && capt[v] >= 0:
			t = 0 // replayed: the region's launch stands for it
		case compiled(e, int(i)):
			if op.Alias || op.Type == "Parameter" || op.Type == "Input" || op.Type == "Buffer" {
				t = 0
			} else {
				t = compLaunch
			}
		case int(i) < len(h.PerOp) && h.PerOp[i] >= 0:
			t = h.PerOp[i]
			if math.IsInf(t, 0) {
				return nil, 0, fmt.Errorf("roofline: host dispatch time %v for op %s", t, op.Name)
			}
		case op.Type == "Parameter" || op.Type == "Input" || op.Type == "Buffer":
			t = 0
		case op.HasDispatch && !h.IgnoreProfile && h.Issue[op.Phase()] <= 0:
			t = op.Dispatch
		default:
			if x, ok := h.ByType[op.Type]; ok {
				t = x
			} else if x := h.Issue[op.Phase()]; x > 0 {
				t = x
				if h.Launch > 0 {
					t = max(0, x+float64(Launches(g, int(i))-1)*h.Launch)
				}
			} else if x, ok := prof.of(op); ok {
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

// profiledDispatch holds what a profiled graph says of the dispatch times
// of the ops it could not match to a profiled event (torchexport
// --profile leaves an op unmatched where the real run names it otherwise,
// as cuDNN's batch norm and convolutions on CUDA, or where its matcher
// lost its place): the median profiled dispatch time of the graph's
// matched ops of each type, and of each class. An unmatched op was
// dispatched by the same host thread in the same step as the matched
// ones; its type's median there is a measurement of that host, where
// DefaultDispatch is another machine's CPU on CPU tensors, without the
// kernel launch (2 µs where the H100's host took 9 to 160 µs).
type profiledDispatch struct {
	byType  map[string]float64
	byClass [graph.NumClasses]float64
	hasCl   [graph.NumClasses]bool
}

// profiledDispatchOf returns g's profiled dispatch medians, or nil when
// no op of g has a profiled dispatch time (a graph profiled on a CPU, or
// not at all).
func profiledDispatchOf(g *graph.Graph) *profiledDispatch {
	byType := map[string][]float64{}
	var byClass [graph.NumClasses][]float64
	for i := range g.NumOps() {
		op := g.Op(i)
		if !op.HasDispatch || isStateOp(op) || int(op.Class) >= graph.NumClasses {
			continue
		}
		byType[op.Type] = append(byType[op.Type], op.Dispatch)
		byClass[op.Class] = append(byClass[op.Class], op.Dispatch)
	}
	if len(byType) == 0 {
		return nil
	}
	p := &profiledDispatch{byType: make(map[string]float64, len(byType))}
	for typ, ts := range byType {
		p.byType[typ] = median(ts)
	}
	for c, ts := range byClass {
		if len(ts) > 0 {
			p.byClass[c], p.hasCl[c] = median(ts), true
		}
	}
	return p
}

// of is the profiled dispatch time an unmatched op takes: its type's
// median, else its class's; false when the profile has neither (or p is
// nil).
func (p *profiledDispatch) of(op *graph.Op) (float64, bool) {
	if p == nil {
		return 0, false
	}
	if t, ok := p.byType[op.Type]; ok {
		return t, true
	}
	if int(op.Class) < graph.NumClasses && p.hasCl[op.Class] {
		return p.byClass[op.Class], true
	}
	return 0, false
}

func isStateOp(op *graph.Op) bool {
	return op.Type == "Parameter" || op.Type == "Input" || op.Type == "Buffer"
}

// median of ts (not empty), which it sorts.
func median(ts []float64) float64 {
	sort.Float64s(ts)
	n := len(ts)
	if n%2 == 1 {
		return ts[n/2]
	}
	return (ts[n/2-1] + ts[n/2]) / 2
}
