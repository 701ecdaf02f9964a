package planner

import (
	"strings"

	"github.com/placer/placer/planner/plan"
)

// fp8GatherSaving is the bytes the distributed optimizer's parameter
// all-gather of stage st carries less on one of its GPUs where its
// blocks' weights are per-tensor FP8 primary weights (fp8PrimaryGather),
// of its parameters but the experts' (over the data-parallel group) and
// of the experts' (over the expert-data-parallel group; 0 without
// experts), at wb bytes a parameter otherwise: the blocks' weights,
// experts' too, one byte each. Megatron-Core's DistributedDataParallel
// puts every Float8Tensor parameter in a torch.uint8 buffer of its own,
// the dense and the expert-parallel parameters alike (NVIDIA/Megatron-LM
// core_v0.16.1 megatron/core/distributed/distributed_data_parallel.py
// _allocate_buffers_for_parameters: "if is_float8tensor(param): ...
// param_dtype = torch.uint8"; from core_v0.9.0's "Add native-fp8"), and
// the distributed optimizer all-gathers each buffer as it is; NeMo's
// own distributed Adam before it (the MLPerf v4.x NeMo recipes'
// optimizer) alike (NVIDIA/NeMo v2.0.0rc0
// nemo/core/optim/distributed_adam.py MegatronDistributedFusedAdam
// .init_params_bucket: the Float8Tensor parameters in buckets of
// param_sync_dtype=torch.uint8). The block-scaled recipes' primary weights are gathered in BF16
// (reuse_grad_buf_for_mxfp8_param_ag: the BF16 all-gather lands in the
// gradient buffer, memory/state.go's bridgeBlockParams): no saving;
// under LoRA the frozen weights are not gathered: none either.
func fp8GatherSaving(pl *plan.Plan, st *stageCost, wb float64) (dense, experts float64) {
	if !fp8PrimaryGather(pl) || pl.LoRA() {
		return 0, 0
	}
	return (st.Layers - st.Experts) * (wb - 1), st.Experts * (wb - 1)
}

// fp8PrimaryGather is whether plan pl's blocks' weights are per-tensor
// FP8 primary weights the distributed optimizer gathers in FP8
// (paramGatherBytes): fp8-params=on under fp8=delayed or current, or a
// Megatron-Bridge stack's fp8=current (bf16_with_fp8_current_scaling_mixed
// sets fp8_param_gather), with the distributed optimizer and no FSDP.
func fp8PrimaryGather(pl *plan.Plan) bool {
	perTensor := pl.FP8 == plan.FP8Delayed || pl.FP8 == plan.FP8Current
	bridge := pl.FP8 == plan.FP8Current && strings.HasPrefix(pl.Software.Stack, "megatron-bridge-")
	return perTensor && (pl.FP8Params || bridge) && pl.DistOpt && !pl.FSDP
}
