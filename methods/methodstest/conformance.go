package methodstest

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/optimize"
)

// Case is one problem of the conformance suite.
type Case struct {
	Name    string
	Problem *optimize.Problem
}

// StandardCases are the suite's own problems: random layered DAGs on 1,
// 2 and 4 devices (one with measured op times, one whose memory is tight
// enough that a single device runs out), independent chains, and the
// memory-bound graph.
func StandardCases() ([]Case, error) {
	var cs []Case
	add := func(name string, p *optimize.Problem, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		cs = append(cs, Case{Name: name, Problem: p})
		return nil
	}
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 120, Width: 8, Seed: 1})
	p, err := NewProblem(g, 2, 0)
	if err := add("layered-120/2gpu", p, err); err != nil {
		return nil, err
	}
	g = graphtest.LayeredDAG(graphtest.Layered{Ops: 200, Width: 10, Seed: 2, Measured: true})
	p, err = NewProblem(g, 4, 0)
	if err := add("layered-200-measured/4gpu", p, err); err != nil {
		return nil, err
	}
	// Memory for about 40% of the parameters per device: one device is
	// out of memory, a spread placement fits.
	g = graphtest.LayeredDAG(graphtest.Layered{Ops: 160, Width: 8, Seed: 3})
	p, err = NewProblem(g, 4, g.Stats().ParamBytes*2/5)
	if err := add("layered-160-tight/4gpu", p, err); err != nil {
		return nil, err
	}
	p, err = NewProblem(graphtest.Chains(2, 6, 1e-3, 256), 2, 0)
	if err := add("chains-2x6/2gpu", p, err); err != nil {
		return nil, err
	}
	p, err = NewProblem(graphtest.LayeredDAG(graphtest.Layered{Ops: 60, Width: 6, Seed: 4}), 1, 0)
	if err := add("layered-60/1gpu", p, err); err != nil {
		return nil, err
	}
	mg, capacity := graphtest.MemoryBound(2)
	p, err = NewProblem(mg, 2, capacity)
	if err := add("memory-bound/2gpu", p, err); err != nil {
		return nil, err
	}
	return cs, nil
}

// Check verifies one result of method name on p under budget b: the
// decision fits the graph and cluster, honours co-location and the
// problem's tasks (the parts the method may not change are the problem's
// Base), its reported evaluation is what the evaluator says, it is out of
// memory only if it says so, and the run kept to its evaluation and step
// budget.
func Check(t testing.TB, p *optimize.Problem, res *optimize.Result, b optimize.Budget) {
	t.Helper()
	if res == nil {
		t.Fatal("nil result")
	}
	g := p.Graph
	d := res.Decision
	if err := d.Validate(g, p.Devices()); err != nil {
		t.Fatalf("invalid decision: %v", err)
	}
	if n := decision.ColocationViolations(g, d.Device); n != 0 {
		t.Errorf("%d ops away from their co-location group", n)
	}
	r, err := p.Evaluator.Evaluate(context.Background(), d)
	if err != nil {
		t.Fatalf("re-evaluating the decision: %v", err)
	}
	if !Close(r.StepTime, res.Eval.StepTime) || r.OOM != res.Eval.OOM {
		t.Errorf("reported step %g (OOM %v), evaluator says %g (OOM %v)", res.Eval.StepTime, res.Eval.OOM, r.StepTime, r.OOM)
	}
	if !r.OOM && !p.Cost.IgnoresMemory() {
		for k, peak := range r.PeakMemory {
			if peak > r.Capacity[k] {
				t.Errorf("device %d peaks at %d bytes over its %d without OOM", k, peak, r.Capacity[k])
			}
		}
	}
	tasks := p.EffectiveTasks()
	if !tasks.Placement {
		want := p.Base.Device
		if want == nil {
			want = decision.Single(g)
		}
		if !reflect.DeepEqual(d.Device, want) {
			t.Errorf("placement changed though the tasks are %s", tasks)
		}
	}
	if !tasks.Scheduling && !reflect.DeepEqual(d.Priority, p.Base.Priority) {
		t.Errorf("priorities changed though the tasks are %s", tasks)
	}
	if !tasks.Scheduling && !reflect.DeepEqual(d.Transfer, p.Base.Transfer) {
		t.Errorf("transfer priorities changed though the tasks are %s", tasks)
	}
	if !tasks.Fusion && !reflect.DeepEqual(d.Fusion, p.Base.Fusion) {
		t.Errorf("fusion changed though the tasks are %s", tasks)
	}
	if b.Evaluations > 0 && res.Stats.Evaluations > max(b.Evaluations, 1) {
		t.Errorf("%d evaluations, budget %d", res.Stats.Evaluations, b.Evaluations)
	}
	if b.Steps > 0 && res.Stats.Steps > b.Steps {
		t.Errorf("%d steps, budget %d", res.Stats.Steps, b.Steps)
	}
	if res.Stats.Evaluations < 1 {
		t.Errorf("no evaluation reported")
	}
	if res.Eval.StepTime <= 0 {
		t.Errorf("step time %g", res.Eval.StepTime)
	}
}

// Factory makes a fresh optimizer for each run of the suite.
type Factory func() (optimize.Optimizer, error)

// Run is the conformance suite of the method called name, made by newOpt:
// on every case it must return a checked result (Check), the same result
// twice for the same seed, a checked result with status Cancelled when its
// context is cancelled before it starts, and keep Base's placement when
// asked for scheduling and fusion only (and Base's schedule and fusion
// when asked for placement only). s gives the budget (its Seed is used as
// is).
func Run(t *testing.T, name string, newOpt Factory, cases []Case, s optimize.Settings) {
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			p := c.Problem
			res := optimizeOnce(t, name, newOpt, p, s, context.Background())
			Check(t, p, res, s.Budget)
			again := optimizeOnce(t, name, newOpt, p, s, context.Background())
			if !reflect.DeepEqual(res.Decision, again.Decision) {
				t.Errorf("same seed, different decisions (steps %g and %g)", res.Eval.StepTime, again.Eval.StepTime)
			}
			if res.Method != name {
				t.Errorf("result names method %q", res.Method)
			}
		})
	}
	if len(cases) == 0 {
		return
	}
	p := cases[0].Problem
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res := optimizeOnce(t, name, newOpt, p, s, ctx)
		Check(t, p, res, s.Budget)
		if res.Stats.Status != optimize.Cancelled {
			t.Errorf("status %v, want cancelled", res.Stats.Status)
		}
	})
	t.Run("tasks", func(t *testing.T) {
		q := *p
		q.Tasks = optimize.Tasks{Scheduling: true, Fusion: true}
		q.Base = decision.Decision{Device: decision.RoundRobin(p.Graph, p.Devices())}
		res := optimizeOnce(t, name, newOpt, &q, s, context.Background())
		Check(t, &q, res, s.Budget)
		q.Tasks = optimize.Tasks{Placement: true}
		q.Base = decision.Decision{Priority: make([]int, p.Graph.NumOps()), Fusion: decision.TopologicalFusion(p.Graph)}
		res = optimizeOnce(t, name, newOpt, &q, s, context.Background())
		Check(t, &q, res, s.Budget)
	})
}

func optimizeOnce(t *testing.T, name string, newOpt Factory, p *optimize.Problem, s optimize.Settings, ctx context.Context) *optimize.Result {
	t.Helper()
	o, err := newOpt()
	if err != nil {
		t.Fatal(err)
	}
	if o.Name() != name {
		t.Errorf("optimizer registered as %q calls itself %q", name, o.Name())
	}
	res, err := o.Optimize(ctx, p, &s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}
