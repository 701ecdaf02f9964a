package classical

import (
	"context"
	"errors"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/optimize"
)

// ErrNoBatch is returned by the methods that split the batch (ddp) when
// the graph does not say where its batch is (graph.Graph.Batch is 0:
// msr-fiddle, CostGraphDef and ONNX imports): not a failure, the method
// does not apply.
var ErrNoBatch = errors.New("classical: the graph has no batch information, so its batch cannot be split")

// DDP is data parallelism as PyTorch's DistributedDataParallel runs it
// (Li et al., VLDB'20): every GPU holds the whole model and runs the step
// on its share of the global batch; the gradients are all-reduced in
// 25 MiB buckets overlapped with the backward pass. Its decision is one
// replica on one GPU (every op on device 0, TensorFlow's order and fusion:
// the problem's base) with as many replicas as the problem has GPUs
// (decision.Strategy); the problem's evaluator costs the replicas and the
// all-reduce (evaluate/strategy). A problem that keeps its placement
// (tasks without placement) keeps it: the decision is then its base, one
// replica.
type DDP struct{}

var _ optimize.Optimizer = DDP{}

// Name returns "ddp".
func (DDP) Name() string { return "ddp" }

// Optimize evaluates the DDP decision once.
func (o DDP) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	return replicas(ctx, o.Name(), p, s, decision.NoShard)
}

// replicas evaluates one replica per GPU, every op on its GPU with the
// problem's base order and fusion, the replicas sharding shard (none with
// one GPU). A problem that keeps its placement keeps it: one replica.
func replicas(ctx context.Context, name string, p *optimize.Problem, s *optimize.Settings, shard decision.Shard) (*optimize.Result, error) {
	if p.Graph.Batch() == 0 {
		return nil, ErrNoBatch
	}
	return heuristic(ctx, name, p, s, func() (decision.Decision, error) {
		d := p.Start()
		if !p.EffectiveTasks().Placement {
			return d, nil
		}
		d.Device = decision.Single(p.Graph)
		d.Transfer = nil // one GPU per replica: nothing is sent inside a replica
		d.Strategy = decision.Strategy{Replicas: p.Devices()}
		if p.Devices() > 1 {
			d.Strategy.Shard = shard
		}
		return d, nil
	})
}

// FSDP is fully sharded data parallelism as PyTorch FSDP and ZeRO-3 run
// it (Rajbhandari et al., SC'20; Zhao et al., VLDB'23): DDP's replicas,
// each keeping 1/N of the parameters, gradients and optimizer state, a
// layer's weights all-gathered before its forward and backward and its
// gradients reduce-scattered after. What users run first when a model
// does not fit one GPU. Its decision is DDP's with the strategy's shard
// set; the problem's evaluator costs the collectives and the memory.
type FSDP struct{}

var _ optimize.Optimizer = FSDP{}

// Name returns "fsdp".
func (FSDP) Name() string { return "fsdp" }

// Optimize evaluates the FSDP decision once (one GPU: DDP's, nothing to
// shard over).
func (o FSDP) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	return replicas(ctx, o.Name(), p, s, decision.FullShard)
}

// ZeRO2 is ZeRO stage 2 as DeepSpeed runs it (Rajbhandari et al., SC'20;
// PyTorch FSDP's SHARD_GRAD_OP is the same split): DDP's replicas, whose
// gradients are reduce-scattered instead of all-reduced, each GPU keeping
// the optimizer state of 1/N of the parameters and stepping them, the
// updated parameters all-gathered after. What users run when the
// optimizer state does not fit, or its step is slow. Its decision is
// DDP's with the strategy's shard set to zero2.
type ZeRO2 struct{}

var _ optimize.Optimizer = ZeRO2{}

// Name returns "zero2".
func (ZeRO2) Name() string { return "zero2" }

// Optimize evaluates the ZeRO-2 decision once (one GPU: DDP's).
func (o ZeRO2) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	return replicas(ctx, o.Name(), p, s, decision.GradShard)
}
