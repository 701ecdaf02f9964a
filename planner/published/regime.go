package published

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Regime is a class of plans whose predictions share an error: the
// model's family, the precision, the main parallel style and the GPU's
// generation. A figure placer prints carries its regime's error
// (RegimeError), measured on the published rows of the same regime.
type Regime struct {
	Family    string `json:"family"`    // Traits.Family
	Precision string `json:"precision"` // Traits.Precision
	Style     string `json:"style"`     // MainStyle
	GPU       string `json:"gpu"`       // Traits.GPU
}

// styles are the parallel styles in the order MainStyle picks them: the
// one whose costs placer prices least directly first (a pipeline's
// bubble and sends, a context ring's exchanges, tensor parallelism's
// collectives, the experts' all-to-alls, FSDP's gathers), data
// parallelism alone last.
var styles = []string{"pp", "cp", "tp", "ep", "fsdp"}

// MainStyle is a plan's main parallel style: the first of pipeline,
// context, tensor, expert parallelism and FSDP it uses (parallel, as
// Traits.Parallel), else "dp" (data parallelism alone).
func MainStyle(parallel []string) string {
	for _, s := range styles {
		if slices.Contains(parallel, s) {
			return s
		}
	}
	return "dp"
}

// RegimeOf is the regime of a plan of traits t.
func RegimeOf(t Traits) Regime {
	return Regime{Family: t.Family, Precision: t.Precision, Style: MainStyle(t.Parallel), GPU: t.GPU}
}

// String is the regime as a user reads it: "dense BF16 FSDP on H100".
func (r Regime) String() string {
	family := r.Family
	if family == "moe" {
		family = "MoE"
	}
	return fmt.Sprintf("%s %s %s on %s", family, PrecisionName(r.Precision), strings.ToUpper(r.Style), strings.ToUpper(r.GPU))
}

// RegimeError is the error placer's figures have in one regime: the
// mean and largest absolute error over the published rows of that
// regime (0 rows: no published row of it).
type RegimeError struct {
	Regime  Regime  `json:"regime"`
	Kind    string  `json:"kind"` // InSample or OutOfSample
	Rows    int     `json:"rows"`
	MeanAbs float64 `json:"mean_abs_error"`
	MaxAbs  float64 `json:"max_abs_error"`
	// Fast is how many of the rows placer predicts faster than they ran.
	Fast int `json:"too_fast"`
	// Regressions counts the regime's rows left out of the error: the
	// framework's maintainers list their figures as regressions of
	// their releases (CheckedRow.Regression), so they measured a defect
	// a user's run of a later release does not have.
	Regressions int `json:"regressions_left_out,omitempty"`
}

// ErrorOf is regime g's error over rows, in sample (the rows are those
// CheckRows computes, on the model as it stands).
func ErrorOf(rows []CheckedRow, g Regime) RegimeError {
	return errorOver(rows, g, InSample, func(r CheckedRow) (float64, bool) { return r.Error, r.Fast })
}

// OutOfSampleOf is regime g's error over rows out of sample: each row's
// error with the constants its own source set chose reset to their
// values without it (CheckedRow.OutOfSample, leave one source out).
func OutOfSampleOf(rows []CheckedRow, g Regime) RegimeError {
	return errorOver(rows, g, OutOfSample, func(r CheckedRow) (float64, bool) { return r.OutOfSample, r.OutFast })
}

// errorOver is regime g's error over rows of kind, each row's error and
// whether it is too fast read by pick.
func errorOver(rows []CheckedRow, g Regime, kind string, pick func(CheckedRow) (float64, bool)) RegimeError {
	e := RegimeError{Regime: g, Kind: kind}
	for _, r := range rows {
		if RegimeOf(r.Traits) != g {
			continue
		}
		if r.Regression != "" {
			e.Regressions++
			continue
		}
		x, fast := pick(r)
		e.Rows++
		e.MeanAbs += math.Abs(x)
		e.MaxAbs = max(e.MaxAbs, math.Abs(x))
		if fast {
			e.Fast++
		}
	}
	if e.Rows > 0 {
		e.MeanAbs /= float64(e.Rows)
	}
	return e
}

// String says the error as a figure's line carries it: "dense BF16
// FSDP on H100: mean |error| 35% (largest 75%, 6 of 6 too fast) on 6
// published rows (in-sample)", or "no published row of this regime
// (...)".
func (e RegimeError) String() string {
	left := ""
	if e.Regressions > 0 {
		left = fmt.Sprintf("; %d %s of a known regression of %s release left out", e.Regressions, plural(e.Regressions, "row", "rows"), plural(e.Regressions, "its", "their"))
	}
	if e.Rows == 0 {
		return fmt.Sprintf("no published row of this regime (%s%s)", e.Regime, left)
	}
	return fmt.Sprintf("%s: mean |error| %s (largest %.0f%%, %d of %d too fast) on %d published %s (%s%s)",
		e.Regime, e.MeanAbsText(), 100*e.MaxAbs, e.Fast, e.Rows, e.Rows, plural(e.Rows, "row", "rows"), e.Kind, left)
}

// MeanAbsText is the mean |error| as String says it, a whole percent
// ("10%"): every line that repeats it rounds it alike.
func (e RegimeError) MeanAbsText() string { return fmt.Sprintf("%.0f%%", 100*e.MeanAbs) }

// plural is one where n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// MemoryError is the error of placer's peak memory of a GPU in a plan's
// memory regime: its model family and precision, over the published rows
// of that regime whose peak is published (CheckedRow.Peak). Every
// published peak so far is torchtitan's (its memory monitor's reserved
// bytes), so the stack is no part of the regime: a Megatron-Core plan
// would have none. Where the regime has no published peak, the error is
// over every published peak (All), and says so.
type MemoryError struct {
	Family    string `json:"family"`
	Precision string `json:"precision"`
	// All: no published peak of the regime; the figures are over every
	// published peak.
	All     bool    `json:"all_peaks,omitempty"`
	Kind    string  `json:"kind"` // InSample or OutOfSample
	Rows    int     `json:"rows"`
	MeanAbs float64 `json:"mean_abs_error"`
	MaxAbs  float64 `json:"max_abs_error"`
	// Over is how many of the rows placer predicts above the published
	// peak.
	Over int `json:"over"`
}

// MemoryErrorOf is the out-of-sample error of the peak memory of a plan
// of traits t over rows: each published peak with the constants its own
// source set chose reset (CheckedRow.PeakOutOfSample), over the peaks of
// t's family and precision, else over every published peak (All).
func MemoryErrorOf(rows []CheckedRow, t Traits) MemoryError {
	e := MemoryError{Family: t.Family, Precision: t.Precision, Kind: OutOfSample}
	same := func(r CheckedRow) bool { return r.Family == t.Family && r.Precision == t.Precision }
	if !slices.ContainsFunc(rows, func(r CheckedRow) bool { return r.Peak && same(r) }) {
		e.All = true
		same = func(CheckedRow) bool { return true }
	}
	for _, r := range rows {
		if !r.Peak || !same(r) {
			continue
		}
		e.Rows++
		e.MeanAbs += math.Abs(r.PeakOutOfSample)
		e.MaxAbs = max(e.MaxAbs, math.Abs(r.PeakOutOfSample))
		if r.PeakOutOfSample > 0 {
			e.Over++
		}
	}
	if e.Rows > 0 {
		e.MeanAbs /= float64(e.Rows)
	}
	return e
}

// String says the error as the memory line carries it: "peak memory of
// dense BF16: mean |error| 2.1% (largest 3.6%, 3 of 5 over) on 5
// published peaks (out-of-sample)"; where the regime has none, "no
// published peak of MoE BF16; every published peak: ...".
func (e MemoryError) String() string {
	regime := fmt.Sprintf("%s %s", e.Family, PrecisionName(e.Precision))
	if e.Family == "moe" {
		regime = "MoE " + PrecisionName(e.Precision)
	}
	if e.Rows == 0 {
		return "no published peak memory to set it beside"
	}
	head := "peak memory of " + regime
	if e.All {
		head = fmt.Sprintf("no published peak of %s; every published peak", regime)
	}
	return fmt.Sprintf("%s: mean |error| %.1f%% (largest %.1f%%, %d of %d over) on %d published %s (%s)",
		head, 100*e.MeanAbs, 100*e.MaxAbs, e.Over, e.Rows, e.Rows, plural(e.Rows, "peak", "peaks"), e.Kind)
}
