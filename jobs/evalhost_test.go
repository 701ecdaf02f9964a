package jobs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs/inputs"
)

// TestEvalHost: placer eval --host --dispatch 1ms on the MLP example (28
// ops, each kernel well under 1 ms, 0.91 ms in all, on one V100) is bound
// by its host: kernel k starts when it is dispatched, at k ms, so the step
// is 28 ms plus the last kernel; the GPU's busy time is unchanged.
func TestEvalHost(t *testing.T) {
	opts := func(host bool, d time.Duration) EvalOptions {
		o := EvalOptions{Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}, Placement: "single", HostOn: host, Dispatch: d}
		if err := o.Check(); err != nil {
			t.Fatal(err)
		}
		return o
	}
	off, err := Eval(context.Background(), opts(false, 0))
	if err != nil {
		t.Fatal(err)
	}
	on, err := Eval(context.Background(), opts(true, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if off.Ops != 28 {
		t.Fatalf("%d ops, want the example's 28", off.Ops)
	}
	if on.StepTime <= 28e-3 || on.StepTime > 28e-3+off.StepTime {
		t.Errorf("host-bound step %v, want 28 ms plus the last kernel (the step without the host: %v)", on.StepTime, off.StepTime)
	}
	if on.PerDevice[0].Busy != off.PerDevice[0].Busy {
		t.Errorf("GPU busy %v with the host, %v without", on.PerDevice[0].Busy, off.PerDevice[0].Busy)
	}
	// --host alone: the default dispatch times, a few us per op.
	def, err := Eval(context.Background(), opts(true, 0))
	if err != nil {
		t.Fatal(err)
	}
	if def.StepTime < off.StepTime || def.StepTime >= on.StepTime {
		t.Errorf("default dispatch: step %v, want between %v and %v", def.StepTime, off.StepTime, on.StepTime)
	}
	bad := EvalOptions{Graph: inputs.GraphSpec{Path: "../examples/mlp.json"}, Dispatch: -time.Microsecond}
	var usage fail.Usage
	if err := bad.Check(); !errors.As(err, &usage) {
		t.Errorf("--dispatch -1us: %v, want a usage error", err)
	}
}
