package mechanisms

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// Transformer Engine's amax reduction under delayed scaling, as its
// release_v0.8 runs it (the TE NVIDIA's MLPerf v3.0 GPT-3 Dockerfile
// installs, TE_REVISION=release_v0.8, head 8e5f00f of 2023-05-10) with
// its environment's defaults:
//
//   - fp8_autocast's exit (fp8.py) calls the forward's
//     global_amax_reduction: the amaxes of every FP8 module run in the
//     autocast region (add_amax_to_global_buffer: each module's
//     amax_history[0], num_gemms x 3 FP32 values forward, x 2 backward:
//     module.py set_meta_tensor) concatenated and all-reduced (MAX) with
//     torch.distributed.all_reduce(async_op=fp8_meta["async_amax_reduction"]),
//     which is NVTE_ASYNC_AMAX_REDUCTION, "0" by default (module.py): not
//     asynchronous, so the compute stream waits for the all-reduce.
//   - _prepare_backward (module.py): after the backward of the region's
//     first FP8 module, the last backward of the region to run, the
//     backward's amaxes the same way.
//   - The group (global_amax_reduction): fp8_group, every time while
//     NVTE_DP_AMAX_REDUCE_INTERVAL is 1, its default; the tensor group
//     between (interval > 1) and always with interval 0 (TE 09ba842,
//     v3.1's: "If NVTE_DP_AMAX_REDUCE_INTERVAL is set to 0, AMAX is
//     reduced only in TP domain"). Megatron's fp8_group is the amax
//     reduction group, the tensor x data ranks of one pipeline stage
//     (Megatron-LM 1203001 parallel_state.py, "amax reduction across the
//     product of the data-parallel and tensor-parallel groups":
//     tensor_model_parallel_size x data_parallel_size consecutive ranks).
//   - NeMo's ParallelTransformer enters fp8_autocast once a model chunk's
//     forward, so each chunk, each micro-batch, ends its forward and its
//     backward in one such all-reduce.
//
// NVIDIA's v3.1 and v4.0 GPT-3 configs set NVTE_DP_AMAX_REDUCE_INTERVAL=0
// and NVTE_ASYNC_AMAX_REDUCTION=1 ("AMAX AR overlap and disable DP",
// config_common.sh): a tensor group's all-reduce beside the compute, not
// priced; v3.0's set neither (amax-sync=tp-dp).

// AmaxSync is the FP8 amaxes' all-reduce the compute stream waits for at
// each model chunk's forward and backward end (amax-sync=tp-dp or tp).
type AmaxSync struct{}

var _ cost.StageKernels = AmaxSync{}

// Name is the mechanism's registered name.
func (AmaxSync) Name() string { return "amax-sync" }

// When is the amaxes' all-reduce's declaration: a plan that waits for
// it (amax-sync set) under delayed scaling, its communication costed.
func (AmaxSync) When() cost.When { return amaxWhen }

var amaxWhen = cost.When{
	cost.Key("amax-sync", "amax-sync set", func(pl *plan.Plan) bool { return pl.AmaxSync != "" }),
	cost.Key("fp8", "fp8=delayed", func(pl *plan.Plan) bool { return pl.FP8 == plan.FP8Delayed }),
	cost.WithComm,
}

// amaxGEMMs is the FP8 GEMMs of a transformer layer whose amaxes TE
// reduces: the QKV (LayerNormLinear), the projection (Linear) and the
// MLP's two (LayerNormMLP).
const amaxGEMMs = 4

// AmaxGroup is the GPUs the amaxes of plan pl are all-reduced over, as
// they sit in the pod's nodes of perNode GPUs: the tensor group, or the
// tensor x context x data ranks of one pipeline stage, consecutive
// ranks (tensor innermost).
func AmaxGroup(pl *plan.Plan, perNode int) plan.Group {
	n := max(1, pl.TP)
	if pl.AmaxSync == plan.AmaxSyncTPDP {
		n *= max(1, pl.CP) * max(1, pl.DP)
	}
	if perNode < 1 || n <= perNode {
		return plan.Group{PerNode: n, Nodes: 1}
	}
	return plan.Group{PerNode: perNode, Nodes: (n + perNode - 1) / perNode}
}

// StageKernels is, per micro-batch, the all-reduces of stage st's V
// model chunks: one at each chunk's forward end of its layers' forward
// amaxes (3 FP32 values a GEMM) and one at its backward end (2 a GEMM),
// each at the pod's collective time and waited for on the compute
// stream.
func (a AmaxSync) StageKernels(s *cost.Shard, st *cost.Stage) (fwd, bwd cost.Phase) {
	pl, p := &s.Plan, s.Pod
	g := AmaxGroup(pl, p.PerNode)
	if g.Size() <= 1 {
		return fwd, bwd
	}
	chunks := float64(max(1, pl.VP))
	layers := float64(pl.Stages[st.Index]) / chunks // a chunk's
	one := func(values float64) cost.Phase {
		t, _ := p.Collective(roofline.AllReduce, g, layers*amaxGEMMs*values*4)
		return cost.Phase{Busy: chunks * t, Launches: chunks}
	}
	return one(3), one(2)
}
