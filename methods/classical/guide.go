package classical

import (
	"context"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/optimize"
)

// MoveKind is the kind of a move of the anchored searches.
type MoveKind int

// The move kinds, as a Guide sees them.
const (
	MovePlace      MoveKind = aPlace      // a unit to another device
	MovePrioLevel  MoveKind = aPrioLevel  // a unit's priorities up or down 1-2 levels
	MovePrioFine   MoveKind = aPrioFine   // a unit's priorities shifted by 1..32
	MoveFuseLevel  MoveKind = aFuseLevel  // a unit's fusion priorities up or down 1-2 levels
	MoveFuseFine   MoveKind = aFuseFine   // a unit's fusion priorities shifted by 1..32
	MoveFuseToggle MoveKind = aFuseToggle // a unit stops (or starts) initiating fusions
)

// NumMoveKinds is the number of move kinds.
const NumMoveKinds = 6

// Move is one candidate move of an anchored search.
type Move struct {
	Kind     MoveKind
	Unit     int  // the unit it changes (SearchView.Members)
	From, To int  // MovePlace: the unit's device and its new one
	Delta    int  // the level and fine moves: the shift of the unit's values
	Off      bool // MoveFuseToggle: the unit stops initiating fusions (else starts)
}

func (m amove) public() Move {
	return Move{Kind: MoveKind(m.kind), Unit: int(m.unit), From: m.from, To: m.to, Delta: m.delta, Off: m.off}
}

// SearchView is what a Guide reads of an anchored search: its decision
// units and its current state. Its slices belong to the search: read
// them, never change or keep them.
type SearchView struct{ a *anchored }

// Problem is the problem searched.
func (v SearchView) Problem() *optimize.Problem { return v.a.p }

// Members lists each unit's ops.
func (v SearchView) Members() [][]int32 { return v.a.unit.members }

// UnitOf is each op's unit.
func (v SearchView) UnitOf() []int32 { return v.a.unit.unitOf }

// Devices is the number of devices.
func (v SearchView) Devices() int { return v.a.nd }

// Device is each op's current device.
func (v SearchView) Device() []int { return v.a.dev }

// Load is each device's busy-time lower bound under the current placement
// (the sum of its units' UnitTime).
func (v SearchView) Load() []float64 { return v.a.load }

// UnitTime is a unit's busy-time lower bound (its ops' times, fusible ops
// left out when fusion is on).
func (v SearchView) UnitTime(u int) float64 { return v.a.unitTime[u] }

// Current is the current decision's evaluation.
func (v SearchView) Current() *evaluate.Result { return &v.a.cur }

// Decision returns the current decision, complete (a copy).
func (v SearchView) Decision() decision.Decision {
	var d decision.Decision
	v.a.snapshot(&d)
	return v.a.p.Complete(d.Clone())
}

// Anchor is the decision the search started from (its units keep the
// anchor's actions; do not change it).
func (v SearchView) Anchor() decision.Decision { return v.a.tmpl }

// Guide steers an anchored local search (AnchoredLocalSearch.Guide): of
// the candidate moves drawn each round it picks those to evaluate, and it
// sees what each evaluated move gave. A learned guide learns from those
// outcomes; the search itself stays the same walk (take the best of the
// evaluated moves if it is no worse), so a guide that picks at random is
// plain anchored local search.
type Guide interface {
	// Begin is called once, at the anchor, before the first round.
	Begin(ctx context.Context, v SearchView) error
	// Pick appends to pick the indices of the k candidates to evaluate
	// (k <= len(cands)), and returns it. It is called every round.
	Pick(ctx context.Context, v SearchView, cands []Move, k int, pick []int) ([]int, error)
	// Observe sees the round's evaluated moves and their results, after
	// the search moved: taken is the index of the move it made, -1 for
	// none (before is the evaluation the moves were made from).
	Observe(ctx context.Context, v SearchView, moves []Move, res []evaluate.Result, before *evaluate.Result, taken int) error
}

// guided is an anchored local search's Guide and what it reads.
type guided struct {
	guide Guide
	view  SearchView
	k     int
	cands []Move
	moves []Move
}

// pick has the guide choose the round's moves among those drawn: k of
// them, or all when fewer were drawn.
func (g *guided) pick(ctx context.Context, drawn []amove) ([]int, error) {
	g.cands = g.cands[:0]
	for _, m := range drawn {
		g.cands = append(g.cands, m.public())
	}
	return g.guide.Pick(ctx, g.view, g.cands, min(g.k, len(drawn)), nil)
}

// observe passes the round's k evaluated moves to the guide.
func (g *guided) observe(ctx context.Context, b *abatch, k int, before *evaluate.Result, taken int) error {
	g.moves = g.moves[:0]
	for _, m := range b.moves[:k] {
		g.moves = append(g.moves, m.public())
	}
	return g.guide.Observe(ctx, g.view, g.moves, b.out[:k], before, taken)
}
