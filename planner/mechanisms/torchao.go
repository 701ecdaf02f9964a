package mechanisms

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// torchao's float8 training as torchtitan runs it (the torchtitan stacks'
// fp8=current, fp8=rowwise and fp8=rowwise_with_gw_hp), what it does to
// the blocks' weights, from pytorch/ao torchao/float8/float8_linear.py at
// eab345c (2024-12, torchtitan's December 2024 tables), 890e0ac8
// (2025-02, torchao's float8 README rows of 2025-03) and 6243040
// (2025-06, the async TP rows), which agree on all of it:
//
//   - torchao caches no float8 weight across micro-batches, unlike
//     Transformer Engine (optimizerStep's once a step): every forward of
//     every Float8Linear casts its weight again. Tensorwise
//     (Float8Linear.forward without axiswise scaling): _get_weight_scale's
//     tensor_to_scale, an amax over the whole weight (2 bytes read an
//     element), then _cast_weight_to_float8_t (2 read, 1 written; the
//     amax must end before the first scaled element, so under
//     torch.compile these stay two kernels). The float8 weight is saved
//     for the backward, where the input gradient's torch._scaled_mm
//     takes it as its second operand, which must be column-major
//     (float8_ops.py's float8_mm: b_data.t().contiguous().t()): a
//     transposed copy (1 read, 1 written).
//   - Rowwise (matmul_with_hp_or_float8_args, which saves weight_hp_t
//     in BF16): forward a cast with one scale per row of the weight
//     along its reduction dimension (each row's amax and cast in one
//     pass: rowwiseCast, 2 read and 1 written); backward the weight cast
//     again along its other axis for the input gradient (axiswise_dim
//     -1 of weight_t: a column amax pass and a cast pass, 2 + 2 read and
//     1 written; rowwise_with_gw_hp's cast_config_weight_for_grad_input
//     is tensorwise: an amax and a cast, the same bytes).
//   - With the float8 all-gather (fp8gather=on, plan/float8gather.go)
//     the weight reaches the forward as float8 (tensor_already_casted_to_fp8:
//     no cast) and the backward transposes it as above; the cast is the
//     shard's, before the gather (fsdp2SideCopies), with the scales
//     computed once a step by precompute_float8_dynamic_scale_for_fsdp
//     (fp8GatherScales).
//
// The casts run on the compute stream inside the compiled blocks; they
// are charged here per step (NumMicro times a micro-batch's), beside the
// optimizer's step, which under a pipeline leaves out their share of the
// bubble.

// TorchaoFloat8 is torchao's float8 training as torchtitan runs it (above),
// registered for a figure's provenance: its weights' casts a step
// (TorchaoWeightCasts), its float8 all-gather's bytes, copy-in and
// scales (GatheredBytes, FP8GatherCopyIn, FP8GatherScales), which the
// step's optimizer and FSDP2's exchanges ask.
type TorchaoFloat8 struct{}

// Name is the mechanism's registered name.
func (TorchaoFloat8) Name() string { return "torchao-float8" }

// When is torchao's declaration: FP8 on a torchtitan stack (TorchaoOn).
func (TorchaoFloat8) When() cost.When { return torchaoWhen }

var torchaoWhen = cost.When{
	cost.Key("fp8", "fp8 set", func(pl *plan.Plan) bool { return pl.FP8 != "" }),
	cost.Framework(plan.FrameworkTorchTitan),
}

// TitanLinears is the float8 linears of a torchtitan Llama block:
// Attention's wq, wk, wv and wo and FeedForward's w1, w2 and w3
// (torchtitan/models/llama3/model.py at v0.2.0).
const TitanLinears = 7

// TorchaoOn is whether plan pl's FP8 recipe is torchao's: FP8 on a
// torchtitan stack.
func TorchaoOn(pl *plan.Plan) bool {
	return pl.FP8 != "" && pl.Software.Framework() == plan.FrameworkTorchTitan
}

// TorchaoWeightCasts is the time a step of plan pl casts the float8
// weights of a stage whose blocks hold lw parameters on this GPU, as
// torchao does (above): per micro-batch, tensorwise an amax and a cast
// forward (none with fp8gather=on) and a transposed copy backward;
// rowwise a row cast forward and a column amax and cast backward.
func TorchaoWeightCasts(pl *plan.Plan, h *roofline.Hardware, lw float64) float64 {
	var t float64
	switch {
	case plan.Rowwise(pl.FP8):
		t = RowwiseCast(lw).Time(h) + ColumnAmax(lw).Time(h) + cost.Kernel{Class: graph.ClassElementwise, FLOPs: lw, Read: 2 * lw, Writes: lw}.Time(h)
	default:
		if !pl.FP8Gather {
			t = ColumnAmax(lw).Time(h) + cost.Kernel{Class: graph.ClassElementwise, FLOPs: lw, Read: 2 * lw, Writes: lw}.Time(h)
		}
		t += cost.Kernel{Class: graph.ClassElementwise, Read: lw, Writes: lw}.Time(h)
	}
	return float64(pl.NumMicro) * t
}

// GatheredBytes is the bytes FSDP gathers, and copies out, for n
// parameters of which lin are the blocks' linear weights: the pod's
// weight bytes each, or with fp8gather=on one byte each of lin
// (torchao's float8 all-gather).
func GatheredBytes(pl *plan.Plan, p *plan.Pod, n, lin float64) float64 {
	if !pl.FP8Gather {
		return p.WeightBytes() * n
	}
	return p.WeightBytes()*(n-lin) + lin
}

// Bytes is GatheredBytes: torchao's float8 all-gather as the extension
// point of the gather's format (cost.GatherWire).
func (TorchaoFloat8) Bytes(pl *plan.Plan, p *plan.Pod, n, lin float64) float64 {
	return GatheredBytes(pl, p, n, lin)
}

// Linears is a torchtitan block's float8 linears (TitanLinears), the
// weights its all-gather casts apart (cost.GatherWire).
func (TorchaoFloat8) Linears() float64 { return TitanLinears }

// FP8GatherCopyIn is the HBM bytes (read, written) of the float8
// all-gather's copy-in for lin sharded linear weights, and its kernels'
// launches for the groups' linears (linears): torchao's
// WeightWithDynamicFloat8CastTensor.fsdp_pre_all_gather (fsdp_utils.py at
// 890e0ac8) casts the FP32 shard with the precomputed scale
// (hp_tensor_and_scale_to_float8: _ToFloat8ConstrFunc's tensor * scale,
// then to_fp8_saturated's clamp and .to(float8): three eager kernels,
// FSDP2's hooks being outside the compiled blocks: 4 + 4 + 4 read, 4 + 4
// + 1 written an element), which FSDP2 takes as the all-gather's input
// without its BF16 cast (FSDPParam.all_gather_inputs: a parameter with
// fsdp_pre_all_gather is not cast to param_dtype; pytorch 010ae4a) and
// all_gather_copy_in copies (1 read, 1 written).
func FP8GatherCopyIn(lin, linears float64) (read, written, launches float64) {
	return 13 * lin, 10 * lin, 3 * linears
}

// FP8GatherScales is a step's precompute_float8_dynamic_scale_for_fsdp
// (fsdp_utils.py at 890e0ac8) for lin sharded linear weights in linears
// linears, over the data-parallel group g: torch._foreach_norm(weights,
// ord=inf) over the FP32 shards (4 bytes read an element), the amaxes
// stacked and clamped (one all-reduce of 4 bytes a linear: "it will
// issue a single all-reduce"), then the scales' float64 division and
// casts (four small kernels).
func FP8GatherScales(p *plan.Pod, g plan.Group, lin, linears float64) float64 {
	h := &p.Hardware
	t := cost.Kernel{Class: graph.ClassReduction, FLOPs: lin, Read: 4 * lin}.Time(h)
	t += 5 * cost.Kernel{Class: graph.ClassElementwise}.Time(h) // stack, clamp, to(float64), division, to(float32)
	return t + p.StateCollective(roofline.AllReduce, g, 4*linears)
}

var _ cost.StepKernels = TorchaoFloat8{}

// StepKernels is t with what torchao's float8 adds to a step of shard
// s's plan on its busiest stage: the weights' casts every micro-batch
// (TorchaoWeightCasts) and, with fp8gather=on, the scales computed once
// a step over the stage's shards (FP8GatherScales). t as it is where the
// plan does not run torchao's float8.
func (TorchaoFloat8) StepKernels(s *cost.Shard, stages []cost.Stage, t float64) float64 {
	pl, p := &s.Plan, s.Pod
	if !TorchaoOn(pl) {
		return t
	}
	var c float64
	for _, st := range stages {
		w := TorchaoWeightCasts(pl, &p.Hardware, st.Layers)
		if pl.FP8Gather && !s.M.MoE() {
			_, dpG := pl.Groups(*p, st.Index)
			w += FP8GatherScales(p, dpG, st.Layers/float64(dpG.Size()), TitanLinears*float64(pl.Stages[st.Index]))
		}
		c = max(c, w)
	}
	return t + c
}
