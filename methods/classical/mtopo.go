package classical

import (
	"context"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/optimize"
)

// MTopo is Baechi's m-TOPO (Jeon et al., "Baechi: Fast Device Placement
// of Machine Learning Graphs", SoCC 2020): the ops in topological order
// are cut into contiguous runs, one per device, each holding about
// 1/devices of the total compute (the roofline op times), a run ending
// early when the device's estimated memory is full (the capacity less
// MemoryHeadroom). An op that fits on no later device goes to the first
// that has room, else to the one with the most; a co-location group goes
// where its first op goes. Priorities follow the same topological order.
// Fusion is the problem's Base.
type MTopo struct{}

var _ optimize.Optimizer = MTopo{}

// Name returns "m-topo".
func (MTopo) Name() string { return "m-topo" }

// Optimize splits, orders and evaluates once.
func (o MTopo) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	return heuristic(ctx, o.Name(), p, s, func() (decision.Decision, error) {
		d := p.Start()
		t := p.EffectiveTasks()
		if t.Placement {
			dev, err := mTopoPlace(ctx, p)
			if err != nil {
				return d, err
			}
			d.Device = dev
		}
		if t.Scheduling {
			d.Priority = topoPriority(p.Graph)
		}
		return d, nil
	})
}

func mTopoPlace(ctx context.Context, p *optimize.Problem) ([]int, error) {
	g := p.Graph
	nd := p.Devices()
	mem, err := memoryEstimate(ctx, p)
	if err != nil {
		return nil, err
	}
	times := p.Cost.OpTimes()
	total := 0.0
	for _, t := range times {
		total += t
	}
	target := total / float64(nd)
	mp := newMemPlan(g, nd, mem, memoryLimit(p))
	load := make([]float64, nd)
	dev := make([]int, g.NumOps())
	cur := 0
	for _, v32 := range g.Topo() {
		v := int(v32)
		k := mp.fixed(v)
		if k < 0 {
			for cur < nd-1 && load[cur] > 0 && (load[cur]+times[v]/2 > target || !mp.fits(v, cur)) {
				cur++
			}
			k = cur
			if !mp.fits(v, k) {
				k = -1
				for j := 0; j < nd; j++ {
					if mp.fits(v, j) {
						k = j
						break
					}
				}
				if k < 0 {
					k = mp.roomiest()
				}
			}
		}
		mp.place(v, k)
		dev[v] = k
		load[k] += times[v]
	}
	return dev, nil
}
