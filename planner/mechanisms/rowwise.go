package mechanisms

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// torchao's float8 rowwise recipes are rules of FP8Casts, the one
// plug-in of the plan's low-precision recipe (cost.LowPrecision): their
// casts forward and backward, which its Casts, BwdCasts and Linears read
// where the plan's recipe is one of them. They are no plug-in of their
// own: a step in them is priced by fp8-casts.

// torchao's float8 rowwise recipes (fp8=rowwise, fp8=rowwise_with_gw_hp;
// plan/rowwise.go says what each casts and which GEMMs run in FP8):
// their GEMMs at the speed RowwiseSpeedups gives, their casts' kernels
// here (casts.go composes them), and what they keep for the backward.
//
// What torchao's matmul_with_hp_or_float8_args (torchao/float8/
// float8_linear.py at 36027d8) casts for one linear, each to E4M3 with a
// scale per row or per column of the tensor:
//   - forward: the input along its rows (the reduction dimension of the
//     output GEMM, axiswise_dim -1) and the weight;
//   - backward: the output's gradient along its rows (for the input
//     gradient's GEMM) and along its columns (axiswise_dim 0, for the
//     weight gradient's), the weight again along its other axis, and the
//     input along its columns (the weight gradient's reduction runs over
//     the tokens).
//
// Compiled (torch.compile, which torchtitan's float8 converter asks for:
// model_compile_enabled), a cast along the rows is one kernel: each row's
// amax, scale and cast in one pass over it (2 bytes read, 1 written an
// element; the per-row FP32 scales, 4 bytes a row, left out). A cast
// along the columns needs every row's values before any scale: an amax
// pass (2 bytes read) and a cast pass (2 read, 1 written), as
// fp8=current's per-tensor amax (coster.cast). So an input of e elements
// costs one pass forward, and backward its own column cast plus its
// output gradient's row and column casts, the gradient counted at the
// input's e elements as every recipe here counts it (coster.casts):
// three passes and two amax reductions, five launches. Under
// rowwise_with_gw_hp the weight gradient's GEMM is BF16: backward the
// output gradient's row cast alone (one pass). Uncompiled (eager) the
// casts are not costed, as under the other recipes (eagerBlock).
//
// What it keeps: torchao's autograd function saves its input and weight
// in BF16 (ctx.save_for_backward(input_hp, weight_hp_t)) and casts them
// again in the backward; the forward's row-scaled FP8 input cannot serve
// the weight gradient's column-scaled GEMM, so a rowwise linear's saved
// input is its BF16 one (2 bytes an element: plan.KeepsFP8Inputs), and no FP8
// weight is held between the forward and the backward
// (plan.KeepsFP8Weights). torchtitan's float8 documentation
// (torchtitan/components/quantization/float8.md at b5bcd76): "for float8
// with rowwise scaling, all distributed communication is done in high
// precision": the tensor-parallel all-gathers carry BF16 (tpBytes).

// RowwiseCast is the cast of e elements along their rows: one pass.
func RowwiseCast(e float64) cost.Kernel {
	return cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 2 * e, Writes: e}
}

// ColumnAmax is the amax pass of a cast along the columns of e elements.
func ColumnAmax(e float64) cost.Kernel {
	return cost.Kernel{Class: graph.ClassReduction, FLOPs: e, Read: 2 * e}
}

// torchao's rowwise recipe runs its backward's two GEMMs (the input's
// and the weight's gradients, gemm_config_grad_input and
// gemm_config_grad_weight: use_fast_accum False, Float8LinearConfig in
// torchao/float8/config.py at 36027d8) not in PyTorch's rowwise CUTLASS
// kernel but in cuBLAS's tensorwise one with unit scales, then scales
// the output by hand: addmm_float8_unwrapped (torchao/float8/
// float8_ops.py, from 6a177c90d, 2024-12-04, "[float8] Re-enable
// slow-accum in the bwd of axis-wise scaling schemes", still so at
// 36027d8): where both operands carry axiswise scales and fast
// accumulation is off, "the rowwise CUTLASS-based kernel is so slow
// without fast-accum that we'd rather use the tensorwise cuBLAS-based
// kernel and do the scaling manually afterwards": _scaled_mm with
// scales of one, out_dtype BF16, then output *= a_inverse_scale *
// b_inverse_scale. So those GEMMs run at the tensorwise backward's
// measured speed (RowwiseSpeedups), and each adds a pass over its
// output: an (M, 1) by (1, N) product of the FP32 scale vectors times
// the BF16 output, read and written (2 + 2 bytes an element, 2 FLOPs;
// the vectors left out). Under torch.compile it stays a kernel of its
// own a GEMM: torchao's maintainers (github.com/pytorch/ao/issues/2184,
// 2025-05-08):
// "With torch.compile this unfortunately requires inductor to codegen
// at least one extra triton kernel *per GEMM* to be launched just for
// the rescaling". rowwise_with_gw_hp's input gradient multiplies a
// row-scaled output gradient by a tensorwise weight (no axiswise pair)
// and its weight gradient is BF16: no rescale.

// Rescale is the pass that scales a GEMM output of e BF16 elements by
// its rows' and columns' inverse scales, in place.
func Rescale(e float64) cost.Kernel {
	return cost.Kernel{Class: graph.ClassElementwise, FLOPs: 2 * e, Read: 2 * e, Writes: 2 * e}
}

// RowwiseRescales is the rescale passes of a block half's backward
// GEMMs on shard s under fp8=rowwise (nothing under any other recipe):
// each of the firsts first linears' input gradient, of in elements (the
// input it multiplied: the gathered n x h under tensor parallelism, as
// rowwiseInput), and its weight gradient, the first linears' weights
// (outs[0]/n columns by in/n rows, n the shard's tokens) split evenly
// among them; the second linear's input gradient, mid elements, and its
// weight gradient (mid/n by outs[1]/n). A kernel each.
func RowwiseRescales(s *cost.Shard, in, mid float64, outs [2]float64, firsts float64) cost.Phase {
	var p cost.Phase
	n := s.Tokens
	if s.FP8Fwd == 0 || s.Plan.FP8 != plan.FP8Rowwise || n <= 0 || firsts < 1 {
		return p
	}
	add := func(e, k float64) {
		if e > 0 {
			p.Busy += k * Rescale(e).Time(s.H)
			p.Launches += k
		}
	}
	add(in, firsts)
	add(in/n*outs[0]/n/firsts, firsts)
	add(mid, 1)
	add(mid/n*outs[1]/n, 1)
	return p
}

// rowwiseOverTensorwise is how many times faster a GEMM with rowwise
// scales runs than one with per-tensor scales, both with fast
// accumulation, on an H100 SXM: the median of torch._scaled_mm's rowwise
// over its tensorwise speedup against BF16 at the nine Megatron rows'
// 36 shard GEMMs (measurements/2026-11-26-h100/kernelbench.jsonl, torch
// 2.11 on cuBLAS 13 and PyTorch's CUTLASS rowwise kernel: 1.8655 over
// 1.850; TestH100RowwiseMeasured recomputes it). The H200's same file
// gives 1.8835 over 1.843; per shape rowwise runs 0.90-1.19x tensorwise.
const rowwiseOverTensorwise = 1.8655 / 1.850

// RowwiseSpeedups is how many times faster recipe's GEMMs run than BF16
// ones (a rowwise recipe: plan.Rowwise), forward and backward, on a GPU of
// BF16 tensor peak bf16Peak: forward, the per-tensor forward (fast
// accumulation, FP8Fwd) times rowwiseOverTensorwise. Backward, rowwise's
// two GEMMs (without fast accumulation) run cuBLAS's tensorwise kernel
// with unit scales, torchao rescaling their outputs after them
// (torchao/float8/float8_ops.py addmm_float8_unwrapped, from 6a177c90d
// to 36027d8; the rescale's pass is RowwiseRescales): the per-tensor backward (without fast accumulation,
// FP8Bwd), measured. rowwise_with_gw_hp's data-gradient GEMM pairs a
// row-scaled output gradient with a tensorwise weight, which that
// workaround does not take: the per-tensor backward times
// rowwiseOverTensorwise, its rowwise kernel without fast accumulation
// taken to lose what tensorwise loses (an assumption: not measured); its
// weight-gradient GEMM is BF16: the two backward GEMMs (the same FLOPs)
// are costed each at the mean of the FP8 data-gradient's time and the
// BF16 weight-gradient's, one over the mean of their inverse speedups.
// Where FP8Fwd is not measured (0), the peaks' ratio, as for the other
// recipes.
func RowwiseSpeedups(k kernels.Node, recipe string, bf16Peak float64) (fwd, bwd float64) {
	fwd, bwd = k.FP8Speedups(false, bf16Peak)
	if k.FP8Fwd > 0 {
		fwd *= rowwiseOverTensorwise
	}
	if recipe == plan.FP8RowwiseGWHP {
		if k.FP8Bwd > 0 {
			bwd *= rowwiseOverTensorwise
		}
		bwd = 2 / (1/bwd + 1)
	}
	return fwd, bwd
}
