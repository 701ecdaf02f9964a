package calibration

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// excess is how far |x| is beyond the bound e states (0 within it).
func excess(e Error, x float64) float64 {
	if e.Rows == 0 {
		return math.Abs(x)
	}
	return max(0, math.Abs(x)-e.Bound)
}

// needed is the widening one family's rows needed, its excesses ex
// over the bound stated without it: their level quantile, or where the
// family has too few rows for it, the largest.
func needed(ex []float64, level float64) float64 {
	if b, ok := Quantile(ex, level); ok {
		return b
	}
	return slices.Max(append([]float64{0}, ex...))
}

// A family is the rows (indices) of one way's one fact.
type family struct {
	way  int
	key  string
	rows []int
}

// familiesOf are the families of every way among rows, in Ways' order
// and by key, each distinct set of rows once (nanotron's rows are the
// code base way's family "nanotron" and the kind x code base way's
// "dense/nanotron": one family, counted once), less a family of every
// row (left out, nothing is left to state its bound).
func familiesOf(rows []Row) []family {
	var out []family
	seen := map[string]bool{}
	for wi := range Ways {
		for _, f := range wayFamilies(rows, wi) {
			if id := fmt.Sprint(f.rows); !seen[id] && len(f.rows) < len(rows) {
				seen[id] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// split is rows less those at the indices in, and those.
func split(rows []Row, in []int) (rest, them []Row) {
	at := map[int]bool{}
	for _, i := range in {
		at[i] = true
	}
	for i, r := range rows {
		if at[i] {
			them = append(them, r)
		} else {
			rest = append(rest, r)
		}
	}
	return rest, them
}

// familyNeed is the widening family f's rows needed beyond the bound
// the other rows state (needed: the level quantile of their excesses,
// the largest where they are few); !ok where the other rows state no
// bound for any of them.
func familyNeed(rows []Row, f family, level float64) (float64, bool) {
	rest, them := split(rows, f.rows)
	t := newBounds(rest, level)
	var ex []float64
	for _, r := range them {
		if e := t.of(r.Regime); e.Rows > 0 {
			ex = append(ex, excess(e, r.Error))
		}
	}
	if len(ex) == 0 {
		return 0, false
	}
	return needed(ex, level), true
}

// FamilyWidening is the error measured on families left out: each family of
// every way among rows (each distinct set of rows once) left out in
// turn, the widening its rows needed beyond the bound stated from the
// other rows (familyNeed), and of these widenings their level quantile
// over the families (Quantile: the k-th smallest of n, k = ceil(level x
// (n+1))), the largest where the families are too few for it. One rule
// for every way: a way holds two to thirteen families, too few for a
// quantile of its own (with nine code bases the 90th percentile of
// eight left out is their largest), so the widening is drawn, as a
// regime with too few rows draws its error from a coarser one, from
// every way's families together. A plan outside the bench on any way
// states its regime's bound plus this.
func FamilyWidening(rows []Row, level float64) float64 {
	var needs []float64
	for _, f := range familiesOf(rows) {
		if n, ok := familyNeed(rows, f, level); ok {
			needs = append(needs, n)
		}
	}
	return needed(needs, level)
}

// wayFamilies are way wi's families among rows, by key.
func wayFamilies(rows []Row, wi int) []family {
	by := map[string][]int{}
	for i, r := range rows {
		k := Ways[wi].Key(r.Facts)
		by[k] = append(by[k], i)
	}
	out := make([]family, 0, len(by))
	for k, idx := range by {
		out = append(out, family{way: wi, key: k, rows: idx})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// bounds are a table's bounds (Table.bound: no error of a difference),
// each regime's stated once.
type bounds struct {
	t  *Table
	by map[Regime]Error
}

func newBounds(rows []Row, level float64) *bounds {
	return &bounds{t: NewTable(rows, level), by: map[Regime]Error{}}
}

func (b *bounds) of(g Regime) Error {
	e, ok := b.by[g]
	if !ok {
		e, _ = b.t.bound(g)
		b.by[g] = e
	}
	return e
}

// Reach is the development part's reach: the families each way holds
// and the widening of a plan outside them (FamilyWidening).
type Reach struct {
	families []map[string]bool
	widening float64
}

// NewReach is the reach of dev's rows (their errors known) at level.
func NewReach(dev []Row, level float64) *Reach {
	r := &Reach{widening: FamilyWidening(dev, level)}
	for _, w := range Ways {
		fams := map[string]bool{}
		for _, x := range dev {
			fams[w.Key(x.Facts)] = true
		}
		r.families = append(r.families, fams)
	}
	return r
}

// Outside is the ways plan facts f is outside the bench on ("no
// development run on a Grace host"), in Ways' order. A pair is named
// only where each of its facts is inside alone.
func (r *Reach) Outside(f Facts) []Outside {
	var out []Outside
	outside := make([]bool, len(Ways))
	for i, w := range Ways {
		outside[i] = !r.families[i][w.Key(f)]
		if !outside[i] || slices.ContainsFunc(w.Of, func(j int) bool { return outside[j] }) {
			continue
		}
		out = append(out, Outside{Way: w.Name, Says: "no development run " + w.Says(f), Widening: r.widening})
	}
	return out
}
