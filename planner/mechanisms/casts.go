package mechanisms

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// The casts of GEMM inputs to the plan's low-precision recipe on a shard
// (castShard), as every recipe runs them: the per-tensor and blockwise
// ones here, the rowwise recipes' and torchao's tensorwise backward from
// their kernels (rowwise.go), the block-scaled ones' (blockscaled.go).
// FP8Casts prices a step's by them, and a plug-in that composes a block
// of its own asks them through Casts and BwdCasts: a helper of the
// mechanisms, no plug-in.

// Casts is the FP8 quantisations of GEMM inputs of es elements each on
// shard s, forward (casts'); nothing in BF16.
func Casts(s *cost.Shard, es ...float64) cost.Phase { return castShard{s}.casts(es...) }

// BwdCasts is the backward's (bwdCasts').
func BwdCasts(s *cost.Shard, es ...float64) cost.Phase { return castShard{s}.bwdCasts(es...) }

// RowwiseBwd is the rowwise recipes' backward casts of GEMMs of inputs
// ins and output gradients outs (rowwiseBwd's).
func RowwiseBwd(s *cost.Shard, ins, outs []float64) cost.Phase {
	return castShard{s}.rowwiseBwd(ins, outs)
}

// RowwiseInput is the share of a sequence-split input a rowwise recipe
// casts on one GPU (rowwiseInput's).
func RowwiseInput(s *cost.Shard) float64 { return castShard{s}.rowwiseInput() }

// castShard is the shard a recipe's casts are priced on.
type castShard struct{ *cost.Shard }

// cast is the FP8 quantisation of a GEMM's input of e elements (BF16)
// as the recipe runs it, a memory-bound pass or two (0 in BF16): current
// scaling reads the tensor for its amax and again to cast it (Transformer
// Engine's Float8CurrentScalingQuantizer); delayed scaling casts with the
// amax history's scale in one pass; blockwise computes each block's
// scale in the casting pass (its FP32 scales, one per 128, left out).
// kernelbench's fp8cast lines (measurements/2026-11-26-h100) time eager
// PyTorch's current scaling (abs, amax, to FP32, scale, to FP8: five
// kernels, about 25 bytes an element) at 10.5-17 ps an element, about
// 2.3 TB/s on those bytes at the larger tensors: memory-bound, as
// costed here, but not Transformer Engine's fused kernels' bytes, so
// the 5 (current) and 3 (delayed) bytes an element stay assumptions.
// MXFP8 and NVFP4 cast in one pass to both copies (blockCast), NVFP4
// after an amax pass of its own (AmaxFirst); torchao's rowwise recipes
// along the rows in one pass forward (rowwise.go; their backward's:
// bwdCasts).
func (c castShard) cast(e float64) float64 {
	if c.FP8Fwd == 0 || e <= 0 {
		return 0
	}
	if plan.Rowwise(c.Plan.FP8) {
		return RowwiseCast(e).Time(c.H)
	}
	one := cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 2 * e, Writes: e}
	if plan.BlockScaled(c.Plan.FP8) {
		one = BlockCast(c.Plan.FP8, e)
	}
	if AmaxFirst(c.Plan.FP8) {
		return one.Time(c.H) + cost.Kernel{Class: graph.ClassReduction, FLOPs: e, Read: 2 * e}.Time(c.H)
	}
	return one.Time(c.H)
}

// AmaxFirst is whether recipe reads a tensor for its amax before the
// pass that casts it: current scaling (its per-tensor scale), and NVFP4
// (its per-tensor FP32 scale over the blocks' E4M3 ones: blockCast).
func AmaxFirst(recipe string) bool { return recipe == plan.FP8Current || recipe == plan.FP4NV }

// casts is the FP8 quantisations of GEMM inputs of es elements each
// (cast's), as a phase: one kernel each, two with current scaling and
// NVFP4 (their amax first).
func (c castShard) casts(es ...float64) cost.Phase {
	var p cost.Phase
	if c.FP8Fwd == 0 {
		return p
	}
	per := 1.0
	if AmaxFirst(c.Plan.FP8) {
		per = 2
	}
	for _, e := range es {
		p.Busy += c.cast(e)
		if e > 0 {
			p.Launches += per
		}
	}
	return p
}

// rowwiseCasts is the casts of GEMM inputs of es elements each under a
// rowwise recipe, forward (bwd false) or backward, as a phase.
func (c castShard) rowwiseCasts(bwd bool, es ...float64) cost.Phase {
	var p cost.Phase
	for _, e := range es {
		if e <= 0 {
			continue
		}
		p.Busy += RowwiseCast(e).Time(c.H)
		p.Launches++
		if bwd && c.Plan.FP8 == plan.FP8Rowwise {
			p.Busy += 2*RowwiseCast(e).Time(c.H) + 2*ColumnAmax(e).Time(c.H)
			p.Launches += 4
		}
	}
	return p
}

// bwdCasts is the backward's casts of GEMM inputs of es elements each:
// casts' under every recipe but the rowwise ones (rowwiseCasts).
func (c castShard) bwdCasts(es ...float64) cost.Phase {
	if c.FP8Fwd > 0 && plan.Rowwise(c.Plan.FP8) {
		return c.rowwiseCasts(true, es...)
	}
	if c.FP8Fwd > 0 && c.Plan.FP8 == plan.FP8Current && c.Plan.Software.Framework() == plan.FrameworkTorchTitan {
		return c.torchaoTensorwiseBwd(es...)
	}
	return c.casts(es...)
}

// torchaoTensorwiseBwd is the backward's casts of GEMM inputs of es
// elements each under torchao's tensorwise recipe: casts' (the output
// gradient's amax and cast, the gradient counted at the input's
// elements), and the layouts torch._scaled_mm asks of the weight
// gradient's GEMM, grad_output_fp8.t() @ input_fp8, whose first operand
// must be row-major and second column-major (torchao/float8/
// float8_ops.py preprocess_addmm at eab345c, 890e0ac8 and 6243040:
// a_data.contiguous(), b_data.t().contiguous().t()): the output
// gradient's float8 written a second time, transposed, by its cast's
// pass (1 byte an element more), and the input's float8 copied
// column-major (1 read, 1 written, a kernel). torchao from 890e0ac8 on
// casts the BF16 input again instead of copying a saved float8 one
// (matmul_with_hp_or_float8_args saves input_hp): 5 bytes where this
// counts 2, left out as the stack does not say which torchao runs.
func (c castShard) torchaoTensorwiseBwd(es ...float64) cost.Phase {
	p := c.casts(es...)
	for _, e := range es {
		if e <= 0 {
			continue
		}
		two := cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 2 * e, Writes: 2 * e}.Time(c.H)
		one := cost.Kernel{Class: graph.ClassElementwise, FLOPs: e, Read: 2 * e, Writes: e}.Time(c.H)
		p.Busy += two - one + cost.Kernel{Class: graph.ClassElementwise, Read: e, Writes: e}.Time(c.H)
		p.Launches++
	}
	return p
}

// torchtitan's tensor parallelism under a rowwise recipe runs the plain
// ColwiseParallel and RowwiseParallel styles (torchtitan/models/llama3/
// parallelize_llama.py at 820504e, parallelize_llama:
// enable_float8_tensorwise_tp is off for "rowwise" and
// "rowwise_with_gw_hp"; "all-gather happens in high precision"), so a
// column-parallel linear's Float8Linear casts the input after its BF16
// all-gather: n x h elements, not the sequence shard n x h / T that
// Float8ColwiseParallel casts under tensorwise. wq, wk and wv (and w1 and
// w3) cast the same input with the same recipe: one cast, AOTAutograd
// merging the identical nodes before it partitions the graph
// (torch/_functorch/config.py at 00a1abb: cse = True). A row-parallel
// linear's output gradient arrives gathered (the reduce-scatter's
// backward, or the all-reduce's): n x h. So the backward casts the output
// gradients of the GEMMs, each at its own width, not at its input's.

// rowwiseInput is the share of a block's n x h activation that the
// first GEMMs' input cast covers: all of it under a rowwise recipe (cast
// after the BF16 all-gather), else the sequence share (c.sp).
func (c castShard) rowwiseInput() float64 {
	if plan.Rowwise(c.Plan.FP8) {
		return 1
	}
	return c.SP()
}

// rowwiseBwd is the backward's casts under a rowwise recipe of linears
// whose distinct inputs have ins elements and whose outputs' gradients
// outs: each input along its columns for the weight gradient (a column
// amax and a cast pass), each output gradient along its rows for the
// input gradient and along its columns for the weight gradient;
// rowwise_with_gw_hp's weight gradient is BF16: the rows alone.
func (c castShard) rowwiseBwd(ins, outs []float64) cost.Phase {
	var p cost.Phase
	full := c.Plan.FP8 == plan.FP8Rowwise
	for _, g := range outs {
		p.Busy += RowwiseCast(g).Time(c.H)
		p.Launches++
		if full {
			p.Busy += ColumnAmax(g).Time(c.H) + RowwiseCast(g).Time(c.H)
			p.Launches += 2
		}
	}
	for _, e := range ins {
		if full {
			p.Busy += ColumnAmax(e).Time(c.H) + RowwiseCast(e).Time(c.H)
			p.Launches += 2
		}
	}
	return p
}
