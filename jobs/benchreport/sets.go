package benchreport

import (
	"math"
	"slices"

	"github.com/placer/placer/report"
)

// setTally gathers each part's MLPerf rows by set (bench.SetOf), in the
// order the sets are first met.
type setTally struct {
	order  map[string][]string
	errors map[string][]float64
	sets   map[string]*report.BenchMLPerfSet
}

func newSetTally() *setTally {
	return &setTally{order: map[string][]string{}, errors: map[string][]float64{}, sets: map[string]*report.BenchMLPerfSet{}}
}

// add counts row br of part in set (a refused or unmeasured row as a
// submission only).
func (t *setTally) add(part, set string, br report.BenchRow) {
	key := part + "\x00" + set
	s, ok := t.sets[key]
	if !ok {
		s = &report.BenchMLPerfSet{Set: set}
		t.sets[key] = s
		t.order[part] = append(t.order[part], set)
	}
	s.Submissions++
	if br.Refused != "" || br.Predicted <= 0 {
		return
	}
	e := math.Abs(br.Error)
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
	if !br.Fits {
		s.Over++
	}
}

// of is part's sets, sorted by name, their means and medians taken.
func (t *setTally) of(part string) []report.BenchMLPerfSet {
	names := slices.Clone(t.order[part])
	slices.Sort(names)
	var out []report.BenchMLPerfSet
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
