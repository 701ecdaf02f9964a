package mechanisms

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// TestAmaxSyncByHand: the FP8 amaxes' all-reduce waited for at each model
// chunk's forward and backward end, on nodes of 8 GPUs (NVSwitch at 100
// GB/s, 5 us a step; 8 NICs of 1e12 B/s, 10 us a message). A stage of
// 24 layers in vp=12 chunks: 2 layers a chunk, 4 FP8 GEMMs a layer, so
// 2 x 4 x 3 x 4 = 96 bytes of forward amaxes a chunk and 2 x 4 x 2 x 4 =
// 64 backward.
//   - amax-sync=tp-dp, tp=4, dp=16: 64 consecutive ranks, 8 a node on 8
//     nodes. All-reduce of S bytes: in the node twice a ring, 2 x (7/8 x
//     S / 100e9 + 7 x 5e-6); across, the faster of a tree, 2 x S/8 /
//     1e12 + 2 x ceil(log2 8) x 10e-6, and a ring, 2 x (7/8 x S/8 / 1e12
//   - 7 x 10e-6): the tree. Forward, S = 96: 2 x (0.84e-9 + 35e-6) +
//     (0.024e-9 + 60e-6) = 130.001704 us, x 12 chunks = 1.560020448 ms;
//     backward, S = 64: 2 x (0.56e-9 + 35e-6) + (0.016e-9 + 60e-6) =
//     130.001136 us, x 12 = 1.560013632 ms.
//   - amax-sync=tp: the 4 tensor ranks of a node, 2 x (3/4 x S / 100e9
//   - 3 x 5e-6): forward 2 x (0.72e-9 + 15e-6) = 30.00144 us, x 12 =
//     360.01728 us; backward 2 x (0.48e-9 + 15e-6) x 12 = 360.01152 us.
//   - tp=1 with amax-sync=tp: nothing; amax-sync=off: not priced (the
//     framework does not ask it).
func TestAmaxSyncByHand(t *testing.T) {
	pod := &plan.Pod{Name: "hand", Nodes: 128, PerNode: 8, NICs: 8, NICBandwidth: 1e12, NICLatency: 10e-6,
		Hardware: roofline.Hardware{NVLinkLatency: 5e-6}, Kernels: kernels.Node{IntraBus: 100e9}}
	shard := func(sync string, tp int) *cost.Shard {
		pl := plan.Plan{Strategy: plan.Strategy{AmaxSync: sync, FP8: plan.FP8Delayed},
			TP: tp, PP: 4, DP: 16, CP: 1, VP: 12, Stages: []int{24, 24, 24, 24}}
		return &cost.Shard{Plan: pl, Pod: pod}
	}
	st := &cost.Stage{Index: 1}
	for _, c := range []struct {
		name     string
		s        *cost.Shard
		fwd, bwd float64
	}{
		{"tensor x data", shard(plan.AmaxSyncTPDP, 4), 1.560020448e-3, 1.560013632e-3},
		{"tensor", shard(plan.AmaxSyncTP, 4), 360.01728e-6, 360.01152e-6},
		{"one tensor rank", shard(plan.AmaxSyncTP, 1), 0, 0},
	} {
		fwd, bwd := (AmaxSync{}).StageKernels(c.s, st)
		if math.Abs(fwd.Busy-c.fwd) > 1e-12 || math.Abs(bwd.Busy-c.bwd) > 1e-12 {
			t.Errorf("%s: forward %.9g s, backward %.9g s a micro-batch; want %.9g, %.9g", c.name, fwd.Busy, bwd.Busy, c.fwd, c.bwd)
		}
	}
	if cost.Applies(AmaxSync{}, shard("", 4)) {
		t.Error("amax-sync=off: prices the step; want not (the framework asks it only where it does)")
	}
	if g := AmaxGroup(&shard(plan.AmaxSyncTPDP, 4).Plan, 8); g != (plan.Group{PerNode: 8, Nodes: 8}) {
		t.Errorf("tensor x data group %+v, want 8 a node on 8 nodes", g)
	}
	bf16 := shard(plan.AmaxSyncTPDP, 4)
	bf16.Plan.FP8 = ""
	if cost.Applies(AmaxSync{}, bf16) {
		t.Error("priced without fp8=delayed")
	}
}
