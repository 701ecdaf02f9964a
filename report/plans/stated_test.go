package plans

import (
	"bytes"
	"strings"
	"testing"

	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/bench/calibration"
)

// TestStatedError: the step line carries the stated error where there
// is one (in place of the published regime's), the TFLOP/s line refers
// to it, and a search table's step cell gives it short.
func TestStatedError(t *testing.T) {
	g := calibration.Regime{Kind: calibration.KindDense, Gen: calibration.GenHopper, Stack: calibration.StackMegatron, Scale: calibration.ScaleSmall, Seq: calibration.SeqLong}
	from := g
	from.Seq = ""
	e := &calibration.Error{Regime: g, From: from, Basis: calibration.BasisNearest, Level: 0.9, Rows: 21, Sweeps: 6, Bound: 0.287}
	p := ScalePlan{StatedError: e, Result: planner.Result{Step: 6.4, TFLOPs: 500}}
	var out bytes.Buffer
	if err := WriteScalePlan(&out, p); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(out.String(), "│", " ")), " ")
	for _, want := range []string{"±29% stated error (the 90th percentile of |error| on 21 development rows of 6 sweeps of the nearest regime, dense, Hopper, Megatron-Core, <=64 GPUs (its own,",
		"the step's stated error applies"} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan's table lacks %q:\n%s", want, out.String())
		}
	}
	if got := statedCell(&p); got != " ±29% nearest" {
		t.Errorf("statedCell = %q, want %q", got, " ±29% nearest")
	}
	if got := statedCell(&ScalePlan{}); got != "" {
		t.Errorf("statedCell of none = %q", got)
	}
}

// TestCoverageLine: 176 of 204 is 86.3%.
func TestCoverageLine(t *testing.T) {
	c := calibration.Coverage{Rows: 204, Within: 176, ByBasis: map[string]int{calibration.BasisRegime: 115, calibration.BasisNearest: 68, calibration.BasisWhole: 21}, MeanBound: 0.2364}
	want := "176 of 204 rows within their stated error (86.3%); stated by regime 115, nearest regime 68, whole bench 21; mean stated ±23.6%"
	if got := coverageLine(c); got != want {
		t.Errorf("coverageLine = %q, want %q", got, want)
	}
}
