package regal

import (
	"testing"

	"github.com/placer/placer/evaluate"
)

func TestObjective(t *testing.T) {
	valid := evaluate.Result{StepTime: 2, PeakMemory: []int64{3, 7, 5}, Capacity: []int64{10, 10, 10}}
	oom := evaluate.Result{StepTime: 2, PeakMemory: []int64{15, 1}, Capacity: []int64{10, 10}, OOM: true}
	for _, c := range []struct {
		o    Objective
		r    evaluate.Result
		want float64
	}{
		{StepTime, valid, 2},
		{PeakMemory, valid, 7},
		{PeakMemory, oom, 15},
		// optimize.Cost: 2 x (2 + 10 x overflow 0.5) = 14.
		{StepTime, oom, 14},
	} {
		if got := c.o.Of(&c.r); got != c.want {
			t.Errorf("%s of %+v = %g, want %g", c.o, c.r, got, c.want)
		}
	}
	if Reward(0.9, 1) != -0.9 || Reward(3, 2) != -1.5 || Reward(1, 0) != -1 {
		t.Error("Reward wrong")
	}
	for s, want := range map[string]Objective{"": StepTime, "step-time": StepTime, "peak-memory": PeakMemory} {
		if got, err := ParseObjective(s); err != nil || got != want || (s != "" && got.String() != s) {
			t.Errorf("ParseObjective(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseObjective("latency"); err == nil {
		t.Error("an unknown objective was accepted")
	}
}
