package published

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// What "checked" means: a plan is checked by a published row only where
// the row ran what the plan runs, and placer predicts the row within its
// tolerance (CheckedDense, CheckedMoE). "What the plan runs" is its
// Traits: the precision and FP8 recipe, the attention kernel, the
// layers' kernels (fused, or eager PyTorch's ATen ops), the model family
// (dense or with experts), the GPU's generation and the set of
// parallelisms in use (tensor, sequence, pipeline, virtual, context,
// expert, FSDP) all the same, the GPU count and the sequence each within
// a factor of MaxScale.
// A plan no row checks is UNCHECKED, with the nearest row and how it
// differs (CheckPlan).

// MaxScale is how far a checking row's GPU count and sequence may be
// from the plan's, as a ratio either way.
const MaxScale = 2.0

// Difference is one way a published row differs from a plan: the
// trait, the row's value and the plan's.
type Difference struct {
	Trait string `json:"trait"` // precision, attention, layers, family, GPU, parallelism, scale, sequence, error, regression
	Row   string `json:"row"`
	Plan  string `json:"plan"`
}

func (d Difference) String() string {
	switch d.Trait {
	case "error":
		return fmt.Sprintf("error (predicted %s off the row, beyond its %s tolerance)", d.Row, d.Plan)
	case "regression":
		return fmt.Sprintf("a known regression of its release (%s)", d.Row)
	}
	return fmt.Sprintf("%s (%s vs %s)", d.Trait, d.Row, d.Plan)
}

// Check is whether a published row checks a plan: the row that does,
// or the nearest (CheckPlan) and how it differs.
type Check struct {
	Checked bool `json:"checked"`
	// Row checks the plan (Checked) or is the nearest; nil where there
	// are no rows.
	Row         *CheckedRow  `json:"row,omitempty"`
	Differences []Difference `json:"differences,omitempty"`
}

// Reasons are c's differences as words ("precision (fp8=current vs
// bf16)"); none where checked.
func (c Check) Reasons() []string {
	var out []string
	for _, d := range c.Differences {
		out = append(out, d.String())
	}
	return out
}

// CheckPlan checks a plan of traits t against rows. The nearest row is
// the one with the fewest differences of kind (precision, attention,
// layers, family, GPU, parallelism, an error beyond tolerance: Differences less
// scale and sequence), then the closest in scale and sequence (the sum
// of the absolute logarithms of the GPU counts' and the sequences'
// ratios), then the first in rows' order. The plan is checked where the
// nearest row differs in nothing.
func CheckPlan(rows []CheckedRow, t Traits) Check {
	var c Check
	bestN, bestD := math.MaxInt, math.Inf(1)
	for i := range rows {
		d := Differences(rows[i], t)
		n := 0
		for _, x := range d {
			if x.Trait != "scale" && x.Trait != "sequence" {
				n++
			}
		}
		dist := math.Abs(math.Log(ratio(rows[i].GPUs, t.GPUs))) + math.Abs(math.Log(ratio(rows[i].Seq, t.Seq)))
		if n < bestN || n == bestN && dist < bestD {
			bestN, bestD = n, dist
			c = Check{Checked: len(d) == 0, Row: &rows[i], Differences: d}
		}
	}
	return c
}

// ratio is a over b (1 where either is not positive: nothing to compare).
func ratio(a, b int) float64 {
	if a <= 0 || b <= 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// Differences are the ways row r differs from a plan of traits t:
// precision, attention, layers, family, GPU, parallelism, scale,
// sequence, then its error where beyond its tolerance, then whether its
// figure is a known regression of its release (a row that measured a
// defect checks no plan).
func Differences(r CheckedRow, t Traits) []Difference {
	var d []Difference
	add := func(trait string, differ bool, row, plan string) {
		if differ {
			d = append(d, Difference{trait, row, plan})
		}
	}
	add("precision", r.Precision != t.Precision, PrecisionName(r.Precision), PrecisionName(t.Precision))
	add("attention", r.Attention != t.Attention, r.Attention, t.Attention)
	add("layers", r.Layers != t.Layers, r.Layers, t.Layers)
	add("family", r.Family != t.Family, r.Family, t.Family)
	add("GPU", r.GPU != t.GPU, strings.ToUpper(r.GPU), strings.ToUpper(t.GPU))
	add("parallelism", !slices.Equal(r.Parallel, t.Parallel), parallelName(r.Parallel), parallelName(t.Parallel))
	far := func(x float64) bool { return x > MaxScale || x < 1/MaxScale }
	add("scale", far(ratio(r.GPUs, t.GPUs)), fmt.Sprint(r.GPUs), fmt.Sprintf("%d GPUs", t.GPUs))
	add("sequence", far(ratio(r.Seq, t.Seq)), fmt.Sprint(r.Seq), fmt.Sprintf("%d tokens", t.Seq))
	add("error", math.Abs(r.Error) > r.Tolerance(), fmt.Sprintf("%+.0f%%", 100*r.Error), fmt.Sprintf("%.0f%%", 100*r.Tolerance()))
	add("regression", r.Regression != "", r.Regression, "")
	return d
}
