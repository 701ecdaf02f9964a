package benchreport

import (
	"math"
	"testing"

	"github.com/placer/placer/report"
)

// TestSetTally works one set by hand: rows off by +5%, -12%, +40% and
// -8% and one refused; predicted 4, mean |error| (5+12+40+8)/4 = 16.25%,
// median (8+12)/2 = 10%, largest 40%, within 10% two (5, 8), within 15%
// three, one told over. Another part's set of the same name is its own.
func TestSetTally(t *testing.T) {
	tl := newSetTally()
	for _, br := range []report.BenchRow{{Predicted: 1, Error: 0.05, Fits: true}, {Predicted: 1, Error: -0.12, Fits: true},
		{Predicted: 1, Error: 0.40, Fits: false}, {Predicted: 1, Error: -0.08, Fits: true}, {Refused: "no plan"}} {
		tl.add("validation", "v5.0 MI325X", br)
	}
	tl.add("development", "v5.0 MI325X", report.BenchRow{Predicted: 1, Error: 0.5, Fits: true})
	got := tl.of("validation")
	if len(got) != 1 {
		t.Fatalf("sets %+v, want one", got)
	}
	s := got[0]
	if s.Submissions != 5 || s.Predicted != 4 || s.Within10 != 2 || s.Within15 != 3 || s.Over != 1 ||
		math.Abs(s.MeanAbsError-0.1625) > 1e-12 || math.Abs(s.MedianAbsError-0.10) > 1e-12 || math.Abs(s.MaxAbsError-0.40) > 1e-12 {
		t.Errorf("set %+v, want 5 submissions, 4 predicted, mean 0.1625, median 0.10, largest 0.40, 2 and 3 within, 1 over", s)
	}
	if d := tl.of("development"); len(d) != 1 || d[0].Predicted != 1 {
		t.Errorf("development sets %+v, want its own one row", d)
	}
}
