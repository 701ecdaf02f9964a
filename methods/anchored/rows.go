package anchored

import (
	"time"

	"github.com/placer/placer/optimize"
)

// Row is one row of a search's table: a method's (or a composition's)
// result on the problem.
type Row struct {
	Name string
	// Result is nil when the method could not run here (Err says why:
	// classical.ErrNoExpert, classical.ErrNoBatch, or the method's own
	// error).
	*optimize.Result
	Err error
	// Elapsed is the wall time the row took (the table's search time).
	Elapsed time.Duration
}

// Best is the row of the best valid result under objective o, the first
// on ties; among every row when strategies is set, else among the
// single-replica decisions only (what a search can start from: its moves
// change one replica's placement on all the problem's GPUs). ok is false
// when no result is valid.
func Best(o optimize.Objective, rows []Row, strategies bool) (best Row, ok bool) {
	for _, r := range rows {
		if r.Result != nil && (strategies || r.Decision.Strategy.IsZero()) && o.Valid(&r.Eval) && (!ok || o.Of(&r.Eval) < o.Of(&best.Eval)) {
			best, ok = r, true
		}
	}
	return best, ok
}

// Results are the rows' results by name (nil for a row without one).
func Results(rows []Row) map[string]*optimize.Result {
	m := make(map[string]*optimize.Result, len(rows))
	for _, r := range rows {
		m[r.Name] = r.Result
	}
	return m
}

// record tells rec (if not nil) that row is done.
func record(rec optimize.Recorder, row Row) {
	if rec != nil {
		rec.Record(optimize.Event{Kind: optimize.Done, Method: row.Name, Result: row.Result, Err: row.Err, Elapsed: row.Elapsed})
	}
}
