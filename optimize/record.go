package optimize

import "time"

// Recorder sees a run's progress: the one channel every optimizer reports
// through (Settings.Recorder), as gonum's optimize.Recorder. Record is
// called from the optimizer's goroutines (a composed search's parts may run
// at once): an implementation that keeps state must lock, and must be
// quick.
type Recorder interface {
	Record(Event)
}

// RecorderFunc is a function as a Recorder.
type RecorderFunc func(Event)

// Record calls f.
func (f RecorderFunc) Record(e Event) { f(e) }

// EventKind says what an Event reports.
type EventKind int

// The kinds of event.
const (
	// Step: a step of the method's main loop ended; Stats are the run's so
	// far.
	Step EventKind = iota
	// Point: a learned method's step ended; Point is its learning curve's
	// point and RefStep the step time its rewards are normalized by.
	Point
	// Done: a method finished (a row of a composed search's table):
	// Result is its answer, nil when it could not run (Err says why), and
	// Elapsed its wall time.
	Done
	// Share: a composed search's method is about to run on Budget, its
	// share of the search's budget (the rest goes to other rows), so that
	// progress counts against what it will spend.
	Share
)

func (k EventKind) String() string {
	return [...]string{"step", "point", "done", "share"}[k]
}

// Event is one report of a run's progress.
type Event struct {
	Kind EventKind
	// Method is what the event is about: the optimizer's name, or a part of
	// a composed search (a row of its table).
	Method string

	Stats   Stats       // Step
	Point   *CurvePoint // Point
	RefStep float64     // Point

	Result  *Result       // Done
	Err     error         // Done
	Elapsed time.Duration // Done

	Budget Budget // Budget
}

// Record sends e to s's recorder, if s has one.
func (s *Settings) Record(e Event) {
	if s != nil && s.Recorder != nil {
		s.Recorder.Record(e)
	}
}
