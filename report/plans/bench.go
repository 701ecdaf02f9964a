package plans

import (
	"fmt"
	"io"
	"strings"

	"github.com/placer/placer/planner/bench"
	"github.com/placer/placer/planner/bench/calibration"
	"github.com/placer/placer/report"
)

// Bench is placer report bench: the bench of real runs (MLPerf Training
// submissions and the published sweeps placer carries) in its two parts,
// the development part (mechanisms are chosen on it) and the validation
// part (reported as aggregates; its rows only with ShowValidation).
type Bench struct {
	ValidationRule string    `json:"validation_rule"`
	ShowValidation bool      `json:"show_validation"`
	Development    BenchPart `json:"development"`
	Validation     BenchPart `json:"validation"`
	// Stated is the error placer states beside its figures, calibrated
	// on the development part, and how often it holds out of sample.
	Stated *BenchStated `json:"stated_error,omitempty"`
}

// BenchStated is the stated error's calibration (calibration.Table):
// each regime of the development part with the error stated beside its
// plans, the development part's coverage leaving each row's sweep out,
// and the validation part's coverage (aggregate only).
type BenchStated struct {
	Level       float64              `json:"quantile"`
	Regimes     []BenchRegime        `json:"regimes"`
	Development calibration.Coverage `json:"development_leave_one_sweep_out"`
	Validation  calibration.Coverage `json:"validation"`
	// FamilyOut is the development part's coverage by each way of
	// leaving a whole family out (code base, GPU generation, kind of
	// run, host CPU, sequence band, and the kind with each of three):
	// each family's rows against the error stated without the family,
	// widened by the error measured on the other families left out.
	FamilyOut []calibration.WayCoverage `json:"leave_one_family_out"`
}

// BenchRegime is one regime of the development part: its rows and the
// error stated beside its plans (Stated.From: whose rows gave it).
type BenchRegime struct {
	Regime calibration.Regime `json:"regime"`
	Rows   int                `json:"rows"`
	Stated calibration.Error  `json:"stated"`
}

// BenchPart is one part's figures: its MLPerf rows and its published
// sweeps, apart.
type BenchPart struct {
	Name      string         `json:"name"`
	MLPerf    BenchMLPerf    `json:"mlperf"`
	Published BenchPublished `json:"published"`
	// Rows are the part's MLPerf rows (the validation part's only with
	// ShowValidation).
	Rows []BenchRow `json:"rows,omitempty"`
}

// BenchMLPerf is a part's MLPerf submissions: how many, how many have no
// step time (Unmeasured), how many placer cannot write (Refused, by
// reason), and over those it predicts: the mean and largest |error| of
// the step, how many it predicts slower than measured, how many of these
// runs that ran it tells over memory, and the order within each sweep
// (one round, one benchmark, one GPU); Sets, the same by bench.SetOf.
type BenchMLPerf struct {
	Submissions  int                `json:"submissions"`
	Unmeasured   int                `json:"unmeasured"`
	Refused      int                `json:"refused"`
	Reasons      []BenchReason      `json:"refused_reasons,omitempty"`
	Predicted    int                `json:"predicted"`
	MeanAbsError float64            `json:"mean_abs_error"`
	MaxAbsError  float64            `json:"max_abs_error"`
	Slow         int                `json:"predicted_slower"`
	Over         int                `json:"ran_but_told_over"`
	Sweeps       []BenchSweep       `json:"sweeps,omitempty"`
	SweepSummary BenchSweepSummary  `json:"sweep_summary"`
	Sets         []bench.SetFigures `json:"sets,omitempty"`
}

// BenchReason is one reason placer cannot write a row, and how many rows.
type BenchReason struct {
	Reason string `json:"reason"`
	Rows   int    `json:"rows"`
}

// BenchSweep is one sweep's rows predicted, their mean |error| and
// Spearman's rank correlation (nil under three rows).
type BenchSweep struct {
	Name         string   `json:"name"`
	Rows         int      `json:"rows"`
	MeanAbsError float64  `json:"mean_abs_error"`
	Spearman     *float64 `json:"spearman"`
	OrderOnly    bool     `json:"order_only,omitempty"`
}

// BenchSweepSummary is a part's sweeps in aggregate: how many, how many
// have three plans or more (Ranked), their mean and least Spearman and
// how many reach 0.8.
type BenchSweepSummary struct {
	Sweeps       int     `json:"sweeps"`
	Ranked       int     `json:"ranked"`
	MeanSpearman float64 `json:"mean_spearman"`
	MinSpearman  float64 `json:"min_spearman"`
	AtLeast08    int     `json:"spearman_at_least_0_8"`
}

// BenchPublished is a part's published sweeps (placer report sweeps'
// rows): rows predicted and refused, the mean and largest |error|, how
// many rows that ran placer tells over memory, and the sweeps' order.
type BenchPublished struct {
	Sweeps       int               `json:"sweeps"`
	Rows         int               `json:"rows"`
	Refused      int               `json:"refused"`
	MeanAbsError float64           `json:"mean_abs_error"`
	MaxAbsError  float64           `json:"max_abs_error"`
	Over         int               `json:"ran_but_told_over"`
	OverRows     []string          `json:"over_rows,omitempty"`
	SweepSummary BenchSweepSummary `json:"sweep_summary"`
	SweepList    []BenchSweep      `json:"sweep_list,omitempty"`
	// Sets are the same figures by published source set (a code base's
	// part is its set: aggregates only, printed for both parts).
	Sets []BenchSet `json:"sets,omitempty"`
}

// BenchSet is one published source set's sweeps in one part, in
// aggregate: rows predicted and refused, the mean and largest |error|
// over its rows, and its sweeps' order.
type BenchSet struct {
	Set          string            `json:"set"`
	Sweeps       int               `json:"sweeps"`
	Rows         int               `json:"rows"`
	Refused      int               `json:"refused"`
	MeanAbsError float64           `json:"mean_abs_error"`
	MaxAbsError  float64           `json:"max_abs_error"`
	SweepSummary BenchSweepSummary `json:"sweep_summary"`
}

// BenchRow is one MLPerf submission: its reading (placer eval's
// workload, cluster and strategy), what the reading assumes and leaves
// out, the measured and predicted step, the error, the memory placer
// predicts and whether it fits; or why placer cannot write it.
type BenchRow struct {
	ID           string   `json:"id"`
	Part         string   `json:"part"`
	Sweep        string   `json:"sweep"`
	GPUs         int      `json:"gpus"`
	Workload     string   `json:"workload,omitempty"`
	Cluster      string   `json:"cluster,omitempty"`
	Strategy     string   `json:"strategy,omitempty"`
	Assumed      []string `json:"assumed,omitempty"`
	LeftOut      []string `json:"left_out,omitempty"`
	Measured     float64  `json:"measured_step_s"`
	StepMethod   string   `json:"step_method"`
	Predicted    float64  `json:"predicted_step_s,omitempty"`
	Error        float64  `json:"error,omitempty"`
	PredictedGiB float64  `json:"predicted_gib,omitempty"`
	UsableGiB    float64  `json:"usable_gib,omitempty"`
	GPUMemGiB    float64  `json:"gpu_memory_gib,omitempty"`
	Fits         bool     `json:"fits"`
	Refused      string   `json:"refused,omitempty"`
	Config       string   `json:"config,omitempty"`
}

// WriteBench writes the report: the rule, each part's figures apart
// (MLPerf, then the published sweeps), the development part's rows and
// refusals, the validation part's rows only where shown.
func WriteBench(w io.Writer, b Bench) error {
	para(w, "", "validation part: "+b.ValidationRule)
	fmt.Fprintln(w)
	head := []string{"part", "MLPerf subm.", "predicted", "refused", "mean |err|", "max |err|", "slower", "ran, told over", "sweeps >=3", "Spearman mean/min", ">=0.8"}
	var rows [][]string
	for _, p := range []BenchPart{b.Development, b.Validation} {
		m := p.MLPerf
		rows = append(rows, []string{p.Name, fmt.Sprint(m.Submissions), fmt.Sprint(m.Predicted), fmt.Sprintf("%d (+%d unmeasured)", m.Refused, m.Unmeasured),
			report.Percent(m.MeanAbsError), report.Percent(m.MaxAbsError), fmt.Sprint(m.Slow), fmt.Sprint(m.Over), fmt.Sprint(m.SweepSummary.Ranked),
			spearmanPair(m.SweepSummary), fmt.Sprintf("%d of %d", m.SweepSummary.AtLeast08, m.SweepSummary.Ranked)})
	}
	fmt.Fprintln(w, "MLPerf Training submissions (step s):")
	if err := report.Table(w, head, rows); err != nil {
		return err
	}
	head, rows = []string{"part", "sweeps", "rows", "refused", "mean |err|", "max |err|", "ran, told over", "sweeps >=3", "Spearman mean/min", ">=0.8"}, nil
	for _, p := range []BenchPart{b.Development, b.Validation} {
		s := p.Published
		rows = append(rows, []string{p.Name, fmt.Sprint(s.Sweeps), fmt.Sprint(s.Rows), fmt.Sprint(s.Refused), report.Percent(s.MeanAbsError), report.Percent(s.MaxAbsError),
			fmt.Sprint(s.Over), fmt.Sprint(s.SweepSummary.Ranked), spearmanPair(s.SweepSummary), fmt.Sprintf("%d of %d", s.SweepSummary.AtLeast08, s.SweepSummary.Ranked)})
	}
	fmt.Fprintln(w, "\npublished sweeps (placer report sweeps' rows, each sweep's unit):")
	if err := report.Table(w, head, rows); err != nil {
		return err
	}
	head, rows = []string{"part", "source set", "sweeps", "rows", "refused", "mean |err|", "max |err|", "sweeps >=3", "Spearman mean/min", ">=0.8"}, nil
	for _, p := range []BenchPart{b.Development, b.Validation} {
		for _, s := range p.Published.Sets {
			rows = append(rows, []string{p.Name, s.Set, fmt.Sprint(s.Sweeps), fmt.Sprint(s.Rows), fmt.Sprint(s.Refused), report.Percent(s.MeanAbsError), report.Percent(s.MaxAbsError),
				fmt.Sprint(s.SweepSummary.Ranked), spearmanPair(s.SweepSummary), fmt.Sprintf("%d of %d", s.SweepSummary.AtLeast08, s.SweepSummary.Ranked)})
		}
	}
	if len(rows) > 0 {
		fmt.Fprintln(w, "\npublished sweeps by source set (aggregates):")
		if err := report.Table(w, head, rows); err != nil {
			return err
		}
	}
	for _, p := range []BenchPart{b.Development, b.Validation} {
		shown := p.Name != "validation" || b.ShowValidation
		if len(p.MLPerf.Sweeps) > 0 {
			fmt.Fprintf(w, "\n%s part, MLPerf sweeps (one round, one benchmark, one GPU):\n", p.Name)
			var sr [][]string
			for _, s := range p.MLPerf.Sweeps {
				sr = append(sr, []string{s.Name, fmt.Sprint(s.Rows), report.Percent(s.MeanAbsError), rho(s.Spearman)})
			}
			if err := report.Table(w, []string{"sweep", "rows", "mean |err|", "Spearman"}, sr); err != nil {
				return err
			}
		}
		if shown && len(p.Rows) > 0 {
			fmt.Fprintf(w, "\n%s part, MLPerf rows:\n", p.Name)
			var rr [][]string
			for _, r := range p.Rows {
				if r.Refused != "" {
					continue
				}
				fits := "fits"
				if !r.Fits {
					fits = "OVER"
				}
				rr = append(rr, []string{chunk(r.ID, 36), fmt.Sprint(r.GPUs), r.Strategy, fmt.Sprintf("%.3f", r.Measured), fmt.Sprintf("%.3f", r.Predicted),
					fmt.Sprintf("%+.1f%%", 100*r.Error), fmt.Sprintf("%.0f/%.0f %s", r.PredictedGiB, r.UsableGiB, fits)})
			}
			if err := report.TableFit(w, []string{"submission", "GPUs", "placer's reading", "step s", "predicted", "error", "GiB pred/usable"}, rr, []int{2}); err != nil {
				return err
			}
		}
		if len(p.MLPerf.Reasons) > 0 {
			fmt.Fprintf(w, "\n%s part, rows placer cannot write (%d):\n", p.Name, p.MLPerf.Refused)
			for _, r := range p.MLPerf.Reasons {
				para(w, "  ", fmt.Sprintf("%d x %s", r.Rows, r.Reason))
			}
			if shown {
				for _, r := range p.Rows {
					if r.Refused != "" && r.Measured > 0 {
						para(w, "  ", fmt.Sprintf("- %s: %s", r.ID, r.Refused))
					}
				}
			}
		}
		if shown && len(p.Published.OverRows) > 0 {
			fmt.Fprintf(w, "\n%s part, published rows that ran but are told over memory (%d):\n", p.Name, len(p.Published.OverRows))
			for _, r := range p.Published.OverRows {
				para(w, "  ", "- "+r)
			}
		}
	}
	if !b.ShowValidation {
		fmt.Fprintln(w)
		para(w, "", "the validation part's rows are not printed (--show-validation prints them; a mechanism is chosen on the development part only)")
	}
	if b.Stated != nil {
		return writeStated(w, *b.Stated)
	}
	return nil
}

// writeStated writes the stated error's calibration: the development
// part's regimes, its leave-one-sweep-out coverage, and last, once, the
// validation part's coverage.
func writeStated(w io.Writer, s BenchStated) error {
	fmt.Fprintln(w)
	para(w, "", fmt.Sprintf("stated error (the %.0fth percentile of |step error| in each regime, development part; placer eval, search and the reports state it):", 100*s.Level))
	var rows [][]string
	for _, r := range s.Regimes {
		from := regimeCell(r.Stated.From)
		if r.Stated.Basis == calibration.BasisRegime {
			from = "its own"
		}
		rows = append(rows, []string{regimeCell(r.Regime), fmt.Sprint(r.Rows), "±" + r.Stated.BoundText(), r.Stated.Basis, from,
			fmt.Sprintf("%d / %d", r.Stated.Rows, r.Stated.Sweeps)})
	}
	if err := report.Table(w, []string{"regime (kind/GPU/stack/GPUs/sequence/code base)", "rows", "stated", "from", "from regime", "its rows / sweeps"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	para(w, "", "development part, each row against the error stated without its sweep (leave one sweep out): "+coverageLine(s.Development))
	para(w, "", "validation part, each row against the development part's stated error (widened where its facts are outside the development part): "+coverageLine(s.Validation))
	return writeFamilyOut(w, s.FamilyOut)
}

// regimeCell is r's key with its code base on a line of its own, so
// that the regimes' table fits the terminal.
func regimeCell(r calibration.Regime) string {
	k := r.Key()
	if i := strings.LastIndex(k, "/"); i >= 0 {
		return k[:i+1] + "\n" + k[i+1:]
	}
	return k
}

// writeFamilyOut writes the coverage of each way of leaving a family
// out: its rows within, their median band, and each family's.
func writeFamilyOut(w io.Writer, ways []calibration.WayCoverage) error {
	if len(ways) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	para(w, "", fmt.Sprintf("leave one family out (development part): each family's rows against the error stated from the other families' rows, widened by the error measured on families left out among those rows alone; a plan whose fact no development row shares is widened by that error measured on every family of every way (the 90th percentile of what each family's rows needed beyond the bound stated without it): +%.0f%%:", 100*ways[0].Widening))
	var rows [][]string
	for _, wc := range ways {
		var fams []string
		short := 0
		for _, f := range wc.Families {
			fams = append(fams, fmt.Sprintf("%s %d/%d", f.Family, f.Within, f.Rows))
			if f.Rows > 0 && float64(f.Within) < 0.8*float64(f.Rows) {
				short++
			}
		}
		share := 0.0
		if wc.Rows > 0 {
			share = 100 * float64(wc.Within) / float64(wc.Rows)
		}
		rows = append(rows, []string{wc.Way, fmt.Sprintf("%d of %d (%.1f%%)", wc.Within, wc.Rows, share), fmt.Sprintf("±%.0f%%", 100*wc.MedianStated),
			fmt.Sprintf("%d of %d", len(wc.Families)-short, len(wc.Families)), strings.Join(fams, ", ")})
	}
	return report.Table(w, []string{"way", "within", "median band", "families >= 80%", "each family: within / rows"}, rows)
}

// coverageLine is "176 of 204 rows within their stated error (86.3%);
// stated by regime 115, nearest regime 68, whole bench 21; mean stated
// ±23.6%".
func coverageLine(c calibration.Coverage) string {
	var by []string
	for _, b := range []string{calibration.BasisRegime, calibration.BasisNearest, calibration.BasisWhole} {
		if n := c.ByBasis[b]; n > 0 {
			by = append(by, fmt.Sprintf("%s %d", b, n))
		}
	}
	return fmt.Sprintf("%d of %d rows within their stated error (%.1f%%); stated by %s; mean stated ±%.1f%%",
		c.Within, c.Rows, 100*c.Share(), strings.Join(by, ", "), 100*c.MeanBound)
}

// para writes text wrapped to MaxWidth, its first line after indent and
// the others two columns further in.
func para(w io.Writer, indent, text string) {
	for i, line := range strings.Split(report.Wrap(text, report.MaxWidth-len(indent)-2), "\n") {
		if i > 0 {
			line = "  " + line
		}
		fmt.Fprintln(w, indent+line)
	}
}

// chunk breaks s after each "/" that ends a line of at most n columns,
// and inside a piece longer than n (a submission's id has no spaces).
func chunk(s string, n int) string {
	var lines []string
	cur := ""
	for _, piece := range strings.SplitAfter(s, "/") {
		for len(piece) > n {
			if cur != "" {
				lines, cur = append(lines, cur), ""
			}
			lines, piece = append(lines, piece[:n]), piece[n:]
		}
		if len(cur)+len(piece) > n {
			lines, cur = append(lines, cur), ""
		}
		cur += piece
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return strings.Join(lines, "\n")
}

func spearmanPair(s BenchSweepSummary) string {
	if s.Ranked == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f / %.2f", s.MeanSpearman, s.MinSpearman)
}

func rho(r *float64) string {
	if r == nil {
		return "n/a (<3 rows)"
	}
	return strings.TrimRight(fmt.Sprintf("%.2f", *r), " ")
}
