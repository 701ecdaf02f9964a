package mechanisms

import (
	"math"
	"testing"

	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// TestDistLAMBByHand: DistributedFusedLAMB's exchange of 1e9 trained
// parameters (FP16: 2e9 bytes) on nodes of 4 GPUs, NVSwitch at 100 GB/s
// bus bandwidth, one NIC of 10 GB/s a node (2.5 GB/s a GPU), no
// latency, the overlap's slowdown 0:
//   - 2 nodes, dp=8, grad-overlap=off: the all-reduce of every rank
//     (full_ar) as the pod runs it: in the node 3/4 x 2e9 / 100e9 =
//     0.015, across 1/2 x (2e9/4) / 2.5e9 = 0.1, a ring (a tree's
//     2 x 0.5e9 / 2.5e9 = 0.4 is longer than 2 x 0.1): 2 x (0.015 +
//     0.1) = 0.23, all of it after the backward; then the node's
//     all-gather of the parameters, 3/4 x 2e9 / 100e9 = 0.015: 0.245;
//   - the same with the overlap, beside a backward of 0.1: 0.23 - 0.1
//     = 0.13 exposed, then the gather: 0.145;
//   - 1 node, dp=4, grad-overlap=off: the node's reduce-scatter 0.015,
//     then its all-gather 0.015: 0.03;
//   - without the distributed optimizer, or with Adam: not its to
//     price.
func TestDistLAMBByHand(t *testing.T) {
	pod := func(nodes int) *plan.Pod {
		return &plan.Pod{Name: "hand", Nodes: nodes, PerNode: 4, NICs: 1, NICBandwidth: 10e9,
			Kernels: kernels.Node{IntraBus: 100e9}}
	}
	shard := func(dp, nodes int, overlap bool) *cost.Shard {
		pl := plan.Plan{Strategy: plan.Strategy{DistOpt: true, NoGradOverlap: !overlap},
			TP: 1, PP: 1, DP: dp, CP: 1, VP: 1, TPs: []int{1}, Run: plan.Settings{LAMB: true}}
		return &cost.Shard{Plan: pl, Pod: pod(nodes)}
	}
	stages := []cost.Stage{{Index: 0, Bwd: cost.Phase{Busy: 0.1}, Params: 1e9, Trained: 1e9}}
	for _, c := range []struct {
		name    string
		s       *cost.Shard
		want    float64
		pricing bool
	}{
		{"2 nodes, after the backward", shard(8, 2, false), 0.245, true},
		{"2 nodes, overlapped", shard(8, 2, true), 0.145, true},
		{"1 node, after the backward", shard(4, 1, false), 0.03, true},
	} {
		if got := cost.Applies(DistLAMB{}, c.s); got != c.pricing {
			t.Errorf("%s: Prices %t, want %t", c.name, got, c.pricing)
		}
		if got := (DistLAMB{}).DPExposed(c.s, stages); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %g s exposed, want %g", c.name, got, c.want)
		}
	}
	noDist := shard(8, 2, false)
	noDist.Plan.DistOpt = false
	adam := shard(8, 2, false)
	adam.Plan.Run.LAMB = false
	if cost.Applies(DistLAMB{}, noDist) || cost.Applies(DistLAMB{}, adam) {
		t.Error("DistLAMB prices a step without DistributedFusedLAMB")
	}
}
