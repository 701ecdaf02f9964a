package regal

import (
	"testing"

	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/optimize"
)

func TestObjective(t *testing.T) {
	valid := evaluate.Result{StepTime: 2, PeakMemory: []int64{3, 7, 5}, Capacity: []int64{10, 10, 10}}
	oom := evaluate.Result{StepTime: 2, PeakMemory: []int64{15, 1}, Capacity: []int64{10, 10}, OOM: true}
	for _, c := range []struct {
		o    optimize.Objective
		r    evaluate.Result
		want float64
	}{
		{optimize.StepTime, valid, 2},
		{optimize.PeakMemory, valid, 7},
		{optimize.PeakMemory, oom, 15},
		// optimize.Cost: 2 x (2 + 10 x overflow 0.5) = 14.
		{optimize.StepTime, oom, 14},
	} {
		if got := c.o.Cost(&c.r); got != c.want {
			t.Errorf("%s of %+v = %g, want %g", c.o, c.r, got, c.want)
		}
	}
	if Reward(0.9, 1) != -0.9 || Reward(3, 2) != -1.5 || Reward(1, 0) != -1 {
		t.Error("Reward wrong")
	}
}
