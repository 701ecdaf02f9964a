package bench

import (
	"math"
	"testing"
)

// TestSetTally works one set by hand: rows off by +5%, -12%, +40% and
// -8% and one refused; predicted 4, mean |error| (5+12+40+8)/4 = 16.25%,
// median (8+12)/2 = 10%, largest 40%, within 10% two (5, 8), within 15%
// three, one told over. Another part's set of the same name is its own.
func TestSetTally(t *testing.T) {
	tl := NewSetTally()
	for _, r := range []struct {
		predicted bool
		err       float64
		fits      bool
	}{{true, 0.05, true}, {true, -0.12, true}, {true, 0.40, false}, {true, -0.08, true}, {false, 0, false}} {
		tl.Add(Validation, "v5.0 MI325X", r.predicted, r.err, r.fits)
	}
	tl.Add(Development, "v5.0 MI325X", true, 0.5, true)
	got := tl.Of(Validation)
	if len(got) != 1 {
		t.Fatalf("sets %+v, want one", got)
	}
	s := got[0]
	if s.Submissions != 5 || s.Predicted != 4 || s.Within10 != 2 || s.Within15 != 3 || s.Over != 1 ||
		math.Abs(s.MeanAbsError-0.1625) > 1e-12 || math.Abs(s.MedianAbsError-0.10) > 1e-12 || math.Abs(s.MaxAbsError-0.40) > 1e-12 {
		t.Errorf("set %+v, want 5 submissions, 4 predicted, mean 0.1625, median 0.10, largest 0.40, 2 and 3 within, 1 over", s)
	}
	if d := tl.Of(Development); len(d) != 1 || d[0].Predicted != 1 {
		t.Errorf("development sets %+v, want its own one row", d)
	}
}
