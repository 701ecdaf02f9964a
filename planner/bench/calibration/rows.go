package calibration

import (
	"math"
	"sync"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/bench"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/published"
)

// A job is one bench row to predict: its plan as placer eval reads it,
// and its measured step (StepSeconds) or tokens a second a GPU.
type job struct {
	name, sweep, part           string
	workload, cluster, strategy string
	codeBase                    string // "": the stack's (CodeBaseOf)
	measured                    float64
	tokens                      bool // measured is tokens a second a GPU
}

// jobs are the bench's rows of part (bench.Development, bench.Validation)
// that placer can write: every measured MLPerf submission bench.Read
// reads (a resubmission of earlier runs, SameLogsAs, judged once, where
// first submitted, as placer report bench judges it)
// reads, and every published sweep's row whose figure is a step or
// tokens a second (an Order sweep's ranks are no figure to be off by),
// less the rows of a known regression of their release (as the regime
// errors leave them out: published.CheckedRow.Regression).
func jobs(part string) ([]job, error) {
	rows, err := bench.Rows()
	if err != nil {
		return nil, err
	}
	var out []job
	for _, r := range rows {
		if bench.PartOf(r.Round, r.Benchmark, r.GPU) != part || !r.Measured() || r.SameLogsAs != "" {
			continue
		}
		rd, err := bench.Read(r)
		if err != nil {
			continue // a row placer cannot write states nothing
		}
		out = append(out, job{name: r.ID, sweep: "MLPerf " + r.Sweep(), part: part, workload: rd.Workload, cluster: rd.Cluster,
			strategy: rd.Strategy, measured: r.StepSeconds})
	}
	for _, sw := range published.Sweeps() {
		if bench.SweepPart(sw.Set) != part || sw.Unit == published.Order {
			continue
		}
		for _, row := range sw.Rows {
			if row.Regression != "" {
				continue
			}
			out = append(out, job{name: sw.Name + ", " + row.Label, sweep: sw.Name, part: part, workload: row.Workload,
				cluster: row.Cluster, strategy: row.Strategy, measured: row.Measured, tokens: sw.Unit == published.TokensPerGPU,
				codeBase: sw.CodeBase()})
		}
	}
	return out, nil
}

// lazy is job j's row: its regime read from its plan, its error
// (placer's predicted step over the measured one, minus 1, as placer
// eval predicts its plan) computed when first needed; !ok where placer
// cannot read the plan.
func lazy(j job) (Lazy, bool) {
	m, err := transformer.Parse(j.workload)
	if err != nil {
		return Lazy{}, false
	}
	p, err := plan.ParsePod(j.cluster)
	if err != nil {
		return Lazy{}, false
	}
	s, err := plan.ParseStrategy(j.strategy)
	if err != nil {
		return Lazy{}, false
	}
	row := Row{Name: j.name, Sweep: j.sweep, Part: j.part, Regime: RegimeOf(m, s, p), Facts: FactsOf(m, s, p)}
	if j.codeBase != "" {
		// A code base placer has no stack of its own for, read on
		// another's layers: its rows are its own code base's.
		row.Regime.CodeBase, row.Facts.CodeBase = j.codeBase, j.codeBase
	}
	return Lazy{Row: row, ErrorOf: func() (float64, bool) {
		// The step as placer eval predicts it (planner.Evaluate), without
		// the memory verdict's replay of the caching allocator, which
		// moves no time (planner.EvaluateCounted).
		pl, err := plan.Resolve(m, s, p)
		if err != nil {
			return 0, false
		}
		q := p
		res := planner.EvaluateCounted(m, pl, &q, nil)
		if !(res.Step > 0) || math.IsInf(res.Step, 0) {
			return 0, false
		}
		// Every error as the step's: a tokens figure's measured step
		// is batch x sequence over GPUs x tokens a second a GPU.
		measured := j.measured
		if j.tokens {
			measured = float64(m.Batch) * float64(m.Seq) / float64(p.GPUs()) / j.measured
		}
		e := res.Step/measured - 1
		return e, !math.IsNaN(e) && !math.IsInf(e, 0)
	}}, true
}

// TableOf is the table of the bench's rows of part, their errors computed
// as the model stands when a stated error first needs them.
func TableOf(part string) (*Table, error) {
	js, err := jobs(part)
	if err != nil {
		return nil, err
	}
	var rows []Lazy
	for _, j := range js {
		if l, ok := lazy(j); ok {
			rows = append(rows, l)
		}
	}
	return NewLazyTable(rows, StatedLevel), nil
}

// RowsOf are the bench's rows of part as placer predicts them now, less
// those it refuses.
func RowsOf(part string) ([]Row, error) {
	t, err := TableOf(part)
	if err != nil {
		return nil, err
	}
	return t.Rows(), nil
}

var devTable struct {
	once  sync.Once
	table *Table
	err   error
}

// Development is the table of the development part's rows, read once
// a process, each row's error computed once, when first needed (the
// model as it stands).
func Development() (*Table, error) {
	devTable.once.Do(func() { devTable.table, devTable.err = TableOf(bench.Development) })
	return devTable.table, devTable.err
}

var devReach struct {
	once sync.Once
	r    *Reach
	err  error
}

// DevelopmentReach is the development part's reach (NewReach), read once
// a process. It needs every development row's error (the widening is
// measured on all of them).
func DevelopmentReach() (*Reach, error) {
	devReach.once.Do(func() {
		t, err := Development()
		if err != nil {
			devReach.err = err
			return
		}
		devReach.r = NewReach(t.Rows(), StatedLevel)
	})
	return devReach.r, devReach.err
}

// For is the error stated beside plan s of model m on pod p, from the
// development part (Development): its regime's, widened where the plan
// has facts no development row shares (Reach.Outside, Widen).
func For(m transformer.Spec, s plan.Strategy, p plan.Pod) (Error, error) {
	t, err := Development()
	if err != nil {
		return Error{}, err
	}
	e := t.ForRegime(RegimeOf(m, s, p))
	if fw := s.Software.Framework(); fw != plan.FrameworkMegatron && e.Regime.Stack == StackMegatron {
		e.Stack = s.Software.Stack + " compiled"
	}
	f := FactsOf(m, s, p)
	if t.covers(f) {
		return e, nil // every fact shared: no row's error beyond the regime's is needed
	}
	r, err := DevelopmentReach()
	if err != nil {
		return Error{}, err
	}
	return Widen(e, r.Outside(f)), nil
}
