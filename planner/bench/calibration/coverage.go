package calibration

import (
	"fmt"
	"math"
	"slices"
)

// Coverage is how many rows fall within the error stated beside them,
// and by which basis the errors were stated.
type Coverage struct {
	Rows   int `json:"rows"`
	Within int `json:"within"`
	// ByBasis counts the rows by the basis of their stated error.
	ByBasis map[string]int `json:"by_basis"`
	// MeanBound is the mean stated error over the rows.
	MeanBound float64 `json:"mean_stated_error"`
}

// Share is Within over Rows (0 where none).
func (c Coverage) Share() float64 {
	if c.Rows == 0 {
		return 0
	}
	return float64(c.Within) / float64(c.Rows)
}

func (c *Coverage) add(e Error, x float64) {
	if c.ByBasis == nil {
		c.ByBasis = map[string]int{}
	}
	c.Rows++
	c.ByBasis[e.Basis]++
	c.MeanBound += e.Bound
	if e.Holds(x) {
		c.Within++
	}
}

func (c *Coverage) done() {
	if c.Rows > 0 {
		c.MeanBound /= float64(c.Rows)
	}
}

// LeaveOneSweepOut is the development part's coverage out of sample:
// each row of dev against the error stated from dev less every row of
// the row's own sweep.
func LeaveOneSweepOut(dev []Row, level float64) Coverage {
	var c Coverage
	tables := map[string]*Table{}
	for _, r := range dev {
		t, ok := tables[r.Sweep]
		if !ok {
			var rest []Row
			for _, x := range dev {
				if x.Sweep != r.Sweep {
					rest = append(rest, x)
				}
			}
			t = NewTable(rest, level)
			tables[r.Sweep] = t
		}
		c.add(t.ForRegime(r.Regime), r.Error)
	}
	c.done()
	return c
}

// Holdout is the coverage of rows (the validation part's) against the
// errors t states (t: the development part's).
func Holdout(t *Table, rows []Row) Coverage {
	return HoldoutReach(t, nil, rows)
}

// HoldoutReach is Holdout with each row's error widened where its facts
// are outside the development part's reach r (nil: not widened), as
// placer states it beside a plan (For).
func HoldoutReach(t *Table, r *Reach, rows []Row) Coverage {
	var c Coverage
	for _, x := range rows {
		e := t.ForRegime(x.Regime)
		if r != nil {
			e = Widen(e, r.Outside(x.Facts))
		}
		c.add(e, x.Error)
	}
	c.done()
	return c
}

// FamilyCoverage is one family left out: its rows, how many fall within
// the bound stated without the family and widened by the widening
// measured without it, and how many within the bound unwidened.
type FamilyCoverage struct {
	Family     string  `json:"family"`
	Rows       int     `json:"rows"`
	Within     int     `json:"within"`
	Unwidened  int     `json:"within_unwidened"`
	Widening   float64 `json:"widening"`
	MeanStated float64 `json:"mean_stated_error"`
}

// WayCoverage is one way of leaving out: the widening of a plan
// outside the bench (FamilyWidening, one for every way), each family's
// coverage, and the median band its rows were stated.
type WayCoverage struct {
	Way          string           `json:"way"`
	Widening     float64          `json:"widening"`
	Rows         int              `json:"rows"`
	Within       int              `json:"within"`
	MedianStated float64          `json:"median_stated_error"`
	Families     []FamilyCoverage `json:"families"`
}

// LeaveFamilyOut is the development part's coverage by each way of
// leaving out: each family's rows against the error stated from the
// other families' rows, widened by the widening measured on those
// other rows alone (FamilyWidening of dev less the family: the family's own
// rows take no part in their band, neither in the regime's bound nor in
// the widening).
func LeaveFamilyOut(dev []Row, level float64) []WayCoverage {
	widening := FamilyWidening(dev, level)
	without := map[string]float64{} // FamilyWidening without a family, by its rows
	var out []WayCoverage
	for wi, w := range Ways {
		wc := WayCoverage{Way: w.Name, Widening: widening}
		var bands []float64
		for _, f := range wayFamilies(dev, wi) {
			rest, them := split(dev, f.rows)
			id := fmt.Sprint(f.rows)
			widen, ok := without[id]
			if !ok {
				widen = FamilyWidening(rest, level)
				without[id] = widen
			}
			t := newBounds(rest, level)
			fc := FamilyCoverage{Family: f.key, Widening: widen}
			for _, r := range them {
				e := t.of(r.Regime)
				fc.Rows++
				fc.MeanStated += e.Bound + widen
				bands = append(bands, e.Bound+widen)
				if e.Rows > 0 && math.Abs(r.Error) <= e.Bound+widen {
					fc.Within++
				}
				if e.Holds(r.Error) {
					fc.Unwidened++
				}
			}
			fc.MeanStated /= float64(fc.Rows)
			wc.Rows += fc.Rows
			wc.Within += fc.Within
			wc.Families = append(wc.Families, fc)
		}
		wc.MedianStated = median(bands)
		out = append(out, wc)
	}
	return out
}

// median is the median of xs (0 where none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
