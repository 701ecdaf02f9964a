package mechanisms

import "github.com/placer/placer/planner/cost"

// LAMB is the optimizer of You et al., "Large Batch Optimization for Deep
// Learning: Training BERT in 76 minutes" (arXiv 1904.00962, Algorithm 2):
// Adam's moments, then each layer's update scaled by the trust ratio
// ||w|| / ||update|| before it is applied. As NVIDIA's MLPerf BERT runs it
// (apex.contrib.optimizers DistributedFusedLAMB, its --distributed_lamb;
// apex/contrib/csrc/optimizers/multi_tensor_distopt_lamb.cpp) that is two
// passes over the GPU's share of the parameters and the norms between
// them, where Adam is one pass (placer's Adam: read the FP32 gradient,
// weight and two moments, 16 bytes; write the weight, the moments and the
// half-precision weight, 14 bytes):
//   - the global gradient norm (LAMB's gradient clipping): read the
//     gradient, 4 bytes;
//   - multi_tensor_lamb_compute_update_term: read gradient, weight and
//     moments (16), write the moments and the update term (12; the update,
//     not the weight);
//   - the per-tensor norms of the weights and of the update terms: read
//     both, 8;
//   - multi_tensor_lamb_update_weights: read weight and update (8), write
//     the FP32 weight and its half-precision copy (6).
//
// In all 36 bytes read and 18 written a parameter: 20 read and 4 written
// more than Adam.
type LAMB struct{}

// LAMBExtraRead and LAMBExtraWrite are LAMB's bytes a parameter beyond
// placer's Adam step (above).
const (
	LAMBExtraRead  = 4 + 16 + 8 + 8 - 16 // 20
	LAMBExtraWrite = 12 + 6 - 14         // 4
)

// Name is the mechanism's registered name.
func (LAMB) Name() string { return "lamb" }

// When is LAMB's declaration: a stack that runs it.
func (LAMB) When() cost.When { return lambWhen }

var lambWhen = cost.When{lambSetting}

var _ cost.Optimizer = LAMB{}

// OptimizerStep is LAMB's step on the most loaded of stages: Adam's
// (adamStep) with LAMB's extra bytes a parameter of the device's share.
// Under apex's DistributedFusedLAMB (distributedLAMB: DistLAMB prices
// the step) the share is the parameters over DistLAMBShards GPUs, not
// over every replica.
func (LAMB) OptimizerStep(s *cost.Shard, stages []cost.Stage) float64 {
	if distributedLAMB(s) {
		return adamStepOver(s, stages, LAMBExtraRead, LAMBExtraWrite, DistLAMBShards(s))
	}
	return adamStep(s, stages, LAMBExtraRead, LAMBExtraWrite)
}
