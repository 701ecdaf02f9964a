package mechanisms

import (
	"math"
	"testing"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"

	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// TestLAMBBytes: apex's DistributedFusedLAMB over a parameter, by hand:
// the gradient norm reads 4; compute_update_term reads gradient, weight
// and two moments (16) and writes moments and update (12); the weights'
// and updates' norms read 8; update_weights reads weight and update (8)
// and writes the FP32 weight and its 16-bit copy (6). 36 read, 18
// written, where placer's Adam reads 16 and writes 14: 20 and 4 more.
func TestLAMBBytes(t *testing.T) {
	if LAMBExtraRead != 36-16 || LAMBExtraWrite != 18-14 {
		t.Errorf("LAMB's extra bytes %d read, %d written; want 20, 4", LAMBExtraRead, LAMBExtraWrite)
	}
	on := &cost.Shard{Plan: plan.Plan{Run: plan.Settings{LAMB: true}}}
	if !cost.Applies(LAMB{}, on) || cost.Applies(LAMB{}, &cost.Shard{}) {
		t.Error("LAMB priced where the stack does not run it, or not where it does")
	}
	ns, err := plan.LookupStack(plan.StackNVIDIABERT)
	if err != nil || !ns.Settings.LAMB {
		t.Errorf("stack %s: %v, LAMB %t", plan.StackNVIDIABERT, err, ns.Settings.LAMB)
	}
}

// TestDistLAMBShardByHand: DistributedFusedLAMB's optimizer step updates
// the node's share of the parameters, however many nodes (apex
// _group_size = torch.cuda.device_count()). 8e8 trained parameters, FP32
// gradients (4 bytes a parameter zeroed), HBM at 1e12 B/s for
// elementwise kernels, no launch time; LAMB reads 36 and writes 18 bytes
// a parameter of the share:
//   - 2 nodes of 4 GPUs, dp=8, distopt=on: shard over 4, 2e8 parameters:
//     (36 + 18) x 2e8 + 4 x 8e8 = 1.08e10 + 3.2e9 = 1.4e10 B: 0.014 s
//     (placer before: over 8, 1e8: 5.4e9 + 3.2e9 = 8.6e9 B, 0.0086 s);
//   - 1 node, dp=2 of its 4 GPUs: shard over 2 (the replicas), 4e8:
//     2.16e10 + 3.2e9 = 2.48e10 B: 0.0248 s;
//   - without the distributed optimizer: every parameter, 5.4 x 8e8 +
//     3.2e9 = 4.64e10 B: 0.0464 s.
func TestDistLAMBShardByHand(t *testing.T) {
	hw := roofline.Hardware{MemBandwidth: 1e12}
	hw.MemEff[graph.ClassElementwise] = 1
	shard := func(dp, nodes int, dist bool) *cost.Shard {
		pl := plan.Plan{Strategy: plan.Strategy{DistOpt: dist}, TP: 1, PP: 1, DP: dp, CP: 1, VP: 1,
			TPs: []int{1}, Run: plan.Settings{LAMB: true}}
		pod := &plan.Pod{Name: "hand", Nodes: nodes, PerNode: 4, NICs: 1, NICBandwidth: 10e9, Hardware: hw}
		return &cost.Shard{Plan: pl, Pod: pod}
	}
	stages := []cost.Stage{{Index: 0, Params: 8e8, Trained: 8e8}}
	for _, c := range []struct {
		name   string
		s      *cost.Shard
		shards float64
		want   float64
	}{
		{"2 nodes, dp=8", shard(8, 2, true), 4, 0.014},
		{"1 node, dp=2", shard(2, 1, true), 2, 0.0248},
		{"no distributed optimizer", shard(8, 2, false), 0, 0.0464},
	} {
		if c.shards > 0 {
			if got := DistLAMBShards(c.s); got != c.shards {
				t.Errorf("%s: sharded over %g GPUs, want %g", c.name, got, c.shards)
			}
		}
		if got := (LAMB{}).OptimizerStep(c.s, stages); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: step %g s, want %g", c.name, got, c.want)
		}
	}
}
