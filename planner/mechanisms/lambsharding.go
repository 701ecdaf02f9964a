package mechanisms

import (
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// LAMB as a stack runs it, the facts its two plug-ins and Adam read:
// whether the stack runs it
// (lambSetting: Adam prices the step where it does not), whether it
// runs sharded over the data-parallel replicas (distributedLAMB:
// DistLAMB prices the exchange, LAMB its step's share), and over how
// many GPUs (DistLAMBShards).

// lambSetting is the condition that the stack runs LAMB
// (Settings.LAMB).
var lambSetting = cost.Setting("lamb", func(st *plan.Settings) bool { return st.LAMB })

// distributedLAMB is whether s's stack runs LAMB sharded over its
// data-parallel replicas (distopt=on: --distributed_lamb): a fact of the
// plan that DistLAMB prices the exchange by and LAMB its step's share
// by, each on its own (no plug-in asks another).
func distributedLAMB(s *cost.Shard) bool {
	return s.Plan.Run.LAMB && s.Plan.DistOpt && s.Plan.DP*s.Plan.CP > 1
}

// DistLAMBShards is the GPUs apex's DistributedFusedLAMB shards its FP32
// master weights, moments and update over: its dwu_group_size, which
// NVIDIA's MLPerf BERT configs leave at 0 (run_pretraining.py
// --dwu-group-size: "If arg is 0, defaults to one node"), and then
// `self._group_size = torch.cuda.device_count() if dwu_group_size <= 0`
// (apex contrib/optimizers/distributed_fused_lamb.py, 7972dd2): the
// node's GPUs, at most the data-parallel replicas. Across nodes
// (full_ar) every rank all-reduces the whole gradient, then updates its
// node-local 1/group_size shard (_mega_shard_size = total /
// group_size: _fp32_p, _fp32_m, _fp32_v, _fp32_u) and all-gathers the new
// parameters over the node (_ag_pg): the shard does not shrink with the
// nodes. On stage 0's data-parallel group (BERT runs no model
// parallelism).
func DistLAMBShards(s *cost.Shard) float64 {
	_, dpG := s.Plan.Groups(*s.Pod, 0)
	return float64(max(1, min(dpG.PerNode, s.Plan.DP*s.Plan.CP)))
}
