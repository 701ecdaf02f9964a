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
// time (opTime); the other ops follow them as assignPipeline says (the
// backward pass with its layers, parameters and optimizer steps with the
// stage that reads them first).
func PipelineStages(g *graph.Graph, opTime func(int) float64, stages int) []int {
	n := g.NumOps()
	dev := make([]int, n)
	for i := range dev {
		dev[i] = -1
	}
	total := 0.0
	for i := range n {
		if g.Op(i).Phase() == graph.PhaseForward {
			total += opTime(i)
		}
	}
	run := 0.0
	for _, v := range g.Topo() {
		i := int(v)
		if g.Op(i).Phase() != graph.PhaseForward {
			continue
		}
		dev[i] = min(int(run/total*float64(stages)), stages-1)
		run += opTime(i)
	}
	assignPipeline(g, dev, stages)
	return dev
}

// assignPipeline completes a pipeline placement: unit holds the unit
// (stage, or a layer that a split maps to a stage) of every forward op,
// non-decreasing along the topological order, and -1 for the other ops,
// which it places:
//
//   - each backward op on the latest unit among the forward ops whose
//     outputs it reads (its layer's), or the earliest among its backward
//     inputs' when that is earlier (the backward pass flows to earlier
//     units only); an op without work (a view, a shape: the update
//     phase's class, see graph.Op.Phase) outside any co-location group
//     goes with the latest forward op that feeds it, or, when a backward
//     op feeds it, by the backward rule, and counts as forward or
//     backward accordingly for the ops it feeds (so that a backward op
//     that reads an activation through a view stays on its layer);
//   - a co-location group with a forward or backward member on its first
//     such member's unit;
//   - the remaining ops (parameters, optimizer steps, views, shapes),
//     latest first, on their group's unit, else on the earliest unit that
//     reads their outputs (a parameter goes to its first reader's stage,
//     not to the first stage: the stage that computes with it holds its
//     state); what is still unplaced then goes with its group, else with
//     its first input's producer, else on unit 0;
//   - last, every co-location group on its first op's unit (colocate).
//
// Every rule commutes with a non-decreasing map of units to stages (the
// latest, the earliest and the first member of a set map to the latest,
// earliest and first one's stage), so placing by layers and then mapping
// the layers to stages gives the placement that assignPipeline makes on
// the stages directly: pipedream's dynamic program costs a split of the
// layers exactly as the split's placement will be.
func assignPipeline(g *graph.Graph, unit []int, units int) {
	n := g.NumOps()
	topo := g.Topo()
	// bwd marks the ops placed as part of the backward pass; the forward
	// pass is the forward ops and the ops without work that only they feed.
	bwd := make([]bool, n)
	for _, v := range topo {
		i := int(v)
		ph := g.Op(i).Phase()
		if unit[i] >= 0 || ph == graph.PhaseForward || (ph == graph.PhaseUpdate && g.Colocation(i) >= 0) {
			continue
		}
		fwd, other := -1, units
		for _, t := range g.Inputs(i) {
			p := g.Tensor(int(t)).Producer
			switch {
			case unit[p] < 0:
			case bwd[p]:
				other = min(other, unit[p])
			default:
				fwd = max(fwd, unit[p])
			}
		}
		if ph == graph.PhaseUpdate {
			// An op without work (a view, a shape) outside any group:
			// with the latest forward op that feeds it, or in the backward
			// pass when a backward op does; else (no placed input) later.
			switch {
			case other < units:
				unit[i], bwd[i] = min(fwd, other), true
				if fwd < 0 {
					unit[i] = other
				}
			case fwd >= 0:
				unit[i] = fwd
			}
			continue
		}
		// Its layer's unit, but never later than a backward op it reads
		// from: the backward pass only goes to earlier units.
		bwd[i] = true
		switch {
		case fwd >= 0:
			unit[i] = min(fwd, other)
		case other < units:
			unit[i] = other
		default:
			unit[i] = units - 1
		}
	}
	group := make([]int, g.NumColocationGroups())
	for k := range group {
		group[k] = -1
	}
	for i := range n {
		if c := g.Colocation(i); c >= 0 && unit[i] >= 0 && group[c] < 0 {
			group[c] = unit[i]
		}
	}
	for k := len(topo) - 1; k >= 0; k-- {
		i := int(topo[k])
		if unit[i] >= 0 {
			continue
		}
		c := g.Colocation(i)
		if c >= 0 && group[c] >= 0 {
			unit[i] = group[c]
			continue
		}
		first := units
		for _, t := range g.Outputs(i) {
			for _, r := range g.Tensor(int(t)).Consumers {
				if unit[r] >= 0 {
					first = min(first, unit[r])
				}
			}
		}
		if first < units {
			unit[i] = first
			if c >= 0 {
				group[c] = first
			}
		}
	}
	for _, v := range topo {
		i := int(v)
		if unit[i] >= 0 {
			continue
		}
		if c := g.Colocation(i); c >= 0 && group[c] >= 0 {
			unit[i] = group[c]
			continue
		}
		unit[i] = 0
		for _, t := range g.Inputs(i) {
			if p := g.Tensor(int(t)).Producer; unit[p] >= 0 {
				unit[i] = unit[p]
				break
			}
		}
	}
	colocate(g, unit)
}
