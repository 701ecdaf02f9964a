package calibration

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// StatedLevel is the quantile of |error| a regime states: 0.9. The
// stated error is the bound most of a regime's runs fall within, not its
// mean (half of a regime's runs fall beyond a mean), and must hold on at
// least 80% of runs it was not computed from: a regime's rows are few
// and runs out of sample differ from them, so an 80th percentile would
// hold on about 80% in sample and less out of it; the 90th leaves that
// margin.
const StatedLevel = 0.9

// Quantile is the level-quantile bound of abs (absolute errors, any
// order) as split conformal prediction takes it: the k-th smallest, k =
// ceil(level x (n+1)), which a new run exchangeable with the n holds
// below with probability at least level (Vovk, Gammerman and Shafer,
// Algorithmic Learning in a Random World, 2005; Lei et al., 2018,
// arXiv 1604.04173). ok is false where n is too few (k > n: at level
// 0.9, fewer than 9 rows).
func Quantile(abs []float64, level float64) (bound float64, ok bool) {
	n := len(abs)
	// The tolerance keeps a product such as 0.9 x 10 (9.000...02 in
	// floating point) at its whole rank.
	k := int(math.Ceil(level*float64(n+1) - 1e-9))
	if n == 0 || k > n {
		return 0, false
	}
	s := slices.Clone(abs)
	slices.Sort(s)
	return s[max(k, 1)-1], true
}

// Row is one bench row as the calibration reads it: its sweep (the
// unit left out together), part, regime and placer's step error
// (predicted step over measured, minus 1).
type Row struct {
	Name   string  `json:"name"`
	Sweep  string  `json:"sweep"`
	Part   string  `json:"part"`
	Regime Regime  `json:"regime"`
	Facts  Facts   `json:"facts"`
	Error  float64 `json:"error"`
}

// The bases of a stated error: the plan's own regime's rows, the
// nearest coarser regime's, or the whole bench's.
const (
	BasisRegime  = "regime"
	BasisNearest = "nearest regime"
	BasisWhole   = "whole bench"
)

// Error is the error placer states beside a figure of a plan of Regime:
// Bound, the StatedLevel quantile of |error| over the Rows development
// rows (of Sweeps sweeps) of From, the plan's own regime or the nearest
// coarser one with enough rows, or the whole bench (Basis).
type Error struct {
	Regime Regime  `json:"regime"`
	From   Regime  `json:"from"`
	Basis  string  `json:"basis"`
	Level  float64 `json:"quantile"`
	Rows   int     `json:"rows"`
	Sweeps int     `json:"sweeps"`
	Bound  float64 `json:"error"`
	// Outside are the plan's facts no development row shares (Reach),
	// and Widened what Bound adds for them: the widening, the error
	// measured on families left out (FamilyWidening; 0 and none
	// where the bench covers every fact of the plan).
	Outside []Outside `json:"outside,omitempty"`
	Widened float64   `json:"widened,omitempty"`
	// Stack is the plan's own stack where its regime's stack fact
	// (StackMegatron: fused kernels) was measured on another code base's
	// rows: a torchtitan plan compiled ("torchtitan-0.2 compiled") is
	// in the regime of Megatron-Core's fused kernels, and the line says
	// so rather than naming Megatron-Core as its stack ("": the plan's
	// stack is the regime's).
	Stack string `json:"plan_stack,omitempty"`
	// Pairs is how many pairs of From's rows ran in one sweep, and
	// PairMean the mean |error| of the ratio of their steps, predicted
	// over measured (Paired): the error of a difference between two
	// plans, which is what tells two plans of one search apart. 0 where
	// no two of From's rows share a sweep.
	Pairs    int     `json:"pairs,omitempty"`
	PairMean float64 `json:"pair_mean_abs_error,omitempty"`
}

// String is the error as the step's line carries it: "±12% (90th
// percentile of |error| on 33 development rows of 6 sweeps of its
// regime: dense, Hopper, ...)".
func (e Error) String() string {
	if e.Rows == 0 {
		return "no stated error: the bench's development part has no row to compute it from"
	}
	of := "its regime, " + e.From.String()
	switch e.Basis {
	case BasisNearest:
		of = fmt.Sprintf("the nearest regime, %s (its own, %s, has too few)", e.From, e.Regime)
	case BasisWhole:
		of = fmt.Sprintf("the whole bench (its regime, %s, and every coarser one have too few)", e.Regime)
	}
	if e.Stack != "" {
		of += fmt.Sprintf("; the plan runs %s, in this regime for its fused kernels, not on Megatron-Core", e.Stack)
	}
	return fmt.Sprintf("±%s stated error (the %.0fth percentile of |error| on %d development rows of %d sweeps of %s%s)",
		e.BoundText(), 100*e.Level, e.Rows, e.Sweeps, of, outsideText(e))
}

// BasisText names the rows e is measured on: "its regime, R", "the
// nearest regime, R" or "the whole bench".
func (e Error) BasisText() string {
	switch e.Basis {
	case BasisRegime:
		return "its regime, " + e.From.String()
	case BasisNearest:
		return "the nearest regime, " + e.From.String()
	}
	return "the whole bench"
}

// BoundText is the bound as a whole percent ("12%").
func (e Error) BoundText() string { return fmt.Sprintf("%.0f%%", 100*e.Bound) }

// Short is the error as a table's cell holds it: "±12% regime",
// "±18% nearest", "±20% whole".
func (e Error) Short() string {
	if e.Rows == 0 {
		return "none"
	}
	word := map[string]string{BasisRegime: "regime", BasisNearest: "nearest", BasisWhole: "whole"}[e.Basis]
	return "±" + e.BoundText() + " " + word
}

// Holds says a row of error x is within e.
func (e Error) Holds(x float64) bool { return e.Rows > 0 && math.Abs(x) <= e.Bound }

// Table states errors from rows (the development part's). A row's
// error may be computed only when a stated error needs it (Lazy): the
// level a regime's error comes from is chosen by how many rows each
// level holds, which their regimes alone say.
type Table struct {
	rows  []*entry
	level float64
	known bool // every row's error known (NewTable): none to compute
}

// entry is a row whose error is computed once, when first needed
// (errorOf: !ok where placer refuses the row).
type entry struct {
	Row
	once    sync.Once
	errorOf func() (float64, bool)
	ok      bool
}

func (e *entry) get() bool {
	e.once.Do(func() { e.Error, e.ok = e.errorOf() })
	return e.ok
}

// NewTable is the table of rows, their errors known, at level.
func NewTable(rows []Row, level float64) *Table {
	t := &Table{level: level, known: true}
	for _, r := range rows {
		x := r.Error
		t.rows = append(t.rows, &entry{Row: r, errorOf: func() (float64, bool) { return x, true }})
	}
	return t
}

// Lazy is a row whose regime is known and whose error errorOf computes
// (!ok: placer refuses the row, which then states nothing).
type Lazy struct {
	Row
	ErrorOf func() (float64, bool)
}

// NewLazyTable is the table of rows whose errors are computed when a
// stated error first needs them, at level.
func NewLazyTable(rows []Lazy, level float64) *Table {
	t := &Table{level: level}
	for _, r := range rows {
		t.rows = append(t.rows, &entry{Row: r.Row, errorOf: r.ErrorOf})
	}
	return t
}

// Rows are the rows the table states its errors from, every error
// computed (on every core), less the rows placer refuses.
func (t *Table) Rows() []Row {
	compute(t.rows)
	var out []Row
	for _, e := range t.rows {
		if e.get() {
			out = append(out, e.Row)
		}
	}
	return out
}

// compute computes the errors of es on every core (each stands alone).
func compute(es []*entry) {
	next := make(chan *entry)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(es), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range next {
				e.get()
			}
		}()
	}
	for _, e := range es {
		next <- e
	}
	close(next)
	wg.Wait()
}

// ForRegime is the error stated beside a plan of regime g: the first of
// g.Levels whose rows give the quantile (Quantile's ok), with the error
// of a difference between two of its rows (Paired). Only the rows of
// the levels tried are computed.
func (t *Table) ForRegime(g Regime) Error {
	e, in := t.bound(g)
	if in != nil {
		e.Pairs, e.PairMean = Paired(in)
	}
	return e
}

// bound is ForRegime less the error of a difference, and the rows of the
// level it stated from (nil: none).
func (t *Table) bound(g Regime) (Error, []*entry) {
	for i, l := range g.Levels() {
		var in []*entry
		for _, e := range t.rows {
			if l.Contains(e.Regime) {
				in = append(in, e)
			}
		}
		if _, ok := Quantile(make([]float64, len(in)), t.level); !ok || l.CodeBase != "" && len(in) < OwnCodeBaseRows {
			continue // too few even were every row predicted
		}
		if !t.known {
			compute(in)
		}
		var abs []float64
		sweeps := map[string]bool{}
		for _, e := range in {
			if e.get() {
				abs = append(abs, math.Abs(e.Error))
				sweeps[e.Sweep] = true
			}
		}
		b, ok := Quantile(abs, t.level)
		if !ok || l.CodeBase != "" && len(abs) < OwnCodeBaseRows {
			continue
		}
		basis := BasisNearest
		switch {
		case i == 0:
			basis = BasisRegime
		case l.Whole():
			basis = BasisWhole
		}
		return Error{Regime: g, From: l, Basis: basis, Level: t.level, Rows: len(abs), Sweeps: len(sweeps), Bound: b}, in
	}
	return Error{Regime: g, Level: t.level}, nil
}

// Paired is the error of a difference between two runs of one sweep:
// over every pair (a, b) of es's rows that placer predicts and that ran
// in one sweep, the mean of |(1 + error_a) / (1 + error_b) - 1|, the
// ratio of their predicted steps over the ratio of their measured ones,
// less 1, taken both ways round (a pair counts once, its larger
// |error|). A sweep runs one model on one code base under several plans
// or scales, as a search weighs plans against each other, so this is
// the error that decides whether placer can tell two plans apart; it is
// measured, like the stated error, on the development part alone.
func Paired(es []*entry) (pairs int, mean float64) {
	by := map[string][]float64{}
	var order []string
	for _, e := range es {
		if !e.get() {
			continue
		}
		if _, ok := by[e.Sweep]; !ok {
			order = append(order, e.Sweep)
		}
		by[e.Sweep] = append(by[e.Sweep], e.Error)
	}
	for _, sw := range order {
		xs := by[sw]
		for i := range xs {
			for j := i + 1; j < len(xs); j++ {
				a, b := 1+xs[i], 1+xs[j]
				mean += max(math.Abs(a/b-1), math.Abs(b/a-1))
				pairs++
			}
		}
	}
	if pairs > 0 {
		mean /= float64(pairs)
	}
	return pairs, mean
}

// covers says every way's family of f has a development row (the
// table's rows, their facts known without their errors).
func (t *Table) covers(f Facts) bool {
	for _, w := range Ways {
		if !slices.ContainsFunc(t.rows, func(e *entry) bool { return w.Key(e.Facts) == w.Key(f) }) {
			return false
		}
	}
	return true
}

// Outside is a plan's facts that no development row shares, each by the
// way it is outside on, with the widening (FamilyWidening, one for every way).
type Outside struct {
	Way      string  `json:"way"`
	Says     string  `json:"says"`
	Widening float64 `json:"widening"`
}

// Widen is e widened for a plan outside the bench by out: its bound
// plus the largest widening of the ways it is outside on (each the
// same, FamilyWidening), each named.
func Widen(e Error, out []Outside) Error {
	if len(out) == 0 || e.Rows == 0 {
		return e
	}
	e.Outside = slices.Clone(out)
	most := 0.0
	for _, o := range out {
		most = max(most, o.Widening)
	}
	e.Widened = most
	e.Bound += most
	return e
}

// outsideText is the facts a widened error names, for its line: "; no
// development run on a Grace host; widened by 14 points, the error
// measured on families left out".
func outsideText(e Error) string {
	if len(e.Outside) == 0 {
		return ""
	}
	var says []string
	for _, o := range e.Outside {
		says = append(says, o.Says)
	}
	return fmt.Sprintf("; outside the bench: %s; widened by %.0f points, the error measured on families left out", strings.Join(says, ", "), 100*e.Widened)
}
