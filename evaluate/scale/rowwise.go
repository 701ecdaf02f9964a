package scale

import (
	"github.com/placer/placer/evaluate/scale/plan"
	"github.com/placer/placer/graph"
)

// torchao's float8 rowwise recipes (fp8=rowwise, fp8=rowwise_with_gw_hp;
// plan/rowwise.go says what each casts and which GEMMs run in FP8):
// their GEMMs at the speed plan.Kernels.RowwiseSpeedups gives, their
// casts here, and what they keep for the backward.
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

// rowwiseCast is the cast of e elements along their rows: one pass.
func rowwiseCast(e float64) kernel {
	return kernel{class: graph.ClassElementwise, flops: e, read: 2 * e, writes: e}
}

// columnAmax is the amax pass of a cast along the columns of e elements.
func columnAmax(e float64) kernel {
	return kernel{class: graph.ClassReduction, flops: e, read: 2 * e}
}

// rowwiseCasts is the casts of GEMM inputs of es elements each under a
// rowwise recipe, forward (bwd false) or backward, as a phase.
func (c *coster) rowwiseCasts(bwd bool, es ...float64) phase {
	var p phase
	for _, e := range es {
		if e <= 0 {
			continue
		}
		p.busy += rowwiseCast(e).time(c.h)
		p.launches++
		if bwd && c.pl.FP8 == plan.FP8Rowwise {
			p.busy += 2*rowwiseCast(e).time(c.h) + 2*columnAmax(e).time(c.h)
			p.launches += 4
		}
	}
	return p
}

// bwdCasts is the backward's casts of GEMM inputs of es elements each:
// casts' under every recipe but the rowwise ones (rowwiseCasts).
func (c *coster) bwdCasts(es ...float64) phase {
	if c.fp8 > 0 && plan.Rowwise(c.pl.FP8) {
		return c.rowwiseCasts(true, es...)
	}
	return c.casts(es...)
}
