package gdp

import (
	"context"
	"math"

	"github.com/placer/placer/methods/classical"
)

// scheduleState is go-scored's view of the current decision's schedule,
// per unit and device: which units are on its critical path, their float
// and start, and each device's idle time, all relative to the step; nil
// slices when the cost model reports no schedule. at is the round it was
// read in.
type scheduleState struct {
	crit, slack, startAt, idle []float32
	at                         int
}

// stateEvery is the fewest rounds between two reads of the current
// decision's schedule (each costs about one evaluation and the float
// computation); it is read again only after the step improved.
const stateEvery = 4

// refresh reads the current decision's schedule (when the cost model
// reports one) over nd devices, in round round.
func (s *scheduleState) refresh(ctx context.Context, v classical.SearchView, nd, round int) error {
	p := v.Problem()
	sch, err := scheduler(p)
	if err != nil {
		return nil // no schedule to read: the state features stay zero
	}
	d := v.Decision()
	res, sched, err := sch.Schedule(context.WithoutCancel(ctx), d)
	if err != nil {
		return err
	}
	step := res.StepTime
	if step <= 0 || math.IsInf(step, 0) || math.IsNaN(step) {
		return nil
	}
	st := stateHints(p.Graph, nil, d.Device, &res, &sched)
	members := v.Members()
	if s.crit == nil {
		s.crit = make([]float32, len(members))
		s.slack = make([]float32, len(members))
		s.startAt = make([]float32, len(members))
		s.idle = make([]float32, nd)
	}
	const us = 1e6
	for u, ms := range members {
		crit, slack, start := 0.0, math.Inf(1), math.Inf(1)
		for _, o := range ms {
			row := st[int(o)*NumStateHints : (int(o)+1)*NumStateHints]
			if row[stateCritical] > 0 {
				crit++
			}
			slack = math.Min(slack, row[stateSlack]/us/step)
			start = math.Min(start, row[stateStart]/us/step)
		}
		s.crit[u] = float32(crit / float64(len(ms)))
		s.slack[u] = float32(math.Min(1, slack*10))
		s.startAt[u] = float32(math.Min(1, start))
	}
	for d := range s.idle {
		if d < len(res.DeviceBusy) {
			s.idle[d] = float32(math.Max(0, step-res.DeviceBusy[d]) / step)
		}
	}
	s.at = round
	return nil
}

// write writes the schedule's view of move m into its row x (nothing
// without a schedule).
func (s *scheduleState) write(m classical.Move, x []float32) {
	if s.crit == nil {
		return
	}
	u := m.Unit
	x[fState] = s.crit[u]
	x[fState+1] = s.slack[u]
	x[fState+2] = s.startAt[u]
	if m.Kind == classical.MovePlace {
		x[fState+3] = s.idle[m.To]
		x[fState+4] = s.idle[m.From]
	}
}
