package classical

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/optimize"
)

// The move kinds of local search and simulated annealing.
const (
	movePlace      = iota // one co-location group (or op) to another device
	moveSwapPrio          // swap the scheduling priorities of two ops
	moveSwapFusion        // swap the fusion priorities of two ops
	moveToggleFuse        // an op stops (or starts) initiating fusions
)

// window bounds how far apart (in priority order) two swapped ops are.
const window = 32

// move is one change of a search state.
type move struct {
	kind     int
	unit     int32 // movePlace
	from, to int   // movePlace: devices; swaps: positions in the order
}

// searcher holds the state of a local search or annealing run: a
// placement, a priority order and a fusion order (for the tasks the
// problem allows), plus what the cheap delta filter needs: each device's
// lower bound on busy time and its resident parameter bytes.
type searcher struct {
	p     *optimize.Problem
	tasks optimize.Tasks
	tr    *optimize.Tracker
	rng   *rand.Rand
	u     *units
	n, nd int

	dev       []int
	prioOrder []int32 // ops, highest priority first
	prio      []int
	fuseOrder []int32
	fuse      []int
	fuseOff   []bool

	unitTime  []float64 // lower bound on each unit's busy time
	unitParam []int64
	load      []float64 // per device: sum of unitTime
	params    []int64   // per device: sum of unitParam

	startOrder []int32 // the start's priority order, if it has one (m-etf)

	tmpl  decision.Decision // the Base parts
	cur   evaluate.Result   // the current state's result
	kinds []int             // move kinds allowed, weighted by repetition
}

// startPlacement computes a search's initial placement: "random", "base"
// (the problem's Base placement), or a heuristic's: "m-topo", "m-etf",
// "metis". m-etf's priority order is kept as the starting schedule; the
// others start from the topological order.
func (s *searcher) startPlacement(ctx context.Context, start string) error {
	g := s.p.Graph
	if ctx.Err() != nil && (start == "m-topo" || start == "m-etf" || start == "metis") {
		start = "base" // cancelled: the run stops at once; start cheaply
	}
	switch start {
	case "", "random":
		randomPlacement(s.u, s.nd, s.rng, s.dev)
	case "base":
		copy(s.dev, s.p.Start().Device)
		colocate(g, s.dev)
	case "m-topo":
		dev, err := mTopoPlace(ctx, s.p)
		if err != nil {
			return err
		}
		copy(s.dev, dev)
	case "m-etf":
		dev, order, err := etf(ctx, s.p, nil)
		if err != nil {
			return err
		}
		copy(s.dev, dev)
		s.startOrder = order
	case "metis":
		dev, err := (METIS{}).place(ctx, s.p, s.tr.Seed())
		if err != nil {
			return err
		}
		copy(s.dev, dev)
	default:
		return fmt.Errorf("unknown start %q (want random, base, m-topo, m-etf or metis)", start)
	}
	return nil
}

// startSearcher creates a searcher and evaluates its starting decision.
// When the run must stop before that (budget or Ctrl-C), done is the
// run's result and se is nil.
func startSearcher(ctx context.Context, name string, p *optimize.Problem, s *optimize.Settings, start string) (se *searcher, done *optimize.Result, err error) {
	if se, err = newSearcher(ctx, name, p, s, start); err != nil {
		return nil, nil, err
	}
	if err := se.evaluateCurrent(ctx); err != nil {
		if errors.Is(err, optimize.ErrStopped) {
			r, err := se.result(ctx)
			return nil, r, err
		}
		return nil, nil, err
	}
	return se, nil, nil
}

// result is the run's answer: the best decision found, or the current
// one when nothing was evaluated.
func (se *searcher) result(ctx context.Context) (*optimize.Result, error) {
	var cur decision.Decision
	se.snapshot(&cur)
	return se.tr.Result(ctx, cur)
}

func newSearcher(ctx context.Context, name string, p *optimize.Problem, s *optimize.Settings, start string) (*searcher, error) {
	g := p.Graph
	n := g.NumOps()
	t := p.EffectiveTasks()
	tr := optimize.NewTracker(name, p, s, optimize.DefaultEvaluations)
	se := &searcher{p: p, tasks: t, tr: tr, rng: newRand(tr.Seed(), name), u: newUnits(g), n: n, nd: p.Devices(),
		dev: make([]int, n), tmpl: p.Complete(p.Start())}
	if t.Placement {
		if err := se.startPlacement(ctx, start); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if se.nd > 1 {
			se.kinds = append(se.kinds, movePlace, movePlace)
		}
	} else {
		copy(se.dev, se.tmpl.Device)
	}
	if t.Scheduling {
		se.prioOrder = append([]int32(nil), g.Topo()...)
		if se.startOrder != nil {
			se.prioOrder = se.startOrder
		}
		se.prio = orderPriority(se.prioOrder)
		se.kinds = append(se.kinds, moveSwapPrio)
	}
	if t.Fusion {
		f := se.tmpl.Fusion
		if f == nil {
			f = decision.TopologicalFusion(g)
		}
		se.fuseOrder = append([]int32(nil), g.Topo()...)
		// Order by the starting fusion priorities (descending, stable).
		sortByDesc(se.fuseOrder, f)
		se.fuseOff = make([]bool, n)
		for i, x := range f {
			se.fuseOff[i] = x < 0
		}
		se.fuse = make([]int, n)
		se.refreshFusion()
		se.kinds = append(se.kinds, moveSwapFusion, moveToggleFuse)
	}
	// Delta filter: per unit, a lower bound on its busy time (an op that
	// may fuse can save everything but its compute, which the model does
	// not export, so it counts zero) and its parameters.
	se.unitTime = make([]float64, len(se.u.members))
	se.unitParam = make([]int64, len(se.u.members))
	fusing := t.Fusion || se.tmpl.Fusion != nil
	for k, ms := range se.u.members {
		for _, v := range ms {
			cons, prod := p.Cost.Fusible(int(v))
			if !fusing || (!cons && !prod) {
				se.unitTime[k] += p.Cost.OpTime(int(v))
			}
			se.unitParam[k] += g.Op(int(v)).ParamBytes
		}
	}
	se.load = make([]float64, se.nd)
	se.params = make([]int64, se.nd)
	se.recount()
	return se, nil
}

// recount recomputes the per-device loads and parameters.
func (s *searcher) recount() {
	clear(s.load)
	clear(s.params)
	for k, ms := range s.u.members {
		d := s.dev[ms[0]]
		s.load[d] += s.unitTime[k]
		s.params[d] += s.unitParam[k]
	}
}

// sortByDesc sorts ops by key descending, keeping the given order among
// equal keys.
func sortByDesc(ops []int32, key []int) {
	// insertion into buckets would need the key range; a stable sort is
	// simplest.
	tmp := append([]int32(nil), ops...)
	mergeSort(ops, tmp, key)
}

func mergeSort(a, tmp []int32, key []int) {
	if len(a) < 2 {
		return
	}
	m := len(a) / 2
	mergeSort(a[:m], tmp[:m], key)
	mergeSort(a[m:], tmp[m:], key)
	copy(tmp, a)
	i, j, k := 0, m, 0
	for i < m && j < len(a) {
		if key[tmp[j]] > key[tmp[i]] {
			a[k] = tmp[j]
			j++
		} else {
			a[k] = tmp[i]
			i++
		}
		k++
	}
	for ; i < m; i++ {
		a[k] = tmp[i]
		k++
	}
	for ; j < len(a); j++ {
		a[k] = tmp[j]
		k++
	}
}

func (s *searcher) refreshFusion() {
	for pos, v := range s.fuseOrder {
		if s.fuseOff[v] {
			s.fuse[v] = -1
		} else {
			s.fuse[v] = s.n - pos
		}
	}
}

// propose draws a random move.
func (s *searcher) propose() move {
	kind := s.kinds[s.rng.IntN(len(s.kinds))]
	switch kind {
	case movePlace:
		u := int32(s.rng.IntN(len(s.u.members)))
		from := s.dev[s.u.members[u][0]]
		to := s.rng.IntN(s.nd - 1)
		if to >= from {
			to++
		}
		return move{kind: kind, unit: u, from: from, to: to}
	case moveToggleFuse:
		return move{kind: kind, from: s.rng.IntN(s.n)}
	}
	i := s.rng.IntN(s.n)
	j := i + 1 + s.rng.IntN(window)
	if s.rng.IntN(2) == 0 {
		j = i - 1 - s.rng.IntN(window)
	}
	j = min(max(j, 0), s.n-1)
	if j == i {
		j = (i + 1) % s.n
	}
	return move{kind: kind, from: i, to: j}
}

// usable reports whether a move changes anything (placement moves need
// two devices; swaps two ops).
func (s *searcher) usable(m move) bool {
	switch m.kind {
	case movePlace:
		return s.nd > 1
	case moveSwapPrio, moveSwapFusion:
		return s.n > 1 && m.from != m.to
	}
	return true
}

// lowerBound is a cheap lower bound on the step time after move m, from
// the device loads: no evaluation can come out faster. A placement move
// that puts more parameters on a device than it holds is certain to run
// out of memory; that is reported as oom.
func (s *searcher) lowerBound(m move) (lb float64, oom bool) {
	if m.kind != movePlace || s.p.Objective != optimize.StepTime {
		return 0, false // the bound is on the step time: no filter for another objective
	}
	lb = s.load[m.to] + s.unitTime[m.unit]
	c := s.p.Capacity()
	oom = !s.p.Cost.IgnoresMemory() && s.params[m.to]+s.unitParam[m.unit] > c
	return lb, oom
}

// apply makes move m (applying it twice undoes a swap or a toggle; undo
// a placement move with its reverse).
func (s *searcher) apply(m move) {
	switch m.kind {
	case movePlace:
		for _, v := range s.u.members[m.unit] {
			s.dev[v] = m.to
		}
		s.load[m.from] -= s.unitTime[m.unit]
		s.load[m.to] += s.unitTime[m.unit]
		s.params[m.from] -= s.unitParam[m.unit]
		s.params[m.to] += s.unitParam[m.unit]
	case moveSwapPrio:
		a, b := s.prioOrder[m.from], s.prioOrder[m.to]
		s.prioOrder[m.from], s.prioOrder[m.to] = b, a
		s.prio[a], s.prio[b] = s.prio[b], s.prio[a]
	case moveSwapFusion:
		a, b := s.fuseOrder[m.from], s.fuseOrder[m.to]
		s.fuseOrder[m.from], s.fuseOrder[m.to] = b, a
		if !s.fuseOff[a] {
			s.fuse[a] = s.n - m.to
		}
		if !s.fuseOff[b] {
			s.fuse[b] = s.n - m.from
		}
	case moveToggleFuse:
		v := m.from
		s.fuseOff[v] = !s.fuseOff[v]
		if s.fuseOff[v] {
			s.fuse[v] = -1
		} else {
			s.fuse[v] = s.n - s.position(v)
		}
	}
}

func (s *searcher) undo(m move) {
	if m.kind == movePlace {
		m.from, m.to = m.to, m.from
	}
	s.apply(m)
}

// position is op v's place in the fusion order (a linear scan; toggles
// are rare enough).
func (s *searcher) position(v int) int {
	for pos, u := range s.fuseOrder {
		if int(u) == v {
			return pos
		}
	}
	return -1
}

// snapshot writes the current state into d (whose slices it reuses).
func (s *searcher) snapshot(d *decision.Decision) {
	*d = decision.Decision{Device: d.Device, Priority: d.Priority, Fusion: d.Fusion, Transfer: s.tmpl.Transfer}
	d.Device = append(d.Device[:0], s.dev...)
	if s.prio != nil {
		d.Priority = append(d.Priority[:0], s.prio...)
	} else {
		d.Priority = s.tmpl.Priority
	}
	if s.fuse != nil {
		d.Fusion = append(d.Fusion[:0], s.fuse...)
	} else {
		d.Fusion = s.tmpl.Fusion
	}
}

// evaluateCurrent scores the current state and makes it current.
func (s *searcher) evaluateCurrent(ctx context.Context) error {
	var d decision.Decision
	s.snapshot(&d)
	r, err := s.tr.Evaluate(ctx, d)
	if err != nil {
		return err
	}
	s.cur = r
	return nil
}

// budgetUsed is the fraction of tr's budget used so far (the largest of
// its evaluations', steps' and time's), for annealing schedules.
func budgetUsed(tr *optimize.Tracker) float64 {
	b := tr.Budget()
	st := tr.Stats()
	f := 0.0
	if b.Evaluations > 0 {
		f = max(f, float64(st.Evaluations)/float64(b.Evaluations))
	}
	if b.Steps > 0 {
		f = max(f, float64(st.Steps)/float64(b.Steps))
	}
	if b.Time > 0 {
		f = max(f, float64(st.Elapsed)/float64(b.Time))
	}
	return min(f, 1)
}

// batch holds the decisions and results of one round of candidates.
type batch struct {
	moves []move
	ds    []decision.Decision
	out   []evaluate.Result
	aux   []float64 // per candidate: the method's own number (SA: threshold)
}

func newBatch(size int) *batch {
	return &batch{moves: make([]move, 0, size), ds: make([]decision.Decision, size), out: make([]evaluate.Result, size), aux: make([]float64, 0, size)}
}

// cost is the objective's Cost as a guard against a zero value (empty
// graphs).
func cost(o optimize.Objective, r *evaluate.Result) float64 {
	c := o.Cost(r)
	if c <= 0 || math.IsNaN(c) {
		return math.SmallestNonzeroFloat64
	}
	return c
}
