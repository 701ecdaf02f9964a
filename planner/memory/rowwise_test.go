package memory

import (
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestRowwiseKeeps: under the rowwise recipes a GEMM's saved input is
// its BF16 one and no FP8 weight is held to the backward; under the
// other FP8 recipes both are FP8 copies; BF16 neither. By hand, on
// torchtitan's block (Llama 3 70B, 8,192 tokens a micro-batch, no tensor
// parallelism) w2's saved input is 8,192 x 28,672 elements: 469,762,048
// bytes in BF16, 234,881,024 as an FP8 copy; a stage of 8e9 block
// parameters holds 8e9 bytes of FP8 weights under current scaling
// without recomputation, none under rowwise.
func TestRowwiseKeeps(t *testing.T) {
	m := mustSpec(t, "llama3-70b:seq=8192,batch=8")
	st := Stage{Params: 9e9, Layers: 8e9}
	for _, c := range []struct {
		recipe           string
		fp8              bool
		w2Input, weights float64
	}{
		{plan.FP8Rowwise, false, 469762048, 0}, {plan.FP8RowwiseGWHP, false, 469762048, 0}, {plan.FP8Current, true, 234881024, 8e9},
		{plan.FP8Delayed, true, 234881024, 8e9}, {"", false, 469762048, 0},
	} {
		if plan.KeepsFP8Inputs(c.recipe) != c.fp8 || plan.KeepsFP8Weights(c.recipe) != c.fp8 {
			t.Errorf("fp8=%q: keeps FP8 inputs %v, weights %v; want %v", c.recipe, plan.KeepsFP8Inputs(c.recipe), plan.KeepsFP8Weights(c.recipe), c.fp8)
		}
		pl := plan.Plan{TP: 1, PP: 1, NumMicro: 1, Strategy: plan.Strategy{FP8: c.recipe}}
		pl.Software.Stack = "torchtitan-0.2"
		co := counter{m: m, pl: pl, tokens: 8192}
		if got := co.titanFP8Weights(&st); got != c.weights {
			t.Errorf("fp8=%q: %.0f bytes of FP8 weights held, want %.0f", c.recipe, got, c.weights)
		}
		var w2 float64
		for _, ts := range co.titanBlockTensors() {
			if ts.name == "w2 input" {
				w2 = ts.bytes
			}
		}
		if w2 != c.w2Input {
			t.Errorf("fp8=%q: w2's saved input %.0f bytes, want %.0f", c.recipe, w2, c.w2Input)
		}
	}
}
