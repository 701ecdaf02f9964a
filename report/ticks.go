package report

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// ReadableTicks puts four to eight ticks at round values (1, 2 or 5 x 10^k
// apart) with as many decimals as their spacing needs, so that no two
// labels read the same (gonum's default labelled a reward axis from -1.04
// to -0.96 "-1" at every tick).
type ReadableTicks struct{}

// Ticks implements plot.Ticker.
func (ReadableTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 6, 64)}}
	}
	// The smallest round step that leaves at most 7 intervals.
	raw := (hi - lo) / 7
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{2, 5, 10} {
		if step >= raw*(1-1e-9) {
			break
		}
		step = m * mag
	}
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		x := math.Round(v/step) * step
		if x == 0 {
			x = 0 // no "-0"
		}
		ticks = append(ticks, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', dec, 64)})
	}
	return ticks
}
