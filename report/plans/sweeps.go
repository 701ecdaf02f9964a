package plans

import (
	"fmt"
	"io"
	"strings"

	"github.com/placer/placer/planner/bench/calibration"
	"github.com/placer/placer/planner/published"
	"github.com/placer/placer/report"
)

// Sweeps is placer report sweeps: each published sweep (published.Sweeps:
// one model under several plans on one cluster and stack, measured side
// by side) with placer's prediction of every row it can write, and how
// well it orders them.
type Sweeps struct {
	Sweeps []Sweep `json:"sweeps"`
	// Over every row predicted: the mean |error| and the largest.
	MeanAbsError float64 `json:"mean_abs_error"`
	MaxAbsError  float64 `json:"max_abs_error"`
	// OutOfSampleMeanAbsError is the mean |error| over the same rows, each
	// sweep's with the constants its own source chose reset (Sweep.Sample).
	OutOfSampleMeanAbsError float64 `json:"out_of_sample_mean_abs_error"`
	// Regressions counts the predicted rows whose framework's tracker
	// lists their figure as a regression of their release
	// (SweepRow.Regression); MeanAbsErrorWithoutRegressions is
	// MeanAbsError over the other rows (where there are any such rows).
	Regressions                    int     `json:"regressions,omitempty"`
	MeanAbsErrorWithoutRegressions float64 `json:"mean_abs_error_without_regressions,omitempty"`
	// Rows and Refused count the rows placer predicted and those whose
	// plan it cannot write; Ordered the predicted rows of order-only
	// sweeps (a rank published, no figure: outside the errors).
	Rows    int `json:"rows"`
	Refused int `json:"refused"`
	Ordered int `json:"ordered,omitempty"`
	// Peaks counts the predicted rows with a published peak memory,
	// ReservedPeaks those of them published as reserved and compared
	// with placer's reserved (the rest with its allocated);
	// MeanAbsPeakError and MaxAbsPeakError are placer's memory against
	// them.
	Peaks            int     `json:"peaks,omitempty"`
	ReservedPeaks    int     `json:"reserved_peaks,omitempty"`
	MeanAbsPeakError float64 `json:"mean_abs_peak_error,omitempty"`
	MaxAbsPeakError  float64 `json:"max_abs_peak_error,omitempty"`
	// Ratios are the checks of one system's published throughput over
	// another's, model and release alike (published.BlackwellRatios).
	Ratios []SweepRatio `json:"ratios,omitempty"`
	// ByGPU is the same errors over each GPU's rows (in the order the
	// GPUs first appear): a GPU whose kernels placer measured and one
	// whose kernels it modelled are not one figure.
	ByGPU []SweepGPU `json:"by_gpu,omitempty"`
}

// SweepGPU is the rows of one GPU (its hardware preset's name) among
// those predicted with an error (not refused, not order-only): how
// many, their mean |error| in and out of sample, and how many of them
// placer tells over memory though they ran.
type SweepGPU struct {
	GPU                     string  `json:"gpu"`
	Rows                    int     `json:"rows"`
	MeanAbsError            float64 `json:"mean_abs_error"`
	OutOfSampleMeanAbsError float64 `json:"out_of_sample_mean_abs_error"`
	Over                    int     `json:"over,omitempty"`
}

// SweepRatio is one system-over-system ratio: published, placer's (its
// two rows' predictions), the error of placer's on the published one,
// and whether it holds within the tolerance; Refused where placer
// cannot write either row.
type SweepRatio struct {
	Name      string  `json:"name"`
	Published float64 `json:"published"`
	Predicted float64 `json:"predicted,omitempty"`
	Error     float64 `json:"error,omitempty"`
	Holds     bool    `json:"holds"`
	Refused   string  `json:"refused,omitempty"`
}

// Sweep is one published sweep and placer's reading of it.
type Sweep struct {
	Name   string     `json:"name"`
	Source string     `json:"source"`
	Unit   string     `json:"unit"`
	Stack  string     `json:"stack"`
	Rows   []SweepRow `json:"rows"`
	// Spearman is the rank correlation of measured and predicted over
	// the rows placer predicted (null with fewer than three: a pair is
	// ordered right or wrong, OrderHolds); MeanAbsError their mean
	// |error|.
	Spearman     *float64 `json:"spearman"`
	MeanAbsError float64  `json:"mean_abs_error"`
	// Regressions counts the rows of a known regression of their
	// release (SweepRow.Regression); WithoutRegressions is the sweep's
	// mean |error| and Spearman over the other rows (nil where it has
	// none, or none other).
	Regressions        int           `json:"regressions,omitempty"`
	WithoutRegressions *SweepWithout `json:"without_regressions,omitempty"`
	// OrderOnly: the publication states only the order (Measured is a
	// rank, 1 the fastest; Predicted is seconds a step), so no error.
	OrderOnly bool `json:"order_only,omitempty"`
	// Pairs are the pairs of predicted rows measured apart; Concordant
	// those placer orders as measured, Tied those it predicts alike (the
	// rows differ in what placer leaves out); OrderHolds: every pair
	// concordant.
	Pairs      int  `json:"pairs"`
	Concordant int  `json:"concordant"`
	Tied       int  `json:"tied"`
	OrderHolds bool `json:"order_holds"`
	// FastestMeasured and FastestPredicted are the labels of the fastest
	// row measured and predicted, among the rows predicted.
	FastestMeasured  string `json:"fastest_measured"`
	FastestPredicted string `json:"fastest_predicted"`
	// Sample is the sweep's error in sample (MeanAbsError, Spearman) and
	// out of sample: its rows with the constants its own published
	// source set chose reset to their values without it (leave one
	// source out), which constants, and the source set.
	Sample published.SampleError `json:"in_and_out_of_sample"`
}

// SweepWithout is a sweep's figures over its rows less those of a known
// regression: how many rows, their mean |error| and Spearman (nil under
// three rows or all alike).
type SweepWithout struct {
	Rows         int      `json:"rows"`
	MeanAbsError float64  `json:"mean_abs_error"`
	Spearman     *float64 `json:"spearman"`
}

// SweepRow is one row of a sweep: as published, as placer reads it, and
// its prediction (Predicted and Error, 0 where Refused says why placer
// cannot write the plan).
type SweepRow struct {
	Label    string `json:"label"`
	Workload string `json:"workload"`
	Cluster  string `json:"cluster"`
	// GPU is the hardware preset of the row's pod ("h100", "b200").
	GPU       string  `json:"gpu,omitempty"`
	Strategy  string  `json:"strategy"`
	Note      string  `json:"note,omitempty"`
	Measured  float64 `json:"measured"`
	Predicted float64 `json:"predicted,omitempty"`
	// Stated is the error placer states beside the row's plan, as placer
	// eval states it (calibration.For; nil where the row is refused).
	Stated *calibration.Error `json:"stated_error,omitempty"`
	// Error is predicted over measured, minus 1, in the sweep's unit.
	Error float64 `json:"error,omitempty"`
	// OutOfSamplePredicted and OutOfSampleError are Predicted and Error
	// with the constants the sweep's source chose reset (Sweep.Sample;
	// the same where it chose none).
	OutOfSamplePredicted float64 `json:"out_of_sample_predicted,omitempty"`
	OutOfSampleError     float64 `json:"out_of_sample_error,omitempty"`
	Fits                 bool    `json:"fits"`
	Refused              string  `json:"refused,omitempty"`
	// Regression cites the framework's tracker where it lists the row's
	// figure as a regression of its release (published.SweepRow.Regression).
	Regression string `json:"regression,omitempty"`
	// HostBound: a pipeline stage of the plan is bound by its host.
	HostBound bool `json:"host_bound,omitempty"`
	// PublishedPeakGiB is the published peak memory of a GPU (0: none;
	// PeakReserved: what the allocator reserved, not what tensors held),
	// PredictedPeakGiB placer's figure of the same kind (PredictedReserved:
	// what its simulated caching allocator reserves on the plan's most
	// reserving GPU; else what its most loaded GPU's tensors hold,
	// PredictedAllocatedGiB) and PeakError the one over the other,
	// minus 1.
	PublishedPeakGiB      float64 `json:"published_peak_gib,omitempty"`
	PeakReserved          bool    `json:"peak_reserved,omitempty"`
	PredictedPeakGiB      float64 `json:"predicted_peak_gib,omitempty"`
	PredictedReserved     bool    `json:"predicted_reserved,omitempty"`
	PredictedAllocatedGiB float64 `json:"predicted_allocated_gib,omitempty"`
	PeakError             float64 `json:"peak_error,omitempty"`
}

// WriteSweeps writes each sweep's table and how well placer orders it,
// then the figures over every sweep.
func WriteSweeps(w io.Writer, s Sweeps) error {
	w, flush := report.FitLines(w)
	defer flush()
	for _, sw := range s.Sweeps {
		if _, err := fmt.Fprintf(w, "%s (%s)\n", sw.Name, sw.Unit); err != nil {
			return err
		}
		var rows [][]string
		for _, r := range sw.Rows {
			pred, e := "refused", report.Wrap(r.Refused, 48)
			if r.Refused == "" {
				pred, e = formatSweep(r.Predicted), fmt.Sprintf("%+.1f%%", 100*r.Error)
				if sw.OrderOnly {
					e = "n/a"
				}
				if r.Stated != nil {
					e += "\n" + r.Stated.Short()
				}
				if !r.Fits {
					pred += " (over)"
				}
				if r.HostBound {
					pred += " (host)"
				}
				if r.Regression != "" {
					pred += " (regression)"
				}
			}
			rows = append(rows, []string{report.Wrap(r.Label, 30), formatSweep(r.Measured), pred, e, peakCell(r), report.Wrap(CompactPlan(r.Strategy), 26), report.Wrap(r.Note, 30)})
		}
		if err := report.TableFit(w, []string{"row", "measured", "predicted", "error", "GiB pub/pred", "placer's reading", "assumed"}, rows, []int{6, 5, 4}); err != nil {
			return err
		}
		rho := "n/a (fewer than 3 rows, or all alike)"
		if sw.Spearman != nil {
			rho = fmt.Sprintf("%.2f", *sw.Spearman)
		}
		order := fmt.Sprintf("%d of %d pairs ordered as measured", sw.Concordant, sw.Pairs)
		if sw.Tied > 0 {
			order += fmt.Sprintf(", %d alike in placer's model", sw.Tied)
		}
		if sw.Pairs > 0 && sw.FastestMeasured != sw.FastestPredicted {
			order += fmt.Sprintf("; fastest measured %q, predicted %q", sw.FastestMeasured, sw.FastestPredicted)
		}
		mae := report.Percent(sw.MeanAbsError)
		if sw.OrderOnly {
			mae = "n/a (order only)"
		}
		if o := sw.WithoutRegressions; o != nil && !sw.OrderOnly {
			mae += fmt.Sprintf(" (%s without the %d %s of a known regression", report.Percent(o.MeanAbsError), sw.Regressions, plural(sw.Regressions, "row", "rows"))
			if o.Spearman != nil {
				mae += fmt.Sprintf(", Spearman %.2f", *o.Spearman)
			}
			mae += ")"
		}
		if _, err := fmt.Fprintf(w, "Spearman %s; mean |error| %s; %s\n%s\nstack: %s\nsource: %s\n\n", rho, mae, order,
			OutOfSampleLine(sw.Sample, sw.OrderOnly), sw.Stack, sw.Source); err != nil {
			return err
		}
	}
	if err := writeRatios(w, s.Ratios); err != nil {
		return err
	}
	ordered := ""
	if s.Ordered > 0 {
		ordered = fmt.Sprintf(" (%d of them ordered only, outside the errors)", s.Ordered)
	}
	if s.Peaks > 0 {
		if _, err := fmt.Fprintf(w, "memory: %d rows with a published peak (%d reserved, against placer's reserved: its caching allocator simulated; %d allocated, against its allocated), placer's mean |error| %s, largest %s (GiB pub/pred: r = reserved)\n",
			s.Peaks, s.ReservedPeaks, s.Peaks-s.ReservedPeaks, report.Percent(s.MeanAbsPeakError), report.Percent(s.MaxAbsPeakError)); err != nil {
			return err
		}
	}
	if len(s.ByGPU) > 1 {
		parts := make([]string, len(s.ByGPU))
		for i, g := range s.ByGPU {
			parts[i] = fmt.Sprintf("%s %d rows %s (out of sample %s", g.GPU, g.Rows, report.Percent(g.MeanAbsError), report.Percent(g.OutOfSampleMeanAbsError))
			if g.Over > 0 {
				parts[i] += fmt.Sprintf(", %d told over memory", g.Over)
			}
			parts[i] += ")"
		}
		if _, err := fmt.Fprintf(w, "by GPU: %s; kernels measured on the H100 and A100, modelled elsewhere (docs/hardware.md)\n", strings.Join(parts, ", ")); err != nil {
			return err
		}
	}
	without := ""
	if s.Regressions > 0 {
		without = fmt.Sprintf("; %s without the %d %s of a known regression", report.Percent(s.MeanAbsErrorWithoutRegressions), s.Regressions, plural(s.Regressions, "row", "rows"))
	}
	_, err := fmt.Fprintf(w, "%d rows predicted%s, %d refused; mean |error| %s in sample, %s out of sample (each sweep's own source left out), largest %s%s\n"+
		"±: the error placer states beside the row's plan (its regime's, the nearest regime's or the whole bench's: placer eval says which); (over): above the GPU's memory in placer's model; (host): a stage bound by its host; (regression): the framework's own tracker lists the row's figure as a regression of its release (its note cites it); "+
		"flex, ag: the DeepEP and all-gather token dispatchers (docs/stacks.md); each row again: placer eval --workload W --cluster C --strategy S (--json)\n",
		s.Rows, ordered, s.Refused, report.Percent(s.MeanAbsError), report.Percent(s.OutOfSampleMeanAbsError), report.Percent(s.MaxAbsError), without)
	return err
}

// OutOfSampleLine says a sweep's or table's error out of sample beside
// in sample: "out of sample (source set S, DefaultMemoryMargin 0.06 ->
// 0): mean |error| 12.0% (in sample 10.0%), Spearman 0.80 (1.00)", or
// that no constant was chosen with its source, so that the two are the
// same by construction. orderOnly: a sweep of ranks, no error.
func OutOfSampleLine(e published.SampleError, orderOnly bool) string {
	head := fmt.Sprintf("out of sample (source set %s", e.Set)
	if len(e.Reset) == 0 {
		return head + "): the same, " + published.NoneChosen
	}
	var parts []string
	if !orderOnly {
		parts = append(parts, fmt.Sprintf("mean |error| %s (in sample %s)", report.Percent(e.OutMeanAbs), report.Percent(e.MeanAbs)))
	}
	if e.OutSpearman != nil {
		parts = append(parts, fmt.Sprintf("Spearman %.2f (%.2f)", *e.OutSpearman, *e.Spearman))
	}
	return head + ", reset: " + strings.Join(e.Reset, ", ") + "): " + strings.Join(parts, ", ")
}

// peakCell is a row's published and predicted peak memory in GiB with
// the error ("82.4r/54.5r -34%"; r: the figure is reserved),
// or "-" where no peak is published.
func peakCell(r SweepRow) string {
	if r.PublishedPeakGiB <= 0 {
		return "-"
	}
	pub := fmt.Sprintf("%.1f", r.PublishedPeakGiB)
	if r.PeakReserved {
		pub += "r"
	}
	if r.Refused != "" || r.PredictedPeakGiB <= 0 {
		return pub
	}
	pred := fmt.Sprintf("%.1f", r.PredictedPeakGiB)
	if r.PredictedReserved {
		pred += "r"
	}
	return fmt.Sprintf("%s/%s %+.0f%%", pub, pred, 100*r.PeakError)
}

// formatSweep writes a sweep's figure: whole tokens, or seconds to 3
// significant figures.
func formatSweep(x float64) string {
	if x >= 100 {
		return strings.TrimSuffix(fmt.Sprintf("%.0f", x), ".")
	}
	return fmt.Sprintf("%.3g", x)
}

// writeRatios writes the ratio checks: published, placer's, its error.
func writeRatios(w io.Writer, rs []SweepRatio) error {
	if len(rs) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w, "System ratios (tokens/s per GPU, same model and release; each row as its sweep reads it)"); err != nil {
		return err
	}
	var rows [][]string
	held := 0
	for _, r := range rs {
		if r.Refused != "" {
			rows = append(rows, []string{r.Name, fmt.Sprintf("%.3f", r.Published), "refused", report.Wrap(r.Refused, 48)})
			continue
		}
		if r.Holds {
			held++
		}
		rows = append(rows, []string{r.Name, fmt.Sprintf("%.3f", r.Published), fmt.Sprintf("%.3f", r.Predicted), fmt.Sprintf("%+.1f%%", 100*r.Error)})
	}
	if err := report.TableFit(w, []string{"ratio", "published", "placer", "error"}, rows, nil); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d of %d ratios within %s of the published\n\n", held, len(rs), report.Percent(published.RatioTolerance))
	return err
}

// plural is one where n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
