package classical

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph/partition"
	"github.com/placer/placer/optimize"
)

// Anchor says where an anchored search starts: from a given decision, or
// from the best of the quick methods it runs first.
type Anchor struct {
	// From, if set, is the anchor (a result on the same problem: the
	// learned search's reference, say); Quick is then not run.
	From *optimize.Result
	// Candidates, when From is nil, are results already found on the
	// problem (the quick methods' of a search that ran them): the best
	// valid one is the anchor, else the least invalid; Quick is then not
	// run.
	Candidates []*optimize.Result
	// Quick are the quick methods to run first (the registry's quick
	// references: methods.Quick); the best valid result is the anchor.
	Quick []optimize.Optimizer
}

// AnchorUnits is the default bound on an anchored search's decision
// units, the policy's (gdp.MaxUnits).
const AnchorUnits = 8192

// AnchorLevels is the number of priority and fusion levels a level move
// is measured in, the policy's (policy.Config's PriorityLevels and
// FusionLevels).
const AnchorLevels = 16

// fineWindow bounds a fine shift: a priority or fusion value moved by at
// most this many (the swap window of local search and sa).
const fineWindow = window

// The move kinds of the anchored searches.
const (
	aPlace      = iota // a unit to another device
	aPrioLevel         // a unit's priorities up or down 1-2 levels
	aPrioFine          // a unit's priorities up or down by 1..fineWindow
	aFuseLevel         // a unit's fusion priorities up or down 1-2 levels
	aFuseFine          // a unit's fusion priorities up or down by 1..fineWindow
	aFuseToggle        // a unit stops (or starts) initiating fusions
)

type amove struct {
	kind     int
	unit     int32
	from, to int // aPlace: devices
	delta    int // shifts
	off      bool
	wasFIFO  bool // the priorities were nil before this move (apply sets it)
	wasNoFus bool // the fusion was nil before this move
}

// anchored is the state of an anchored search: the anchor's decision
// changed by moves on the policy's decision units.
type anchored struct {
	p     *optimize.Problem
	tr    *optimize.Tracker
	rng   randSource
	nd    int
	unit  *units
	kinds []int

	dev   []int
	prio  []int // always materialised; fifo: snapshot says nil
	fifo  bool
	fval  []int // fusion priority when on
	off   []bool
	nofus bool // snapshot says nil (no fusion)
	saved []bool

	prioStep, fuseStep int

	unitTime  []float64
	unitParam []int64
	load      []float64
	params    []int64

	tmpl    decision.Decision // the anchor (its Transfer is kept)
	anchors []*optimize.Result
	cur     evaluate.Result
}

// randSource is the part of *rand.Rand the searches use.
type randSource interface {
	IntN(int) int
	Float64() float64
}

// runAnchors returns the anchor candidates: an.From alone when set, else
// the results of an.Quick (not counted as the search's evaluations, their
// wall time counted), nil for a method that cannot run here (no expert
// placement). As the learned search's reference does (jobs' composites),
// when the problem decides placement and scheduling each quick method
// also runs with the placement left at the problem's Base:
// "tf-default+m-etf" is m-etf's order on TensorFlow's placement; those
// that order no ops add nothing. They run in parallel (an Evaluator is
// safe for concurrent use; a GPU evaluator serializes its measurements).
func runAnchors(ctx context.Context, p *optimize.Problem, an Anchor, seed uint64) ([]*optimize.Result, error) {
	if an.From != nil {
		return []*optimize.Result{an.From}, nil
	}
	if an.Candidates != nil {
		return an.Candidates, nil
	}
	type job struct {
		o optimize.Optimizer
		p *optimize.Problem
	}
	var jobs []job
	for _, o := range an.Quick {
		jobs = append(jobs, job{o, p})
	}
	if t := p.EffectiveTasks(); t.Placement && t.Scheduling {
		q := *p
		q.Tasks = optimize.Tasks{Scheduling: true, Fusion: t.Fusion}
		for _, o := range an.Quick {
			if o.Name() != "tf-default" {
				jobs = append(jobs, job{o, &q})
			}
		}
	}
	out := make([]*optimize.Result, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() { out[i], errs[i] = j.o.Optimize(ctx, j.p, &optimize.Settings{Seed: seed}) })
	}
	wg.Wait()
	for i, err := range errs {
		switch {
		case err != nil && (errors.Is(err, ErrNoExpert) || jobs[i].o.Name() == "expert"):
			out[i] = nil // no expert placement for this graph
		case err != nil:
			return nil, fmt.Errorf("anchor %s: %w", jobs[i].o.Name(), err)
		case jobs[i].p != p && out[i].Decision.Priority == nil:
			out[i] = nil // orders no ops: the Base decision again
		}
	}
	return out, nil
}

// bestAnchor is the best of the anchors' results by objective o (the
// best valid one, else the least invalid), the first on ties.
func bestAnchor(o optimize.Objective, rs []*optimize.Result) *optimize.Result {
	var best *optimize.Result
	for _, r := range rs {
		if r != nil && (best == nil || o.Better(&r.Eval, &best.Eval)) {
			best = r
		}
	}
	return best
}

// newAnchored runs the anchors and sets up the search from the best.
func newAnchored(ctx context.Context, name string, p *optimize.Problem, s *optimize.Settings, an Anchor, maxUnits int) (*anchored, error) {
	tr := optimize.NewTracker(name, p, s, optimize.DefaultEvaluations)
	anchors, err := runAnchors(ctx, p, an, tr.Seed())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	best := bestAnchor(p.Objective, anchors)
	if best == nil {
		return nil, fmt.Errorf("%s: no anchor method could run", name)
	}
	g := p.Graph
	n := g.NumOps()
	t := p.EffectiveTasks()
	a := &anchored{p: p, tr: tr, rng: newRand(tr.Seed(), name), nd: p.Devices(), anchors: anchors,
		tmpl: p.Complete(best.Decision.Clone()), cur: best.Eval.Clone()}
	a.dev = append([]int(nil), a.tmpl.Device...)
	a.fifo = a.tmpl.Priority == nil
	a.prio = make([]int, n)
	copy(a.prio, a.tmpl.Priority)
	a.prioStep = levelStep(a.tmpl.Priority, AnchorLevels-1)
	a.nofus = a.tmpl.Fusion == nil
	a.fval, a.off = make([]int, n), make([]bool, n)
	f := a.tmpl.Fusion
	if f == nil {
		f = decision.TopologicalFusion(g)
	}
	topo := decision.TopologicalFusion(g)
	for i, x := range f {
		a.off[i] = a.nofus || x < 0
		a.fval[i] = x
		if x < 0 {
			a.fval[i] = topo[i]
		}
	}
	a.fuseStep = levelStep(positive(f), AnchorLevels-2)
	if a.unit, err = anchorUnits(p, a.tmpl, maxUnits, a.prioStep, a.fuseStep, tr.Seed()); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	a.saved = make([]bool, 0, 16)
	if t.Placement && a.nd > 1 {
		a.kinds = append(a.kinds, aPlace, aPlace)
	}
	if t.Scheduling {
		a.kinds = append(a.kinds, aPrioLevel, aPrioFine)
	}
	if t.Fusion {
		a.kinds = append(a.kinds, aFuseLevel, aFuseFine, aFuseToggle)
	}
	// The delta filter's per-unit busy-time lower bounds and parameters,
	// as local search's.
	nu := len(a.unit.members)
	a.unitTime, a.unitParam = make([]float64, nu), make([]int64, nu)
	fusing := t.Fusion || a.tmpl.Fusion != nil
	for k, ms := range a.unit.members {
		for _, v := range ms {
			cons, prod := p.Cost.Fusible(int(v))
			if !fusing || (!cons && !prod) {
				a.unitTime[k] += p.Cost.OpTime(int(v))
			}
			a.unitParam[k] += g.Op(int(v)).ParamBytes
		}
	}
	a.load, a.params = make([]float64, a.nd), make([]int64, a.nd)
	for k, ms := range a.unit.members {
		d := a.dev[ms[0]]
		a.load[d] += a.unitTime[k]
		a.params[d] += a.unitParam[k]
	}
	return a, nil
}

// positive is the non-negative values of xs.
func positive(xs []int) []int {
	var out []int
	for _, x := range xs {
		if x >= 0 {
			out = append(out, x)
		}
	}
	return out
}

// levelStep is one level of values spread over levels+1 levels: the
// range of xs over levels (at least 1), as the policy maps priorities
// onto its levels (learn's levels).
func levelStep(xs []int, levels int) int {
	if len(xs) == 0 {
		return 1
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return max(1, (hi-lo)/max(levels, 1))
}

// anchorUnits groups the ops into the search's decision units as the
// policy does (gdp.Units): one per co-location group (or lone op) when
// there are at most max of them, else co-location groups contracted by
// heavy-edge matching on the bytes between them to about max units, never
// joining two groups the anchor treats differently (device, priority
// level, fusion level).
func anchorUnits(p *optimize.Problem, anchor decision.Decision, max int, prioStep, fuseStep int, seed uint64) (*units, error) {
	u := newUnits(p.Graph)
	if max <= 0 {
		max = AnchorUnits
	}
	if len(u.members) <= max {
		return u, nil
	}
	key := func(op int) [3]int {
		k := [3]int{anchor.Device[op], 0, -1}
		if anchor.Priority != nil {
			k[1] = anchor.Priority[op] / prioStep
		}
		if anchor.Fusion != nil && anchor.Fusion[op] >= 0 {
			k[2] = anchor.Fusion[op] / fuseStep
		}
		return k
	}
	unit, ng, err := partition.ContractOps(p.Graph, p.Cost.OpTimes(), max, key, seed)
	if err != nil {
		return nil, err
	}
	c := &units{unitOf: unit, members: make([][]int32, ng)}
	for op, k := range unit {
		c.members[k] = append(c.members[k], int32(op))
	}
	return c, nil
}

// propose draws a random move.
func (a *anchored) propose() amove {
	kind := a.kinds[a.rng.IntN(len(a.kinds))]
	u := int32(a.rng.IntN(len(a.unit.members)))
	m := amove{kind: kind, unit: u}
	sign := 1 - 2*a.rng.IntN(2)
	switch kind {
	case aPlace:
		m.from = a.dev[a.unit.members[u][0]]
		m.to = a.rng.IntN(a.nd - 1)
		if m.to >= m.from {
			m.to++
		}
	case aPrioLevel:
		m.delta = sign * (1 + a.rng.IntN(2)) * a.prioStep
	case aFuseLevel:
		m.delta = sign * (1 + a.rng.IntN(2)) * a.fuseStep
	case aPrioFine, aFuseFine:
		m.delta = sign * (1 + a.rng.IntN(fineWindow))
	case aFuseToggle:
		m.off = true
		for _, v := range a.unit.members[u] {
			if a.off[v] {
				m.off = false // some member is off: switch them all on
				break
			}
		}
	}
	return m
}

// lowerBound is local search's delta filter for a placement move: a
// lower bound on the step time after it, and whether it certainly runs
// out of memory.
func (a *anchored) lowerBound(m amove) (lb float64, oom bool) {
	if m.kind != aPlace || a.p.Objective != optimize.StepTime {
		return 0, false // the bound is on the step time: no filter for another objective
	}
	lb = a.load[m.to] + a.unitTime[m.unit]
	oom = !a.p.Cost.IgnoresMemory() && a.params[m.to]+a.unitParam[m.unit] > a.p.Capacity()
	return lb, oom
}

// apply makes move m and returns it with what undo needs.
func (a *anchored) apply(m amove) amove {
	ms := a.unit.members[m.unit]
	switch m.kind {
	case aPlace:
		for _, v := range ms {
			a.dev[v] = m.to
		}
		a.load[m.from] -= a.unitTime[m.unit]
		a.load[m.to] += a.unitTime[m.unit]
		a.params[m.from] -= a.unitParam[m.unit]
		a.params[m.to] += a.unitParam[m.unit]
	case aPrioLevel, aPrioFine:
		m.wasFIFO, a.fifo = a.fifo, false
		for _, v := range ms {
			a.prio[v] += m.delta
		}
	case aFuseLevel, aFuseFine:
		m.wasNoFus, a.nofus = a.nofus, false
		for _, v := range ms {
			if !a.off[v] {
				a.fval[v] += m.delta
			}
		}
	case aFuseToggle:
		m.wasNoFus, a.nofus = a.nofus, false
		a.saved = a.saved[:0]
		for _, v := range ms {
			a.saved = append(a.saved, a.off[v])
			a.off[v] = m.off
		}
	}
	return m
}

// undo reverts the move apply just returned (a toggle only right after
// its apply).
func (a *anchored) undo(m amove) {
	ms := a.unit.members[m.unit]
	switch m.kind {
	case aPlace:
		m.from, m.to = m.to, m.from
		a.apply(m)
	case aPrioLevel, aPrioFine:
		for _, v := range ms {
			a.prio[v] -= m.delta
		}
		a.fifo = m.wasFIFO
	case aFuseLevel, aFuseFine:
		for _, v := range ms {
			if !a.off[v] {
				a.fval[v] -= m.delta
			}
		}
		a.nofus = m.wasNoFus
	case aFuseToggle:
		for i, v := range ms {
			a.off[v] = a.saved[i]
		}
		a.nofus = m.wasNoFus
	}
}

// snapshot writes the current state into d (reusing its slices). The
// parts the tasks do not allow are the anchor's, which are the Base's.
func (a *anchored) snapshot(d *decision.Decision) {
	t := a.p.EffectiveTasks()
	dev, pr, fu := d.Device, d.Priority, d.Fusion
	*d = decision.Decision{Device: a.tmpl.Device, Priority: a.tmpl.Priority, Fusion: a.tmpl.Fusion, Transfer: a.tmpl.Transfer}
	if t.Placement {
		d.Device = append(dev[:0], a.dev...)
	}
	if t.Scheduling {
		d.Priority = nil
		if !a.fifo {
			d.Priority = append(pr[:0], a.prio...)
		}
	}
	if t.Fusion {
		d.Fusion = nil
		if !a.nofus {
			d.Fusion = append(fu[:0], a.fval...)
			for v, off := range a.off {
				if off {
					d.Fusion[v] = -1
				}
			}
		}
	}
}

// result offers the anchors to the tracker (they were not counted) and
// returns the best decision. When the search evaluated nothing (stopped
// at once, or no move to make), the anchor is evaluated as the run's one
// evaluation.
func (a *anchored) result(ctx context.Context) (*optimize.Result, error) {
	if a.tr.Stats().Evaluations == 0 {
		return a.tr.Result(ctx, a.tmpl)
	}
	for _, r := range a.anchors {
		if r != nil {
			a.tr.Offer(a.p.Complete(r.Decision), &r.Eval)
		}
	}
	return a.tr.Result(ctx, a.tmpl)
}

// anchoredRound draws up to pool moves that pass keep, lets pick choose
// which of them to evaluate (nil = all), evaluates those as one batch,
// and returns how many were evaluated, leaving the moves in b.moves; err
// is optimize.ErrStopped when the run must stop.
func (a *anchored) anchoredRound(ctx context.Context, b *abatch, pool int, keep func(m amove) (bool, float64), pick func(drawn []amove) ([]int, error)) (int, error) {
	b.drawn, b.drawnAux = b.drawn[:0], b.drawnAux[:0]
	for tries := 0; len(b.drawn) < pool && tries < 4*pool; tries++ {
		m := a.propose()
		ok, aux := keep(m)
		if !ok {
			continue
		}
		b.drawn = append(b.drawn, m)
		b.drawnAux = append(b.drawnAux, aux)
	}
	b.moves, b.aux = b.moves[:0], b.aux[:0]
	if len(b.drawn) == 0 {
		return 0, nil
	}
	b.picked = b.picked[:0]
	if pick == nil {
		for i := range b.drawn {
			b.picked = append(b.picked, i)
		}
	} else {
		var err error
		if b.picked, err = pick(b.drawn); err != nil {
			return 0, err
		}
	}
	for _, i := range b.picked {
		m := a.apply(b.drawn[i])
		a.snapshot(&b.ds[len(b.moves)])
		a.undo(m)
		b.moves = append(b.moves, m)
		b.aux = append(b.aux, b.drawnAux[i])
	}
	if len(b.moves) == 0 {
		return 0, nil
	}
	return a.tr.EvaluateBatch(ctx, b.ds[:len(b.moves)], b.out)
}

// abatch holds one round's candidates: those drawn (with keep's values)
// and, of them, those evaluated.
type abatch struct {
	drawn    []amove
	drawnAux []float64
	picked   []int
	moves    []amove
	ds       []decision.Decision
	out      []evaluate.Result
	aux      []float64
}

// newABatch holds rounds that draw up to pool moves and evaluate up to
// size of them.
func newABatch(pool, size int) *abatch {
	return &abatch{drawn: make([]amove, 0, pool), drawnAux: make([]float64, 0, pool), picked: make([]int, 0, pool),
		moves: make([]amove, 0, size), ds: make([]decision.Decision, size), out: make([]evaluate.Result, size), aux: make([]float64, 0, size)}
}
