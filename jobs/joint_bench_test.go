package jobs

import (
	"context"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/strategy"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/optimize"
)

// BenchmarkJointStep is the joint search's speed figure (docs/search.md): 512
// evaluations of go-scored on trxl4 at 4 V100s, its single-replica search
// ("plain": the whole cluster, no strategy) against one refinement of the
// joint space ("dp2": two replicas of a searched 2-GPU placement, every
// decision scored with the replicas and their all-reduce through
// strategy.Fixed). Bound: dp2 at most 1.5x plain per op.
func BenchmarkJointStep(b *testing.B) {
	pp, err := NewSetup(inputs.GraphSpec{Workload: "trxl4"}, inputs.ClusterSpec{GPUs: 4}, optimize.AllTasks, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer pp.Close()
	setBase(pp.Problem)
	run := func(b *testing.B, p *optimize.Problem) {
		b.ReportAllocs()
		for b.Loop() {
			opt, err := methods.New("go-scored", methods.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := opt.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 512}, Seed: 1}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("plain", func(b *testing.B) { run(b, pp.Problem) })
	half, err := graph.AtBatch(pp.Graph, (pp.Graph.Batch()+1)/2)
	if err != nil {
		b.Fatal(err)
	}
	q, closer, err := pp.resize(half, 2)
	if err != nil {
		b.Fatal(err)
	}
	defer closer()
	setBase(q)
	fixed, err := strategy.NewFixed(pp.Evaluator.(*strategy.Evaluator), decision.Strategy{Replicas: 2})
	if err != nil {
		b.Fatal(err)
	}
	q.Evaluator = fixed
	b.Run("dp2", func(b *testing.B) { run(b, q) })
}
