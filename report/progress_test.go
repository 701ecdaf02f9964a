package report

import (
	"bytes"
	"testing"
)

// TestProgressUnit: a plain progress says what its steps count: a
// search's "evaluations" of its budget (or CPU seconds, when that binds
// first and the total changes with it); without a unit, "step".
func TestProgressUnit(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, 300, "search")
	p.StepIn(128, 300, "evaluations", "best 1.000 ms")
	p.StepIn(16, 60, "CPU s", "best 0.900 ms") // within PlainEvery: kept for Finish
	p.Finish()
	if want := "search: 128/300 evaluations: best 1.000 ms\nsearch: 16/60 CPU s: best 0.900 ms\n"; b.String() != want {
		t.Errorf("progress wrote %q, want %q", b.String(), want)
	}
	b.Reset()
	p = NewProgress(&b, 10, "train")
	p.Step(3, "loss 1")
	if want := "train: step 3/10: loss 1\n"; b.String() != want {
		t.Errorf("progress wrote %q, want %q", b.String(), want)
	}
}
