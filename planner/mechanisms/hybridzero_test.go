package mechanisms

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// TestHybridZeroByHand: InternEvo's hybrid ZeRO-1 exchange of 1e9
// trained parameters, 1e8 of them the embedding table (vocabulary
// 100,000 x hidden 1,000, T = 1), on nodes of 4 GPUs, NVSwitch at
// 100 GB/s bus bandwidth, one NIC of 10 GB/s a node (2.5 GB/s a GPU),
// no latency (TestZero1AllReduceByHand's pod), dp = 8 on 2 nodes:
//   - the BF16 gradients but the embedding's, 1.8e9 bytes, all-reduced
//     as the pod runs it, a ring: in the node 3/4 x 1.8e9 / 100e9 =
//     0.0135, across 1/2 x (1.8e9/4) / 2.5e9 = 0.09, twice: 0.207 (a
//     tree's 2 x 4.5e8 / 2.5e9 = 0.36 is longer); beside a backward of
//     10 s, hidden; beside one of 0.1 s, 0.107 exposed;
//   - the embedding's bucket, 2e8 bytes, after the backward: 2 x
//     (3/4 x 2e8 / 100e9 + 1/2 x 5e7 / 2.5e9) = 0.023;
//   - hybrid-zero=8 (every rank): 8 broadcasts of 2e9/8 = 2.5e8 bytes
//     over both nodes at the group's 4 NICs' shares a node, 10 GB/s:
//     8 x 0.025 = 0.2; in all 0.223, or 0.330 with the short backward;
//   - hybrid-zero=4 (a node): 4 broadcasts of 5e8 bytes over NVSwitch,
//     4 x 0.005 = 0.02: 0.043;
//   - hybrid-zero=16, more than the 8 replicas: the 8 of them, 0.223;
//   - with the key off, without the distributed optimizer, or at dp=1:
//     not its to price.
func TestHybridZeroByHand(t *testing.T) {
	pod := func(nodes int) *plan.Pod {
		return &plan.Pod{Name: "hand", Nodes: nodes, PerNode: 4, NICs: 1, NICBandwidth: 10e9,
			Kernels: kernels.Node{IntraBus: 100e9}}
	}
	shard := func(dp, nodes int, key string) *cost.Shard {
		s, err := plan.ParseStrategy("distopt=on" + key)
		if err != nil {
			t.Fatal(err)
		}
		pl := plan.Plan{Strategy: s, TP: 1, PP: 1, DP: dp, CP: 1, VP: 1, TPs: []int{1}}
		return &cost.Shard{M: transformer.Spec{Vocab: 100000, Hidden: 1000}, Plan: pl, Pod: pod(nodes)}
	}
	stage := func(bwd float64) []cost.Stage {
		return []cost.Stage{{Index: 0, Bwd: cost.Phase{Busy: bwd}, Params: 1e9, Trained: 1e9}}
	}
	for _, c := range []struct {
		name    string
		s       *cost.Shard
		bwd     float64
		want    float64
		pricing bool
	}{
		{"every rank", shard(8, 2, ",hybrid-zero=8"), 10, 0.223, true},
		{"every rank, short backward", shard(8, 2, ",hybrid-zero=8"), 0.1, 0.330, true},
		{"a node", shard(8, 2, ",hybrid-zero=4"), 10, 0.043, true},
		{"more than the replicas", shard(8, 2, ",hybrid-zero=16"), 10, 0.223, true},
		{"key off", shard(8, 2, ""), 10, 0, false},
		{"one replica", shard(1, 1, ",hybrid-zero=8"), 10, 0, false},
	} {
		if got := cost.Applies(HybridZero{}, c.s); got != c.pricing {
			t.Errorf("%s: applies %t, want %t", c.name, got, c.pricing)
		}
		if !c.pricing {
			continue
		}
		if got := (HybridZero{}).DPExposed(c.s, stage(c.bwd)); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %.12g s exposed, want %g", c.name, got, c.want)
		}
	}
	noDist := shard(8, 2, ",hybrid-zero=8")
	noDist.Plan.DistOpt = false
	if cost.Applies(HybridZero{}, noDist) {
		t.Error("HybridZero prices a step without the distributed optimizer")
	}
	for _, bad := range []string{"hybrid-zero=0", "hybrid-zero=-1", "hybrid-zero=on"} {
		if _, err := plan.ParseStrategy(bad); err == nil {
			t.Errorf("%s: parsed, want refused", bad)
		}
	}
	if s, err := plan.ParseStrategy("dp=8,distopt=on,hybrid-zero=8"); err != nil || !strings.Contains(s.String(), "hybrid-zero=8") {
		t.Errorf("hybrid-zero=8 written back as %q (%v)", s.String(), err)
	}
}
