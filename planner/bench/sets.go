package bench

import (
	"math"
	"slices"
)

// SetFigures is one set (SetOf) of a part's MLPerf rows in aggregate:
// its submissions, those predicted, the mean, median and largest
// |error| of the step, the rows within 10% and 15%, and those that ran
// but are told over memory.
type SetFigures struct {
	Set            string  `json:"set"`
	Submissions    int     `json:"submissions"`
	Predicted      int     `json:"predicted"`
	MeanAbsError   float64 `json:"mean_abs_error"`
	MedianAbsError float64 `json:"median_abs_error"`
	MaxAbsError    float64 `json:"max_abs_error"`
	Within10       int     `json:"within_10pct"`
	Within15       int     `json:"within_15pct"`
	Over           int     `json:"ran_but_told_over"`
}

// SetTally gathers each part's MLPerf rows by set.
type SetTally struct {
	errors map[string][]float64
	sets   map[string]*SetFigures
	order  map[string][]string
}

// NewSetTally is an empty tally.
func NewSetTally() *SetTally {
	return &SetTally{errors: map[string][]float64{}, sets: map[string]*SetFigures{}, order: map[string][]string{}}
}

// Add counts a row of part in set: predicted (its error, whether it
// fits) or, where !predicted, a submission only.
func (t *SetTally) Add(part, set string, predicted bool, err float64, fits bool) {
	key := part + "\x00" + set
	s, ok := t.sets[key]
	if !ok {
		s = &SetFigures{Set: set}
		t.sets[key] = s
		t.order[part] = append(t.order[part], set)
	}
	s.Submissions++
	if !predicted {
		return
	}
	e := math.Abs(err)
	s.Predicted++
	t.errors[key] = append(t.errors[key], e)
	s.MeanAbsError += e
	s.MaxAbsError = max(s.MaxAbsError, e)
	if e <= 0.10 {
		s.Within10++
	}
	if e <= 0.15 {
		s.Within15++
	}
	if !fits {
		s.Over++
	}
}

// Of is part's sets, by name, their means and medians taken.
func (t *SetTally) Of(part string) []SetFigures {
	names := slices.Clone(t.order[part])
	slices.Sort(names)
	var out []SetFigures
	for _, n := range names {
		key := part + "\x00" + n
		s := *t.sets[key]
		if s.Predicted > 0 {
			s.MeanAbsError /= float64(s.Predicted)
			s.MedianAbsError = median(t.errors[key])
		}
		out = append(out, s)
	}
	return out
}

// median is the median of xs (the mean of the middle two of an even
// count).
func median(xs []float64) float64 {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	n := len(ys)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return ys[n/2]
	}
	return (ys[n/2-1] + ys[n/2]) / 2
}
