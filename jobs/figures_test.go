package jobs

import (
	"math"
	"strings"
	"testing"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner"
)

// TestCheckFigures holds the last guard before an answer: a plan whose
// step is not a finite time, or whose memory is negative or saturated
// (transformer.Bytes past int64's range), is an error naming the
// workload, never printed as a number.
func TestCheckFigures(t *testing.T) {
	m, err := transformer.Parse("gpt:layers=2,hidden=64,heads=4,seq=128,vocab=100,batch=8")
	if err != nil {
		t.Fatal(err)
	}
	ok := planner.Result{Step: 0.5, TFLOPs: 100, Memory: 80e9, Weights: 1e9}
	for _, tc := range []struct {
		edit func(*planner.Result)
		want string
	}{
		{func(*planner.Result) {}, ""},
		{func(r *planner.Result) { r.Memory = math.MinInt64 }, "its memory passes int64's range"},
		{func(r *planner.Result) { r.Memory = math.MaxInt64 }, "its memory passes int64's range"},
		{func(r *planner.Result) { r.Activations = -1 }, "its memory passes int64's range"},
		{func(r *planner.Result) { r.Step = math.Inf(1) }, "a time or throughput is +Inf"},
		{func(r *planner.Result) { r.TFLOPs = math.NaN() }, "a time or throughput is NaN"},
	} {
		r := ok
		tc.edit(&r)
		err := checkFigures(m, r)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "gpt:layers=2")) {
			t.Errorf("checkFigures(%+v) = %v; want %q", r, err, tc.want)
		}
	}
}
