package classical

import (
	"context"
	"fmt"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/heap"
	"github.com/placer/placer/optimize"
)

// METF is Baechi's m-ETF (Jeon et al., SoCC 2020): earliest-task-first
// list scheduling (Hwang et al. 1989) under memory limits. It simulates
// the step as it places: at each turn, among the ready ops and the
// devices they fit on, it takes the (op, device) pair that can start the
// earliest, given when the device is free and when the op's inputs can
// arrive there (the producers' finish times plus the cluster's transfer
// times); ties go to the op with the longest path of op times to the end
// of the graph (its static level), then the lower device. An op's memory
// (parameters plus a share of the activations, see memoryEstimate) must
// fit under the device's capacity less MemoryHeadroom; a co-location
// group reserves its whole memory on the device of its first op; an op
// that fits nowhere goes to the device with the most memory left (and the
// evaluation reports the OOM). Placement and priorities come out together:
// the priority order is the order in which the ops were scheduled. Costs
// are the roofline model's op times and the cluster's transfer times
// (link contention is not modelled while placing). Fusion is the
// problem's Base. With the placement task off it list-schedules the Base
// placement.
type METF struct{}

var _ optimize.Optimizer = METF{}

// Name returns "m-etf".
func (METF) Name() string { return "m-etf" }

// Optimize list-schedules the graph once and evaluates the result.
func (o METF) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	return heuristic(ctx, o.Name(), p, s, func() (decision.Decision, error) {
		d := p.Start()
		t := p.EffectiveTasks()
		var fixed []int
		if !t.Placement {
			fixed = d.Device
		}
		dev, order, err := etf(ctx, p, fixed)
		if err != nil {
			return d, err
		}
		if t.Placement {
			d.Device = dev
		}
		if t.Scheduling {
			d.Priority = orderPriority(order)
		}
		return d, nil
	})
}

// etfEntry is a ready op in a device's queue with its key.
type etfEntry struct {
	v     int32
	ready float64 // when its inputs can be on the device
	level float64
}

// etfHeap is a binary heap of entries; byReady orders by earliest ready
// time (then highest level), otherwise by highest level (then earliest
// ready); the op index breaks remaining ties.
type etfHeap struct {
	e       []etfEntry
	byReady bool
}

func (h *etfHeap) less(a, b etfEntry) bool {
	if h.byReady {
		if a.ready != b.ready {
			return a.ready < b.ready
		}
		if a.level != b.level {
			return a.level > b.level
		}
	} else {
		if a.level != b.level {
			return a.level > b.level
		}
		if a.ready != b.ready {
			return a.ready < b.ready
		}
	}
	return a.v < b.v
}

func (h *etfHeap) push(x etfEntry) { heap.PushFunc(&h.e, x, h.less) }

func (h *etfHeap) pop() etfEntry { return heap.PopFunc(&h.e, h.less) }

// etf runs m-ETF. fixed, when not nil, pins every op to its device (list
// scheduling of a given placement; memory is then not checked). It
// returns the placement and the order in which ops were scheduled.
func etf(ctx context.Context, p *optimize.Problem, fixed []int) ([]int, []int32, error) {
	g := p.Graph
	n, nd := g.NumOps(), p.Devices()
	c := p.Cost
	times := p.Cost.OpTimes()
	var mp *memPlan
	var members [][]int32
	if fixed == nil {
		members = groups(g)
		mem, err := memoryEstimate(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		mp = newMemPlan(g, nd, mem, memoryLimit(p))
	}

	// Static levels: the longest path of op times from each op to the end.
	level := make([]float64, n)
	topo := g.Topo()
	for k := n - 1; k >= 0; k-- {
		v := topo[k]
		best := 0.0
		for _, s := range g.Succs(int(v)) {
			best = max(best, level[s])
		}
		level[v] = times[v] + best
	}

	dev := make([]int, n)
	for i := range dev {
		dev[i] = -1
	}
	forced := make([]int, n) // device an op that fits nowhere must use, or -1
	excluded := make([]int8, n)
	for i := range forced {
		forced[i] = -1
	}
	finish := make([]float64, n)
	free := make([]float64, nd)
	// Transfers: each channel of the cluster carries one transfer at a
	// time (as in the evaluator), and a tensor goes to a device once.
	chanFree := make([]float64, c.Channels())
	sent := make([]float64, g.NumTensors()*nd) // arrival of tensor t on device k, or -1
	for i := range sent {
		sent[i] = -1
	}
	wait := make([]etfHeap, nd)
	avail := make([]etfHeap, nd)
	for k := range wait {
		wait[k].byReady = true
	}
	indeg := make([]int32, n)

	allowed := func(v, k int) bool {
		switch {
		case fixed != nil:
			return fixed[v] == k
		case forced[v] >= 0:
			return forced[v] == k
		}
		f := mp.fixed(v)
		return f < 0 || f == k
	}
	fits := func(v, k int) bool { return fixed != nil || forced[v] == k || mp.fits(v, k) }
	xfer := func(ts *graph.Tensor, src, dst int) float64 {
		if ts.HasTransferTime {
			return ts.TransferTime
		}
		return c.TransferTime(src, dst, ts.Bytes)
	}
	// readyTime is when op v's inputs can be on device k, given the
	// transfers committed so far (it only grows as more are committed).
	readyTime := func(v, k int) float64 {
		r := 0.0
		for _, t := range g.Inputs(v) {
			ts := g.Tensor(int(t))
			pd := dev[ts.Producer]
			a := finish[ts.Producer]
			switch {
			case pd == k:
			case sent[int(t)*nd+k] >= 0:
				a = sent[int(t)*nd+k]
			default:
				a = max(a, chanFree[c.Channel(pd, k)]) + xfer(ts, pd, k)
			}
			r = max(r, a)
		}
		for _, q := range g.ControlPreds(v) {
			r = max(r, finish[q])
		}
		return r
	}
	// commit sends op v's missing inputs to device k, one after another
	// on their channels, and returns when the last arrives.
	commit := func(v, k int) float64 {
		r := 0.0
		for _, t := range g.Inputs(v) {
			ts := g.Tensor(int(t))
			pd := dev[ts.Producer]
			a := finish[ts.Producer]
			switch {
			case pd == k:
			case sent[int(t)*nd+k] >= 0:
				a = sent[int(t)*nd+k]
			default:
				ch := c.Channel(pd, k)
				a = max(a, chanFree[ch]) + xfer(ts, pd, k)
				chanFree[ch] = a
				sent[int(t)*nd+k] = a
			}
			r = max(r, a)
		}
		for _, q := range g.ControlPreds(v) {
			r = max(r, finish[q])
		}
		return r
	}
	enqueue := func(v, k int) {
		wait[k].push(etfEntry{v: int32(v), ready: readyTime(v, k), level: level[v]})
	}
	makeReady := func(v int) {
		for k := 0; k < nd; k++ {
			if allowed(v, k) {
				enqueue(v, k)
			}
		}
	}
	// exclude records that v does not fit on k; when it fits nowhere it
	// is forced onto the device with the most memory left. An op whose
	// co-location group is already on a device can go nowhere else: it is
	// forced there at once (waiting for the other devices to exclude it,
	// which never consider it, stalled the schedule when nothing fit).
	exclude := func(v, k int) {
		excluded[v]++
		if (int(excluded[v]) >= nd || mp.fixed(v) >= 0) && forced[v] < 0 {
			f := mp.roomiest()
			if fd := mp.fixed(v); fd >= 0 {
				f = fd
			}
			forced[v] = f
			enqueue(v, f)
		}
	}
	for v := 0; v < n; v++ {
		indeg[v] = int32(len(g.Preds(v)))
	}
	for _, v := range topo {
		if indeg[v] == 0 {
			makeReady(int(v))
		}
	}

	order := make([]int32, 0, n)
	stalls := 0
	for len(order) < n {
		if len(order)%4096 == 0 && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		bestK, bestV := -1, -1
		bestStart := 0.0
		for k := 0; k < nd; k++ {
			for len(wait[k].e) > 0 && wait[k].e[0].ready <= free[k] {
				e := wait[k].pop()
				if dev[e.v] < 0 && allowed(int(e.v), k) {
					avail[k].push(e)
				}
			}
			v, start := -1, 0.0
			for _, h := range []*etfHeap{&avail[k], &wait[k]} {
				for len(h.e) > 0 {
					e := h.e[0]
					u := int(e.v)
					if dev[u] >= 0 || !allowed(u, k) {
						h.pop()
						continue
					}
					if !fits(u, k) {
						h.pop()
						exclude(u, k)
						continue
					}
					// Keys are lower bounds that grow as transfers are
					// committed: refresh a stale one and look again.
					if r := readyTime(u, k); r > e.ready && (h.byReady || r > free[k]) {
						h.pop()
						e.ready = r
						wait[k].push(e)
						continue
					}
					v, start = u, max(free[k], e.ready)
					break
				}
				if v >= 0 {
					break
				}
			}
			if v < 0 {
				continue
			}
			if bestK < 0 || start < bestStart || (start == bestStart && level[v] > level[bestV]) {
				bestK, bestV, bestStart = k, v, start
			}
		}
		if bestK < 0 {
			// Only ops that were just forced onto a device remain; their
			// queues hold them now. A second empty turn would be a bug.
			stalls++
			if stalls > 1 {
				return nil, nil, fmt.Errorf("m-etf: internal error: %d of %d ops scheduled and none ready", len(order), n)
			}
			continue
		}
		stalls = 0
		v, k := bestV, bestK
		if mp != nil {
			newGroup := mp.fixed(v) < 0 && g.Colocation(v) >= 0
			mp.place(v, k)
			if newGroup {
				// Members already ready may have been turned away from k
				// before the group's memory was reserved there: queue
				// them again.
				for _, u := range members[g.Colocation(v)] {
					if int(u) != v && indeg[u] == 0 && dev[u] < 0 {
						enqueue(int(u), k)
					}
				}
			}
		}
		dev[v] = k
		finish[v] = max(free[k], commit(v, k)) + times[v]
		free[k] = finish[v]
		order = append(order, int32(v))
		for _, s := range g.Succs(v) {
			indeg[s]--
			if indeg[s] == 0 {
				makeReady(int(s))
			}
		}
	}
	return dev, order, nil
}
