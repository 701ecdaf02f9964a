package optimize_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

func TestBetterAndCost(t *testing.T) {
	caps := []int64{100, 100}
	valid := evaluate.Result{StepTime: 2, PeakMemory: []int64{50, 60}, Capacity: caps}
	fast := evaluate.Result{StepTime: 1, PeakMemory: []int64{50, 60}, Capacity: caps}
	oom := evaluate.Result{StepTime: 0.5, PeakMemory: []int64{150, 60}, Capacity: caps, OOM: true}
	worseOOM := evaluate.Result{StepTime: 0.5, PeakMemory: []int64{250, 60}, Capacity: caps, OOM: true}
	switch {
	case !optimize.Better(&fast, &valid):
		t.Error("shorter step not better")
	case !optimize.Better(&valid, &oom):
		t.Error("invalid beats valid")
	case !optimize.Better(&oom, &worseOOM):
		t.Error("less overflow not better")
	case optimize.Better(&valid, &valid):
		t.Error("a result better than itself")
	}
	if optimize.Overflow(&oom) != 0.5 || optimize.Overflow(&valid) != 0 {
		t.Errorf("overflow %g %g", optimize.Overflow(&oom), optimize.Overflow(&valid))
	}
	if optimize.Cost(&valid) != 2 || optimize.Cost(&oom) != 0.5*(2+5) {
		t.Errorf("cost %g %g", optimize.Cost(&valid), optimize.Cost(&oom))
	}
}

func TestTrackerBudgetAndBest(t *testing.T) {
	g := graphtest.Chains(2, 3, 1e-3, 8)
	p, err := methodstest.NewProblem(g, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	tr := optimize.NewTracker("test", p, nil, 3)
	if tr.Budget().Evaluations != 3 || tr.Remaining() != 3 {
		t.Fatalf("budget %+v", tr.Budget())
	}
	single := decision.Decision{Device: decision.Single(g)}
	split := decision.Decision{Device: []int{0, 0, 0, 1, 1, 1}}
	ds := []decision.Decision{single, split, single, single}
	out := make([]evaluate.Result, len(ds))
	k, err := tr.EvaluateBatch(context.Background(), ds, out)
	if err != nil || k != 3 {
		t.Fatalf("evaluated %d: %v", k, err)
	}
	if _, err := tr.Evaluate(context.Background(), single); !errors.Is(err, optimize.ErrStopped) {
		t.Errorf("over budget: %v", err)
	}
	res, err := tr.Result(context.Background(), single)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.Status != optimize.BudgetReached || res.Stats.Evaluations != 3 || res.Decision.Device[3] != 1 {
		t.Errorf("result %+v", res.Stats)
	}
	// Time and cancellation.
	tr = optimize.NewTracker("test", p, &optimize.Settings{Budget: optimize.Budget{Time: time.Nanosecond}}, 0)
	time.Sleep(time.Millisecond)
	if !tr.Done(context.Background()) || tr.Stats().Status != optimize.TimeUp {
		t.Error("time budget not enforced")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr = optimize.NewTracker("test", p, nil, 0)
	res, err = tr.Result(ctx, single)
	if err != nil || res.Stats.Status != optimize.Cancelled || res.Stats.Evaluations != 1 {
		t.Errorf("cancelled result %+v, %v", res, err)
	}
}

// TestTrackerCPUBudget: a CPU-time budget ends a run that burns CPU, and
// not one that only waits.
func TestTrackerCPUBudget(t *testing.T) {
	idle := optimize.NewTracker("idle", nil, &optimize.Settings{Budget: optimize.Budget{CPU: time.Second}}, 0)
	time.Sleep(150 * time.Millisecond)
	if idle.Done(context.Background()) {
		t.Errorf("done after 150 ms of sleep with a 1 s CPU budget")
	}
	busy := optimize.NewTracker("busy", nil, &optimize.Settings{Budget: optimize.Budget{CPU: 30 * time.Millisecond}}, 0)
	x, deadline := 1.0, time.Now().Add(10*time.Second)
	for !busy.Done(context.Background()) {
		for range 100000 {
			x = x*1.0000001 + 1e-9
		}
		if time.Now().After(deadline) {
			t.Fatalf("not done after 10 s of spinning with a 30 ms CPU budget (x = %v)", x)
		}
	}
	if s := busy.Stats().Status; s != optimize.TimeUp {
		t.Errorf("status %v, want %v", s, optimize.TimeUp)
	}
}
