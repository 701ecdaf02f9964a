package grid

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/placer/placer/methods"
	"github.com/placer/placer/optimize"
)

// Budget is a time budget of b: CPU time of this process (all threads;
// optimize.Budget.CPU) if cpu, else wall time. With CPU time each cell
// gets the same computing whatever else runs on the machine; cells run
// one at a time, so the process's CPU time is the cell's.
func Budget(b time.Duration, cpu bool) optimize.Budget {
	if cpu {
		return optimize.Budget{CPU: b}
	}
	return optimize.Budget{Time: b}
}

// BudgetName names time budget b in a cell's file: "60s", or "60s-cpu"
// for CPU time, so that wall-time and CPU-time cells are kept apart.
func BudgetName(b time.Duration, cpu bool) string {
	if cpu {
		return fmt.Sprintf("%gs-cpu", b.Seconds())
	}
	return fmt.Sprintf("%gs", b.Seconds())
}

// Timer measures a run: wall time and this process's CPU time (all
// threads) since its start.
type Timer struct {
	start time.Time
	cpu0  time.Duration
}

// StartTimer starts a Timer.
func StartTimer() Timer { return Timer{cpu0: optimize.ProcessCPU(), start: time.Now()} }

// Wall is the wall time since the start, in seconds.
func (t Timer) Wall() float64 { return time.Since(t.start).Seconds() }

// CPU is the process's CPU time since the start, in seconds.
func (t Timer) CPU() float64 { return (optimize.ProcessCPU() - t.cpu0).Seconds() }

// Run is one method's run in a cell.
type Run struct {
	// Result is the method's (nil when it failed).
	Result *optimize.Result
	// Err is why the method failed, without its name ("" = it did not).
	Err string
	// Wall and CPU are the run's wall time and process CPU time, in
	// seconds.
	Wall, CPU float64
}

// RunMethod makes method m with mo and runs it on p with s, timed.
// progress, if set, is called after each step with the stats so far and
// the run's Timer. The error is the method's construction's, or ctx's
// when ctx ended during the run (an interrupted run is no cell: its
// budget was not spent); a method that fails is Run.Err.
func RunMethod(ctx context.Context, p *optimize.Problem, m string, mo methods.Options, s optimize.Settings, progress func(optimize.Stats, Timer)) (Run, error) {
	opt, err := methods.New(m, mo)
	if err != nil {
		return Run{}, err
	}
	t := StartTimer()
	if progress != nil {
		s.Recorder = optimize.RecorderFunc(func(e optimize.Event) {
			if e.Kind == optimize.Step {
				progress(e.Stats, t)
			}
		})
	}
	res, err := opt.Optimize(ctx, p, &s)
	r := Run{Wall: t.Wall(), CPU: t.CPU()}
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	if err != nil {
		r.Err = strings.TrimPrefix(err.Error(), m+": ")
	} else {
		r.Result = res
	}
	return r, nil
}

// Registered is the methods of names that the registry has, in order: a
// report's default methods, those of other branches left out until they
// are merged.
func Registered(names ...string) []string {
	var ms []string
	for _, m := range names {
		if _, ok := methods.Lookup(m); ok {
			ms = append(ms, m)
		}
	}
	return ms
}

// Axes are the cells of a time-budget grid (equal-time, learned): every
// method on every graph at every budget.
type Axes struct {
	Graphs, Methods []string
	Budgets         []time.Duration
}

// Or is a with its empty axes taken from def, checked: every method
// known, every budget positive.
func (a Axes) Or(name string, def Axes) (Axes, error) {
	if len(a.Graphs) == 0 {
		a.Graphs = def.Graphs
	}
	if len(a.Methods) == 0 {
		a.Methods = def.Methods
	}
	if len(a.Budgets) == 0 {
		a.Budgets = def.Budgets
	}
	if err := methods.Check(a.Methods); err != nil {
		return a, err
	}
	for _, b := range a.Budgets {
		if b <= 0 {
			return a, fmt.Errorf("%s: budget %v: must be positive", name, b)
		}
	}
	return a, nil
}

// Seconds are the budgets in seconds, as the reports list them.
func (a Axes) Seconds() []float64 {
	var s []float64
	for _, b := range a.Budgets {
		s = append(s, b.Seconds())
	}
	return s
}

// Cells are a row's cells, method-major: cell(m, b) for every method and
// budget.
func Cells[F any](a Axes, cell func(m string, b time.Duration) Cell[F]) []Cell[F] {
	var cells []Cell[F]
	for _, m := range a.Methods {
		for _, b := range a.Budgets {
			cells = append(cells, cell(m, b))
		}
	}
	return cells
}
