package classical

import (
	"context"
	"fmt"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/optimize"
)

// Pipeline is a synchronous pipeline as GPipe (Huang et al.,
// NeurIPS'19) and PipeDream-Flush / Megatron-LM's 1F1B (Narayanan et al.,
// SC'21) run one: the forward pass cut into one stage per GPU, balanced by
// time; each op of the backward pass on the stage of the forward
// activations it reads (its layer's); the batch split into M micro-batches
// run through the stages in Schedule's order, M chosen by evaluating 1, 2,
// 4, ... up to the batch (or MaxMicroBatches). The problem's evaluator
// costs the schedule (evaluate/strategy). A graph without batch
// information has no micro-batches: the method does not apply.
type Pipeline struct {
	Schedule decision.Schedule
	// MaxMicroBatches bounds M (0 = 32).
	MaxMicroBatches int
}

var _ optimize.Optimizer = Pipeline{}

// Name returns "gpipe" or "1f1b".
func (o Pipeline) Name() string {
	if o.Schedule == decision.OneFOneB {
		return "1f1b"
	}
	return "gpipe"
}

// Optimize builds the stages and evaluates each micro-batch count, keeping
// the best.
func (o Pipeline) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	g := p.Graph
	if g.Batch() == 0 {
		return nil, ErrNoBatch
	}
	tr := optimize.NewTracker(o.Name(), p, s, 0)
	d := p.Start()
	if !p.EffectiveTasks().Placement {
		// The placement is the problem's to keep: no stages.
		if _, err := tr.Evaluate(ctx, p.Complete(d)); err != nil && err != optimize.ErrStopped {
			return nil, err
		}
		return tr.Result(ctx, p.Complete(d))
	}
	d.Device = PipelineStages(g, p.Cost.OpTime, p.Devices())
	d.Transfer = nil
	d = p.Complete(d)
	maxM := o.MaxMicroBatches
	if maxM <= 0 {
		maxM = 32
	}
	for m := 1; m <= min(maxM, g.Batch()); m *= 2 {
		c := d
		if m > 1 {
			c.Strategy = decision.Strategy{MicroBatches: m, Schedule: o.Schedule}
		}
		if _, err := tr.Evaluate(ctx, c); err != nil {
			if err == optimize.ErrStopped {
				break
			}
			return nil, fmt.Errorf("%s: %w", o.Name(), err)
		}
		tr.Step()
	}
	return tr.Result(ctx, d)
}

// PipelineStages places g as a pipeline of stages stages: the ops of the
// forward pass (those whose work scales with the batch, not marked
// backward) in topological order cut into contiguous runs of about equal
// time (opTime); each backward op on the latest stage among the forward
// ops whose outputs it reads, or the earliest among its backward inputs'
// when that is earlier (the backward pass flows to earlier stages only);
// the ops whose work does not scale (variables, optimizer steps) with
// their co-location group, else with their first input's producer.
func PipelineStages(g *graph.Graph, opTime func(int) float64, stages int) []int {
	n := g.NumOps()
	dev := make([]int, n)
	for i := range dev {
		dev[i] = -1
	}
	kind := func(i int) int { // 0 forward, 1 backward, 2 update
		op := g.Op(i)
		switch {
		case op.FLOPs <= op.FixedFLOPs && op.BytesRead <= op.FixedBytesRead && op.BytesWritten <= op.FixedBytesWritten:
			return 2
		case op.Backward:
			return 1
		}
		return 0
	}
	total := 0.0
	for i := range n {
		if kind(i) == 0 {
			total += opTime(i)
		}
	}
	run := 0.0
	for _, v := range g.Topo() {
		i := int(v)
		if kind(i) != 0 {
			continue
		}
		dev[i] = min(int(run/total*float64(stages)), stages-1)
		run += opTime(i)
	}
	for _, v := range g.Topo() {
		i := int(v)
		if kind(i) != 1 {
			continue
		}
		fwd, other := -1, stages
		for _, t := range g.Inputs(i) {
			p := g.Tensor(int(t)).Producer
			if dev[p] < 0 {
				continue
			}
			if kind(p) == 0 {
				fwd = max(fwd, dev[p])
			} else {
				other = min(other, dev[p])
			}
		}
		// Its layer's stage, but never later than a backward op it reads
		// from: the backward pass only goes to earlier stages.
		switch {
		case fwd >= 0:
			dev[i] = min(fwd, other)
		case other < stages:
			dev[i] = other
		default:
			dev[i] = stages - 1
		}
	}
	// Co-location groups take a placed member's stage (a variable its
	// first forward reader's, an optimizer step its variable's).
	group := make([]int, g.NumColocationGroups())
	for k := range group {
		group[k] = -1
	}
	for i := range n {
		if c := g.Colocation(i); c >= 0 && dev[i] >= 0 && group[c] < 0 {
			group[c] = dev[i]
		}
	}
	for _, v := range g.Topo() {
		i := int(v)
		if dev[i] >= 0 {
			continue
		}
		if c := g.Colocation(i); c >= 0 && group[c] >= 0 {
			dev[i] = group[c]
			continue
		}
		dev[i] = 0
		for _, t := range g.Inputs(i) {
			if p := g.Tensor(int(t)).Producer; dev[p] >= 0 {
				dev[i] = dev[p]
				break
			}
		}
	}
	colocate(g, dev)
	return dev
}
