package mechanisms

import (
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// GraphStepSync is the host's wait before each replay of a whole-step
// CUDA graph as NVIDIA's MLPerf BERT runs it (training_results_v3.0 and
// v3.1 NVIDIA/benchmarks/bert/implementations/pytorch/run_pretraining.py,
// --use_cuda_graph --cuda_graph_mode full_iteration): every
// --max_iterations_per_graph steps the training loop copies the next
// batch into the graph's placeholders, calls torch.cuda.synchronize()
// and then graphs[...]['graph'].replay(). The synchronization returns
// only once the previous replay has drained, so the GPU idles from the
// end of one replay until the host, woken, has replayed the next: one
// synchronization (Host.Sync: the round trip and the wake-up behind a
// queued kernel) and one graph replay's host time (Host.Replay) each
// graph (plan.Settings.GraphSync steps; graph-sync=N). The loop's other
// host work (the next batch's next() and preprocess_batch) runs while
// the graph replays and is not charged here. The segmented mode
// (autograd replays the graphed forward and backward, the optimizer's
// step issued eagerly) has no such call per step: not priced.
type GraphStepSync struct{}

var _ cost.StepHost = GraphStepSync{}

// Name is the mechanism's registered name.
func (GraphStepSync) Name() string { return "graph-step-sync" }

// When is the wait's declaration: a plan that waits on its device
// before each replay of a whole-step graph (graph-sync=N with
// cuda-graphs=full), on a host that is priced (Shard.NoHost off).
func (GraphStepSync) When() cost.When { return graphSyncWhen }

var graphSyncWhen = cost.When{
	cost.Key("graph-sync", "graph-sync>0", func(pl *plan.Plan) bool { return pl.Run.GraphSync > 0 }),
	cost.WithHost,
}

// StepWait is the GPU's idle time a step on host h: one synchronization
// and one replay over the GraphSync steps of one graph.
func (GraphStepSync) StepWait(s *cost.Shard, h *kernels.Host) float64 {
	n := s.Plan.Run.GraphSync
	if n <= 0 {
		return 0
	}
	return (h.Sync + h.Replay) / float64(n)
}
