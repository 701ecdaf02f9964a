package mechanisms

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// FP8Casts is the plan's FP8 (or FP4) recipe (Plan.FP8,
// cost.LowPrecision): its GEMMs' speedups over BF16, and the
// quantisation of the blocks' GEMM inputs as the recipe runs it, where
// the pod prices its GEMMs in FP8 (Shard.FP8Fwd), under every recipe,
// with the block-scaled recipes' and torchao's rowwise ones' own rules
// (casts.go, blockscaled.go, rowwise.go: rules of this plug-in, not plug-ins). Casts and BwdCasts are its
// casts on a shard for a plug-in that composes a block of its own (a
// code base's, a family's).
type FP8Casts struct{}

var _ cost.LowPrecision = FP8Casts{}

// Name is the mechanism's registered name.
func (FP8Casts) Name() string { return "fp8-casts" }

// When is the casts' declaration: GEMMs in FP8 or FP4.
func (FP8Casts) When() cost.When { return fp8CastsWhen }

var fp8CastsWhen = cost.When{cost.FP8}

// Casts is Casts on s (cost.LowPrecision).
func (FP8Casts) Casts(s *cost.Shard, es ...float64) cost.Phase { return Casts(s, es...) }

// BwdCasts is BwdCasts on s (cost.LowPrecision).
func (FP8Casts) BwdCasts(s *cost.Shard, es ...float64) cost.Phase { return BwdCasts(s, es...) }

// Linears is the casts of a block half's two linears on s
// (cost.LowPrecision): forward the first linears' input (its sequence
// share, or all of it under a rowwise recipe, which casts after the BF16
// gather: rowwiseInput) and the second's; backward the same inputs'
// (bwdCasts), or under a rowwise recipe the inputs' and the outputs'
// gradients' (rowwiseBwd), and under fp8=rowwise the rescale of each
// backward GEMM's output (RowwiseRescales: firsts first linears, each
// its own GEMMs). Asked where it prices the shard, as it declares (the
// GEMMs in FP8 or FP4).
func (FP8Casts) Linears(s *cost.Shard, in, mid float64, outs [2]float64, firsts float64) (fwd, bwd cost.Phase) {
	c := castShard{s}
	x := in * c.rowwiseInput()
	if plan.Rowwise(s.Plan.FP8) {
		return c.casts(x, mid), c.rowwiseBwd([]float64{x, mid}, outs[:]).Plus(RowwiseRescales(s, x, mid, outs, firsts))
	}
	return c.casts(x, mid), c.bwdCasts(x, mid)
}

// Speedups is how many times faster pl's GEMMs run in its recipe than
// BF16 GEMMs of their shapes on pod p, forward and backward
// (cost.LowPrecision): the pod's FP8 kernels' (Kernels.FP8Speedups:
// per-tensor scaling, or blockwise), a rowwise recipe's
// (RowwiseSpeedups), a block-scaled one's (BlockSpeedups).
func (FP8Casts) Speedups(pl *plan.Plan, p *plan.Pod, bf16Peak float64) (fwd, bwd float64) {
	fwd, bwd = p.Kernels.FP8Speedups(pl.FP8 == plan.FP8Blockwise, bf16Peak)
	if plan.Rowwise(pl.FP8) {
		fwd, bwd = RowwiseSpeedups(p.Kernels, pl.FP8, bf16Peak)
	}
	if plan.BlockScaled(pl.FP8) {
		fwd, bwd = BlockSpeedups(pl.FP8, p, bf16Peak)
	}
	return fwd, bwd
}

var _ cost.StepKernels = FP8Casts{}

// StepKernels is t with the blocks' weights cast to FP8 once a step on
// the busiest stage (the first micro-batch's; Transformer Engine keeps
// them for the others): read as BF16, written row- and column-wise
// (Hopper's FP8 GEMMs take both layouts), and with current scaling read
// once more for their amax; with torchao's rowwise scaling the same (one
// cast along the weight's rows, one along its columns after their amax
// pass: rowwise.go). t as it is without FP8, and under torchao's float8,
// which casts them every micro-batch (TorchaoFloat8's StepKernels).
//
// Not under LoRA with FP8 primary weights (fp8-params=on): the frozen
// base's weights are FP8 already (TE v1.6 _Linear.forward: "if
// primary_weights_in_fp8: # Weight is already in FP8 ... weight_fp8 =
// weight") and no optimizer step writes them, so nothing casts them. With
// FP8 primary weights whose transposes are not cached
// (fp8-transpose-cache=off) the step's cast writes the row-wise copy
// only: the transposes are made every micro-batch (StageKernels).
func (FP8Casts) StepKernels(s *cost.Shard, stages []cost.Stage, t float64) float64 {
	pl, h := &s.Plan, &s.Pod.Hardware
	if pl.FP8 == "" || TorchaoOn(pl) || (pl.LoRA() && pl.FP8Params) {
		return t
	}
	var lw float64
	for _, st := range stages {
		lw = max(lw, st.Layers)
	}
	writes := 2 * lw
	if pl.FP8Params && pl.NoTransposeCache {
		writes = lw
	}
	t += cost.Kernel{Class: graph.ClassElementwise, FLOPs: lw, Read: 2 * lw, Writes: writes}.Time(h)
	if pl.FP8 == plan.FP8Current || plan.Rowwise(pl.FP8) {
		t += cost.Kernel{Class: graph.ClassReduction, FLOPs: lw, Read: 2 * lw}.Time(h)
	}
	return t
}

var _ cost.StageKernels = FP8Casts{}

// StageKernels is, with FP8 primary weights whose transposes are not
// cached (fp8-params=on with fp8-transpose-cache=off: NeMo's and
// Megatron-Core's disable_parameter_transpose_cache), the transpose of
// each of the stage's block linear weights made in every micro-batch's
// backward for its data-gradient GEMM: Megatron-Core's TE layers pass
// is_first_microbatch None (megatron/core/transformer/custom_layers/
// transformer_engine.py, core_r0.7.0: "None if
// self.disable_parameter_transpose_cache else self.is_first_microbatch"),
// and TE v1.6's _Linear.backward (layernorm_linear.py and
// layernorm_mlp.py alike) calls weight.transpose_2d(cache=False), which
// runs tex.fp8_transpose on the weight's FP8 data (float8_tensor.py):
// one byte read and one written an element, one kernel a weight. The
// weights are this GPU's shards of a dense block's four linear layers
// (transformer.BlockLinearWidths' per-GPU widths), times the stage's layers. Nothing
// forward, and nothing without that recipe.
func (FP8Casts) StageKernels(s *cost.Shard, st *cost.Stage) (fwd, bwd cost.Phase) {
	pl := &s.Plan
	if !pl.FP8Params || !pl.NoTransposeCache || s.FP8Fwd == 0 || st.Index >= len(pl.Stages) {
		return fwd, bwd
	}
	layers := float64(pl.Stages[st.Index])
	in, out, _ := transformer.BlockLinearWidths(&s.M, float64(pl.TP))
	for i := range in {
		e := in[i] * out[i]
		k := cost.Kernel{Class: graph.ClassElementwise, Read: e, Writes: e}
		bwd.Busy += layers * k.Time(&s.Pod.Hardware)
		bwd.Launches += layers
	}
	return fwd, bwd
}
