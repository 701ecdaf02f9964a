package gdp

import (
	"slices"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/nn/graphsage"
)

// tiebreak maps the policy's priority and fusion levels, one per unit,
// back onto ops so that the reference is exactly representable. The
// policy has 16 levels of each, decided per unit, so the reference
// reaches it quantized and unit by unit (a unit takes its first op's
// level), and that decision is not the reference: on trxl2, gp-dfs's
// 64.673 ms became 69.825 ms (TestAnchorIsReference), and a search
// anchored there first had to win that back.
//
// A unit's sampled level is read as a move relative to the reference:
// each op keeps its own reference level shifted by the unit's change
// (sampled level - the unit's reference level), and ties within a level
// go by the op's rank in the reference order. The reference's own levels
// then give back exactly the reference, and a sample's moves lift or
// lower a unit's ops past whole blocks of it. Fusion works the same on
// levels (field + 1); an op whose shifted level is 0 or below never
// initiates a fusion.
type tiebreak struct {
	prio, fuse []tieOp // nil = none
}

// tieOp is one op's tie-break: its rank in the reference order and its
// offset from its unit's reference level.
type tieOp struct{ rank, offset int }

// newTiebreak returns the tie-break of reference decision ref on the
// policy's units nd, with target = policyTarget(ref) (the reference on
// the policy's levels, per op). It is nil when ref has neither
// priorities nor fusion priorities.
func newTiebreak(ref, target decision.Decision, nd *graphsage.Nodes) *tiebreak {
	if ref.Priority == nil && ref.Fusion == nil {
		return nil
	}
	t := &tiebreak{}
	if ref.Priority != nil && target.Priority != nil {
		t.prio = tieOps(ref.Priority, target.Priority, nd)
	}
	if ref.Fusion != nil && target.Fusion != nil {
		t.fuse = tieOps(ref.Fusion, target.Fusion, nd)
	}
	return t
}

// tieOps ranks ref's values and sets each op's level offset from its
// unit's first op (the op whose level Input.WithInitial reads).
func tieOps(ref, levels []int, nd *graphsage.Nodes) []tieOp {
	vals := slices.Clone(ref)
	slices.Sort(vals)
	vals = slices.Compact(vals)
	ops := make([]tieOp, len(ref))
	for op, x := range ref {
		ops[op].rank, _ = slices.BinarySearch(vals, x)
		first := op
		if nd != nil {
			first = int(nd.Members(int(nd.UnitOf[op]))[0])
		}
		ops[op].offset = levels[op] - levels[first]
	}
	return ops
}

// apply returns d (in the policy's action space: Priority levels, Fusion
// levels - 1) with its priorities and fusion priorities, where present,
// mapped onto ops as above; d itself is not changed.
func (t *tiebreak) apply(d decision.Decision) decision.Decision {
	if t == nil {
		return d
	}
	if d.Priority != nil && t.prio != nil {
		n := len(t.prio)
		p := make([]int, len(d.Priority))
		for op, level := range d.Priority {
			o := t.prio[op]
			p[op] = (level+o.offset)*n + o.rank
		}
		d.Priority = p
	}
	if d.Fusion != nil && t.fuse != nil {
		n := len(t.fuse)
		f := make([]int, len(d.Fusion))
		for op, field := range d.Fusion {
			o := t.fuse[op]
			f[op] = -1
			if level := field + 1 + o.offset; level > 0 {
				f[op] = (level-1)*n + o.rank
			}
		}
		d.Fusion = f
	}
	return d
}
