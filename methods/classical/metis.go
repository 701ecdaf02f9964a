package classical

import (
	"context"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/partition"
	"github.com/placer/placer/optimize"
)

// METIS is graph-partitioning placement in the manner of METIS (Karypis &
// Kumar 1998), the "TensorFlow METIS" baseline of GDP (seeds/
// gdp-generalized-device-placement.md, Table 1) and the GP of REGAL's
// GP+DFS (seeds/regal-iclr2020.txt §5.2, A.10): a multilevel k-way
// partition of the ops (co-location groups contracted into one vertex
// first) into one part per device that keeps each device's compute (the
// roofline op times) within Imbalance of the average and minimises the
// tensor bytes cut, and keeps each device's estimated memory (parameters
// plus a share of the activations) under the capacity less
// MemoryHeadroom. The schedule and fusion are the problem's Base.
type METIS struct {
	// Imbalance is the allowed excess of a device's compute over the
	// average. 0 = 0.03.
	Imbalance float64
	// CoarsenTo and Passes are partition.Options' (0 = its defaults).
	CoarsenTo, Passes int
}

var _ optimize.Optimizer = METIS{}

// Name returns "metis".
func (METIS) Name() string { return "metis" }

// Optimize partitions the graph once and evaluates the placement.
func (o METIS) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	return heuristic(ctx, o.Name(), p, s, func() (decision.Decision, error) {
		d := p.Start()
		if !p.EffectiveTasks().Placement {
			return d, nil
		}
		dev, err := o.place(ctx, p, seedOf(s))
		if err != nil {
			return d, err
		}
		d.Device = dev
		return d, nil
	})
}

// place computes the partition of p's ops into devices.
func (o METIS) place(ctx context.Context, p *optimize.Problem, seed uint64) ([]int, error) {
	g := p.Graph
	mem, err := memoryEstimate(ctx, p)
	if err != nil {
		return nil, err
	}
	pg, vertexOf := partition.FromComputation(g, p.Cost.OpTimes(), mem)
	r, err := partition.KWay(pg, partition.Options{
		Parts: p.Devices(), Imbalance: o.Imbalance, Capacity: memoryLimit(p),
		Seed: seed, CoarsenTo: o.CoarsenTo, Passes: o.Passes,
	})
	if err != nil {
		return nil, err
	}
	dev := make([]int, g.NumOps())
	for i := range dev {
		dev[i] = int(r.Part[vertexOf[i]])
	}
	return dev, nil
}

func seedOf(s *optimize.Settings) uint64 {
	if s == nil {
		return 0
	}
	return s.Seed
}
