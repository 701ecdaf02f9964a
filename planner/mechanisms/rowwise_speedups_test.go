package mechanisms

import (
	"math"
	"testing"

	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// TestRowwiseSpeedups: with measured per-tensor figures the rowwise
// forward speedup is the tensorwise one times the measured
// rowwise-over-tensorwise ratio (1.8655/1.850), by hand at FP8Fwd 2 and
// FP8Bwd 1.5: 2.01676 forward; rowwise's backward the tensorwise one,
// 1.5 (torchao runs it in cuBLAS's tensorwise kernel);
// rowwise_with_gw_hp's backward 2/(1/(1.5 x 1.8655/1.850) + 1) =
// 2/(1/1.51257 + 1) = 1.20400; unmeasured (0), the peaks' ratio each way, 2 (1,978.9 over
// 989.45) and, with the BF16 weight gradient, 2/(1/2 + 1) = 4/3.
func TestRowwiseSpeedups(t *testing.T) {
	for _, c := range []struct {
		k        kernels.Node
		recipe   string
		fwd, bwd float64
	}{
		{kernels.Node{FP8Peak: 1978.9e12, FP8Fwd: 2, FP8Bwd: 1.5}, plan.FP8Rowwise, 2.01676, 1.5},
		{kernels.Node{FP8Peak: 1978.9e12, FP8Fwd: 2, FP8Bwd: 1.5}, plan.FP8RowwiseGWHP, 2.01676, 1.20400},
		{kernels.Node{FP8Peak: 1978.9e12}, plan.FP8Rowwise, 2, 2},
		{kernels.Node{FP8Peak: 1978.9e12}, plan.FP8RowwiseGWHP, 2, 4.0 / 3},
	} {
		f, b := RowwiseSpeedups(c.k, c.recipe, 989.45e12)
		if math.Abs(f-c.fwd) > 1e-5 || math.Abs(b-c.bwd) > 1e-5 {
			t.Errorf("%s at %+v: %.5f, %.5f; by hand %.5f, %.5f", c.recipe, c.k, f, b, c.fwd, c.bwd)
		}
	}
}
