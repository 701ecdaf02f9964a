package mechanisms

import (
	"math"
	"testing"

	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// TestZero1AllReduceByHand: nanotron's ZeRO-1 exchange of 1e9 trained
// parameters on nodes of 4 GPUs, NVSwitch at 100 GB/s bus bandwidth,
// one NIC of 10 GB/s a node (2.5 GB/s a GPU), no latency (the pod of
// TestDistLAMBByHand):
//   - 2 nodes, dp=8: the FP32 gradients (4e9 bytes) all-reduced as
//     the pod runs it, a ring: in the node 3/4 x 4e9 / 100e9 = 0.03,
//     across 1/2 x (4e9/4) / 2.5e9 = 0.2, twice: 0.46 (a tree's
//     2 x 1e9 / 2.5e9 = 0.8 is longer); then the BF16 parameters
//     (2e9 bytes) all-gathered: 3/4 x 2e9 / 100e9 + 1/2 x (2e9/4) /
//     2.5e9 = 0.015 + 0.1 = 0.115; both exposed, whatever the
//     backward: 0.575 (Megatron's reduce-scatter would be half the
//     all-reduce: 0.23 + 0.115);
//   - the same with grads=bf16: 0.23 + 0.115 = 0.345;
//   - 1 node, dp=4: 2 x 3/4 x 4e9 / 100e9 = 0.06, then 3/4 x 2e9 /
//     100e9 = 0.015: 0.075;
//   - with the key off, without the distributed optimizer, or at dp=1:
//     not its to price.
func TestZero1AllReduceByHand(t *testing.T) {
	pod := func(nodes int) *plan.Pod {
		return &plan.Pod{Name: "hand", Nodes: nodes, PerNode: 4, NICs: 1, NICBandwidth: 10e9,
			Kernels: kernels.Node{IntraBus: 100e9}}
	}
	shard := func(dp, nodes int, key string) *cost.Shard {
		s, err := plan.ParseStrategy("distopt=on," + key)
		if err != nil {
			t.Fatal(err)
		}
		pl := plan.Plan{Strategy: s, TP: 1, PP: 1, DP: dp, CP: 1, VP: 1, TPs: []int{1}}
		return &cost.Shard{Plan: pl, Pod: pod(nodes)}
	}
	stages := []cost.Stage{{Index: 0, Bwd: cost.Phase{Busy: 10}, Params: 1e9, Trained: 1e9}}
	for _, c := range []struct {
		name    string
		s       *cost.Shard
		want    float64
		pricing bool
	}{
		{"2 nodes", shard(8, 2, "distopt-allreduce=on"), 0.575, true},
		{"2 nodes, BF16 gradients", shard(8, 2, "distopt-allreduce=on,grads=bf16"), 0.345, true},
		{"1 node", shard(4, 1, "distopt-allreduce=on"), 0.075, true},
		{"key off", shard(8, 2, "distopt-allreduce=off"), 0, false},
		{"one replica", shard(1, 1, "distopt-allreduce=on"), 0, false},
	} {
		if got := cost.Applies(Zero1AllReduce{}, c.s); got != c.pricing {
			t.Errorf("%s: applies %t, want %t", c.name, got, c.pricing)
		}
		if !c.pricing {
			continue
		}
		if got := (Zero1AllReduce{}).DPExposed(c.s, stages); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %g s exposed, want %g", c.name, got, c.want)
		}
	}
	noDist := shard(8, 2, "distopt-allreduce=on")
	noDist.Plan.DistOpt = false
	if cost.Applies(Zero1AllReduce{}, noDist) {
		t.Error("Zero1AllReduce prices a step without the distributed optimizer")
	}
}
