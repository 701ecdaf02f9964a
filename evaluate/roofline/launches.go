package roofline

import "github.com/placer/placer/graph"

// MeasuredLaunch is the host's time to put one more kernel on the GPU's
// stream, in seconds: back-to-back empty kernels launched by placer-cuda
// hw bench on the lent H100 of 2026-11-26 (launch_s of
// measurements/2026-11-26-h100/hw-profile.json, the larger of the host's
// and the GPU's time per kernel: 4.57 us). An op that launches n kernels
// is issued in MeasuredIssue + (n-1) x MeasuredLaunch (Host.Launch): the
// measured op (MeasuredIssue, a multiply recorded for autograd) is one
// dispatch and one launch.
const MeasuredLaunch = 4.573468e-6

// noLaunch are the ATen op types that put nothing on the GPU's stream:
// views and allocations (the caching allocator hands out memory without a
// kernel). The profiled H100 steps (measurements/2026-11-26-h100/graphs,
// the meta files' kernel names) show no kernel under any of them.
var noLaunch = map[string]bool{
	"empty": true, "empty_like": true, "empty_strided": true, "new_empty": true, "new_empty_strided": true,
	"view": true, "_unsafe_view": true, "reshape": true, "_reshape_alias": true, "view_as": true,
	"t": true, "transpose": true, "permute": true, "expand": true, "expand_as": true,
	"squeeze": true, "unsqueeze": true, "select": true, "slice": true, "as_strided": true,
	"detach": true, "alias": true, "unflatten": true, "split": true, "split_with_sizes": true,
	"chunk": true, "unbind": true, "narrow": true, "diagonal": true, "lift_fresh": true,
}

// launchKey is an op type in one direction (backward or not).
type launchKey struct {
	typ      string
	backward bool
}

// measuredLaunches are the launches of the op types that put more than one
// kernel, memset or copy on the stream, in the profiled FP32 steps of the
// lent H100 (measurements/2026-11-26-h100/graphs/resnet50-b32-fp32,
// resnet50-b8-fp32, bert_base-b16-fp32 and bert_base-b4-fp32, their meta
// files' kernel names per matched op; the mean count, rounded): a cuDNN
// convolution in TF32 transposes its operands to NHWC and back around the
// GEMM (1 to 4 launches forward, mean 1.9; 4 to 9 backward, mean 6.9), a
// weight gradient and a sum zero their output first (a memset), a layer
// norm's backward runs its input and its weights' gradients apart.
var measuredLaunches = map[launchKey]int{
	{"convolution", false}:                                     2,
	{"convolution_backward", true}:                             7,
	{"mm", true}:                                               2,
	{"sum", true}:                                              2,
	{"native_layer_norm_backward", true}:                       2,
	{"nll_loss_backward", true}:                                2,
	{"select_backward", true}:                                  2,
	{"embedding_dense_backward", true}:                         2,
	{"_scaled_dot_product_efficient_attention_backward", true}: 6,
}

// Launches is how many times graph op i puts work on its GPU's stream
// when eager PyTorch runs it: what a profile recorded (graph.Op.Launches),
// else this rule, from first principles where PyTorch's code says and
// from the H100's profiled steps where it does not:
//
//   - none for the graph's state (Parameter, Input, Buffer), for views and
//     allocations (alias ops, noLaunch), and for the gradient copies a
//     fake-tensor recording shows where the real AccumulateGrad steals
//     the gradient (a backward copy_ into a new_empty_strided: the H100's
//     profiles matched each to no kernel);
//   - a depthwise convolution in FP32 runs PyTorch's own kernels
//     (aten conv_depthwise2d: cuDNN only for half types): one forward,
//     two backward (the input's gradient and the weight's);
//   - measuredLaunches for the types that launch several;
//   - one for every other op.
func Launches(g *graph.Graph, i int) int {
	op := g.Op(i)
	if op.HasLaunches {
		return op.Launches
	}
	if isStateOp(op) || op.Alias || noLaunch[op.Type] {
		return 0
	}
	if op.Type == "copy_" && op.Backward {
		for _, p := range g.Preds(i) {
			if g.Op(int(p)).Type == "new_empty_strided" {
				return 0
			}
		}
	}
	if op.DepthwiseTaps > 0 && op.DType == graph.F32 && op.Class == graph.ClassConv {
		if op.Backward {
			return 2
		}
		return 1
	}
	if n, ok := measuredLaunches[launchKey{op.Type, op.Backward}]; ok {
		return n
	}
	return 1
}

// EagerIssue is the host's time to issue graph op i in eager PyTorch at
// the measured costs: MeasuredIssue for its dispatch and first launch
// (MeasuredIssueBwd for a backward op: EagerIssueOf), MeasuredLaunch for
// each further one (Launches), none for the graph's state. What eval
// --host charges each op (jobs.HostModel), and what opcheck sums to say
// whether a step is host-bound without --host.
func EagerIssue(g *graph.Graph, i int) float64 {
	op := g.Op(i)
	if isStateOp(op) {
		return 0
	}
	return EagerIssueOf(op.Phase()) + float64(Launches(g, i)-1)*MeasuredLaunch
}

// EagerIssueOf is the measured issue of one op of phase ph, its dispatch
// and first launch: MeasuredIssueBwd for the backward's (autograd's
// engine), MeasuredIssue for the forward's and the update's (Python).
func EagerIssueOf(ph graph.Phase) float64 {
	if ph == graph.PhaseBackward {
		return MeasuredIssueBwd
	}
	return MeasuredIssue
}
