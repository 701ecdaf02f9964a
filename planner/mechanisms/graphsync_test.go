package mechanisms

import (
	"math"
	"testing"

	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// TestGraphStepSyncByHand: the host's wait before each whole-step graph
// replay on the measured H100 host (kernels' h100Host: Sync 185.9 us,
// Replay 30.82 us), worked by hand:
//   - graph-sync=1 (NVIDIA's eos and dgxh100_n64 BERT configs:
//     --max_iterations_per_graph 1): 185.9 + 30.82 = 216.72 us a step;
//   - graph-sync=4 (run_pretraining.py's default of 4 steps a graph):
//     216.72 / 4 = 54.18 us a step;
//   - no graph-sync (segmented graphs, or none): not its to price;
//   - a shard priced on its GPU alone (NoHost): not priced.
func TestGraphStepSyncByHand(t *testing.T) {
	h := kernels.Host{Issue: 14.04e-6, IssueBwd: 17.86e-6, Sync: 185.9e-6, Replay: 30.82e-6, Launch: 10.61e-6}
	shard := func(n int) *cost.Shard {
		return &cost.Shard{Plan: plan.Plan{Run: plan.Settings{Graphs: plan.GraphsFull, GraphSync: n}}}
	}
	for _, c := range []struct {
		name    string
		n       int
		want    float64
		pricing bool
	}{
		{"one step a graph", 1, 216.72e-6, true},
		{"four steps a graph", 4, 54.18e-6, true},
		{"no synchronized replay", 0, 0, false},
	} {
		s := shard(c.n)
		if got := cost.Applies(GraphStepSync{}, s); got != c.pricing {
			t.Errorf("%s: Prices %t, want %t", c.name, got, c.pricing)
		}
		if got := (GraphStepSync{}).StepWait(s, &h); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: %g s a step, want %g", c.name, got, c.want)
		}
	}
	gpuOnly := shard(1)
	gpuOnly.NoHost = true
	if cost.Applies(GraphStepSync{}, gpuOnly) {
		t.Error("a shard priced on its GPU alone: priced")
	}
}
