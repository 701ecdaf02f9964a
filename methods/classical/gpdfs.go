package classical

import (
	"context"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/optimize"
)

// GPDFS is REGAL's "Graph Partitioning + Depth First Search" baseline
// (seeds/regal-iclr2020.txt §5.2, A.10), representative of the XLA
// compiler's model parallelism: the METIS partition for placement, and
// per-device schedules from a depth-first topological order (XLA's DFS
// scheduler): after an op runs, the ops it made ready run next, deepest
// first. Fusion is the problem's Base.
type GPDFS struct {
	// Partition configures the partition (zero value = METIS's defaults).
	Partition METIS
}

var _ optimize.Optimizer = GPDFS{}

// Name returns "gp-dfs".
func (GPDFS) Name() string { return "gp-dfs" }

// Optimize partitions, orders and evaluates once.
func (o GPDFS) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	return heuristic(ctx, o.Name(), p, s, func() (decision.Decision, error) {
		d := p.Start()
		t := p.EffectiveTasks()
		if t.Placement {
			dev, err := o.Partition.place(ctx, p, seedOf(s))
			if err != nil {
				return d, err
			}
			d.Device = dev
		}
		if t.Scheduling {
			d.Priority = orderPriority(dfsOrder(p.Graph))
		}
		return d, nil
	})
}

// dfsOrder is a depth-first topological order: Kahn's algorithm with a
// stack instead of a queue, so that the ops an op makes ready come next
// (the lowest index first among them), following one path as deep as it
// goes before returning to the others.
func dfsOrder(g *graph.Graph) []int32 {
	n := g.NumOps()
	indeg := make([]int32, n)
	var stack []int32
	for i := n - 1; i >= 0; i-- {
		indeg[i] = int32(len(g.Preds(i)))
		if indeg[i] == 0 {
			stack = append(stack, int32(i))
		}
	}
	order := make([]int32, 0, n)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		order = append(order, v)
		succ := g.Succs(int(v))
		for k := len(succ) - 1; k >= 0; k-- {
			s := succ[k]
			indeg[s]--
			if indeg[s] == 0 {
				stack = append(stack, s)
			}
		}
	}
	return order
}
