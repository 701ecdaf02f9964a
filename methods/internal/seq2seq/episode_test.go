package seq2seq

import (
	"testing"

	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/optimize"
)

// TestReward: the reward of hand-made results.
func TestReward(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    evaluate.Result
		want float64
	}{
		{"valid", evaluate.Result{StepTime: 4e-3}, -2},
		{"at-the-reference", evaluate.Result{StepTime: 1e-3}, -1},
		{"out-of-memory", evaluate.Result{StepTime: 1e-3, OOM: true}, -7},
		{"co-location-broken", evaluate.Result{StepTime: 1e-3, ColocationViolations: 1}, -7},
		{"zero-step", evaluate.Result{}, -7},
	} {
		if got := Reward(optimize.StepTime, &tc.r, 1e-3, -7); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
