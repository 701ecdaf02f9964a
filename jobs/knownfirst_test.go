package jobs

import (
	"strings"
	"testing"

	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/bench/calibration"
	"github.com/placer/placer/report/plans"
)

// TestKnownFirst: the fastest plan (1.00 s) is outside the bench on its
// code base and states ±30%; of the plans within 30% of it (1.00, 1.10,
// 1.25 s; 1.40 s is not), the 1.25 s plan has no fact outside and is
// the answer, the 1.10 s one (outside, ±20%) next, the fastest last.
// Where the fastest is inside the bench nothing moves.
func TestKnownFirst(t *testing.T) {
	out := []calibration.Outside{{Way: "code base", Says: "no development run in the code base x", Widening: 0.1}}
	plan := func(name string, step, bound float64, outside []calibration.Outside) plans.ScalePlan {
		return plans.ScalePlan{Strategy: name, Result: planner.Result{Step: step},
			StatedError: &calibration.Error{Rows: 10, Bound: bound, Outside: outside}}
	}
	rep := plans.ScaleSearch{Best: plan("a", 1.00, 0.30, out),
		Runners: []plans.ScalePlan{plan("b", 1.10, 0.20, out), plan("c", 1.25, 0.25, nil), plan("d", 1.40, 0.10, nil)}}
	knownFirst(&rep)
	var got []string
	for _, p := range append([]plans.ScalePlan{rep.Best}, rep.Runners...) {
		got = append(got, p.Strategy)
	}
	if strings.Join(got, " ") != "c a b d" {
		t.Errorf("answer then runners %v, want c a b d", got)
	}
	k := rep.Known
	if k == nil || k.Near != 3 || k.Answer != "c" || k.Fastest != "a" || k.Window != 0.30 || len(k.AnswerOutside) != 0 || k.AnswerError != 0.25 {
		t.Fatalf("known %+v, want 3 near, answer c (inside, ±25%%), fastest a", k)
	}
	line := "outside the bench: the fastest plan has no development run in the code base x; of the 3 plans within its stated error ±30.0%, the answer is the one the bench knows best (fewest facts outside, then the narrowest stated error): c (every fact of it inside the bench; stated ±25.0%)\n"
	if got := plans.KnownLine(rep); got != line {
		t.Errorf("line %q, want %q", got, line)
	}
	inside := plans.ScaleSearch{Best: plan("a", 1.00, 0.30, nil), Runners: []plans.ScalePlan{plan("c", 1.05, 0.05, nil)}}
	if knownFirst(&inside); inside.Known != nil || inside.Best.Strategy != "a" {
		t.Errorf("inside the bench: known %+v, best %s; want nil, a", inside.Known, inside.Best.Strategy)
	}
}
