package optimize

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
)

// DefaultEvaluations is the evaluation budget a search method uses when
// its Settings give no bound at all: REGAL's limit of 5,000 performance
// model evaluations per graph (seeds/regal-iclr2020.txt §5.2).
const DefaultEvaluations = 5000

// Overflow is how far r's devices exceed their memory: the sum over
// devices of max(0, peak/capacity - 1). Zero when everything fits.
func Overflow(r *evaluate.Result) float64 {
	o := 0.0
	for i, p := range r.PeakMemory {
		if i < len(r.Capacity) && r.Capacity[i] > 0 && p > r.Capacity[i] {
			o += float64(p)/float64(r.Capacity[i]) - 1
		}
	}
	return o
}

// Better is StepTime.Better: whether result a is strictly better than b
// under the default objective. Code that has a Problem compares with
// p.Objective.Better (the Tracker does), so that the chosen objective
// rules.
func Better(a, b *evaluate.Result) bool { return StepTime.Better(a, b) }

// Cost is StepTime.Cost (see Objective.Cost); code that has a Problem uses
// p.Objective.Cost.
func Cost(r *evaluate.Result) float64 { return StepTime.Cost(r) }

// ErrStopped is returned by a Tracker's Evaluate and EvaluateBatch when
// the run must stop: the context was cancelled or the budget is spent.
// The caller stops searching and returns Tracker.Result.
var ErrStopped = errors.New("optimize: stopped")

// Tracker keeps the best decision an optimizer has found, counts its
// evaluations and steps, enforces its budget, reports progress, and
// assembles its Result. Optimizers evaluate through it so that they all
// count, stop and break ties the same way. It is not safe for concurrent
// use.
type Tracker struct {
	method string
	p      *Problem
	budget Budget
	seed   uint64
	rec    Recorder
	start  time.Time
	cpu0   time.Duration // ProcessCPU at the start, when Budget.CPU is set

	stats    Stats
	found    bool
	best     decision.Decision
	bestEval evaluate.Result
}

// NewTracker starts the clock for one run of method on p. When s gives no
// bound at all (no evaluations, steps or time), defaultEvals becomes the
// evaluation budget; pass 0 for methods that stop by themselves.
func NewTracker(method string, p *Problem, s *Settings, defaultEvals int) *Tracker {
	t := &Tracker{method: method, p: p, start: time.Now()}
	if s != nil {
		t.budget, t.seed, t.rec = s.Budget, s.Seed, s.Recorder
	}
	if t.budget == (Budget{}) {
		t.budget.Evaluations = defaultEvals
	}
	if t.budget.CPU > 0 {
		t.cpu0 = ProcessCPU()
	}
	t.stats.Status = Converged
	return t
}

// Budget is the budget the run works to (defaults applied).
func (t *Tracker) Budget() Budget { return t.budget }

// Seed is the run's seed.
func (t *Tracker) Seed() uint64 { return t.seed }

// Remaining is the number of evaluations left (math.MaxInt when
// unlimited).
func (t *Tracker) Remaining() int {
	if t.budget.Evaluations <= 0 {
		return math.MaxInt
	}
	return max(0, t.budget.Evaluations-t.stats.Evaluations)
}

// Done reports whether the run must stop: the context is cancelled
// (status Cancelled), the evaluations or steps are used up (BudgetReached)
// or the wall time or CPU time is (TimeUp).
func (t *Tracker) Done(ctx context.Context) bool {
	switch {
	case ctx.Err() != nil:
		t.stats.Status = Cancelled
	case t.budget.Evaluations > 0 && t.stats.Evaluations >= t.budget.Evaluations,
		t.budget.Steps > 0 && t.stats.Steps >= t.budget.Steps:
		t.stats.Status = BudgetReached
	case t.budget.Time > 0 && time.Since(t.start) >= t.budget.Time,
		t.budget.CPU > 0 && ProcessCPU()-t.cpu0 >= t.budget.CPU:
		t.stats.Status = TimeUp
	default:
		return false
	}
	return true
}

// Evaluate scores d with the problem's evaluator, counts it, and keeps it
// (a copy) if it is the best so far. It returns ErrStopped, without
// evaluating, when the run must stop.
func (t *Tracker) Evaluate(ctx context.Context, d decision.Decision) (evaluate.Result, error) {
	if t.Done(ctx) {
		return evaluate.Result{}, ErrStopped
	}
	r, err := t.p.Evaluator.Evaluate(ctx, d)
	if err != nil {
		if ctx.Err() != nil {
			t.stats.Status = Cancelled
			return evaluate.Result{}, ErrStopped
		}
		return evaluate.Result{}, err
	}
	t.stats.Evaluations++
	t.Offer(d, &r)
	return r, nil
}

// EvaluateBatch scores ds in one batch (in parallel where the evaluator
// can), truncated to the evaluations left: it returns how many of ds it
// evaluated (out[:k] hold their results) and keeps the best. It returns
// ErrStopped when it could evaluate none because the run must stop.
func (t *Tracker) EvaluateBatch(ctx context.Context, ds []decision.Decision, out []evaluate.Result) (int, error) {
	if t.Done(ctx) {
		return 0, ErrStopped
	}
	k := min(len(ds), t.Remaining())
	if err := t.p.Evaluator.EvaluateBatch(ctx, ds[:k], out[:k]); err != nil {
		if ctx.Err() != nil {
			t.stats.Status = Cancelled
			return 0, ErrStopped
		}
		return 0, err
	}
	t.stats.Evaluations += k
	for i := 0; i < k; i++ {
		t.Offer(ds[i], &out[i])
	}
	return k, nil
}

// Offer considers a decision scored elsewhere (not counted as an
// evaluation) and keeps a copy if it is the best so far. It reports
// whether it was kept.
func (t *Tracker) Offer(d decision.Decision, r *evaluate.Result) bool {
	if t.found && !t.p.Objective.Better(r, &t.bestEval) {
		return false
	}
	t.found = true
	t.best = d.Clone()
	t.bestEval = r.Clone()
	if t.p.Objective.Valid(r) {
		t.stats.BestStep = r.StepTime
		t.stats.Best = t.p.Objective.Of(r)
	}
	return true
}

// Record counts an evaluation the optimizer made itself (of its starting
// decision, say, ignoring a cancellation so that a result always exists)
// and offers it like Offer.
func (t *Tracker) Record(d decision.Decision, r *evaluate.Result) bool {
	t.stats.Evaluations++
	return t.Offer(d, r)
}

// Best returns the best decision and result so far; ok is false when
// nothing has been evaluated yet. The returned values must not be
// modified.
func (t *Tracker) Best() (d decision.Decision, r *evaluate.Result, ok bool) {
	return t.best, &t.bestEval, t.found
}

// Step counts one iteration of the optimizer's main loop and reports
// progress.
func (t *Tracker) Step() {
	t.stats.Steps++
	if t.rec != nil {
		t.rec.Record(Event{Kind: Step, Method: t.method, Stats: t.Stats()})
	}
}

// Point reports a point of a learned method's curve, whose rewards are
// normalized by refStep, to the run's recorder.
func (t *Tracker) Point(pt CurvePoint, refStep float64) {
	if t.rec != nil {
		t.rec.Record(Event{Kind: Point, Method: t.method, Point: &pt, RefStep: refStep})
	}
}

// Stats returns the statistics so far.
func (t *Tracker) Stats() Stats {
	s := t.stats
	s.Elapsed = time.Since(t.start)
	return s
}

// Result assembles the run's answer: the best decision and its result.
// When nothing was evaluated (the run was cancelled first), fallback is
// evaluated once, ignoring the cancellation, so that a Result always
// carries a complete, scored decision.
func (t *Tracker) Result(ctx context.Context, fallback decision.Decision) (*Result, error) {
	if !t.found {
		r, err := t.p.Evaluator.Evaluate(context.WithoutCancel(ctx), fallback)
		if err != nil {
			return nil, err
		}
		t.stats.Evaluations++
		t.Offer(fallback, &r)
	}
	if ctx.Err() != nil {
		t.stats.Status = Cancelled
	}
	return &Result{Method: t.method, Decision: t.best, Eval: t.bestEval, Stats: t.Stats(), Seed: t.seed}, nil
}
