package placements

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/placer/placer/report"
)

// Generalization is the transfer experiment of GDP fig. 2 and GO fig. 5
// (`placer report generalization`): each family held out in turn, with a
// policy pre-trained on the other families' graphs, placed zero-shot and
// fine-tuned on the held-out family's test graph, and compared with the
// expert placement, the best quick baseline and GO-one (a policy trained
// from scratch on that graph alone).
type Generalization struct {
	Hardware  string `json:"hardware"`
	Devices   int    `json:"devices"`
	Topology  string `json:"topology"`
	Transfers string `json:"transfers"` // "async" or "sync"
	Tasks     string `json:"tasks"`
	Seed      uint64 `json:"seed"`
	Policy    string `json:"policy"` // network size of every policy: "default", "small" or a file
	Samples   int    `json:"samples"`
	// Budgets: steps (0 = none) and wall time in seconds (0 = none).
	PretrainSteps int     `json:"pretrain_steps"`
	PretrainTime  float64 `json:"pretrain_time_limit_s"`
	SearchSteps   int     `json:"search_steps"`
	SearchTime    float64 `json:"search_time_limit_s"`
	FinetuneSteps int     `json:"finetune_steps"`

	Rows    []GeneralizationRow   `json:"families"`
	Summary GeneralizationSummary `json:"summary"`
}

// GeneralizationRun is one method's outcome on a held-out test graph.
type GeneralizationRun struct {
	Method   string  `json:"method"`
	StepTime float64 `json:"step_time_s"` // 0 = the method gave no decision
	// Valid is false for a decision that runs out of memory (or none).
	Valid bool `json:"valid"`
	// WallTime is the method's own wall time in seconds (the learned
	// methods: their search or inference, without the baselines).
	WallTime    float64 `json:"wall_time_s"`
	Steps       int     `json:"steps,omitempty"`
	Evaluations int     `json:"evaluations,omitempty"`
}

// GeneralizationRow is one held-out family.
type GeneralizationRow struct {
	Family  string `json:"family"`
	Graph   string `json:"test_graph"`
	Ops     int    `json:"ops"`
	Devices int    `json:"devices"`
	// Train are the graphs the policy was pre-trained on (the other
	// families'); PretrainSteps its steps (warm-up included) and
	// PretrainTime its training wall time in seconds.
	Train          []string `json:"train_graphs"`
	PretrainSteps  int      `json:"pretrain_steps"`
	PretrainTime   float64  `json:"pretrain_time_s"`
	PretrainStatus string   `json:"pretrain_status"`
	// Reference is the best valid quick baseline: it normalizes the
	// learned methods' reward and anchors their refinement.
	Reference string  `json:"reference"`
	RefStep   float64 `json:"reference_step_time_s"`

	// Expert is the human-expert placement ("single" stands in for it
	// when the graph has none); Best the best valid quick baseline.
	Expert    GeneralizationRun `json:"expert"`
	Best      GeneralizationRun `json:"best_baseline"`
	GOOne     GeneralizationRun `json:"go_one"`
	ZeroShot  GeneralizationRun `json:"zero_shot"`
	FineTuned GeneralizationRun `json:"fine_tuned"`

	// Speed-ups over Expert (expert step / step) and the fine-tuned step
	// over GO-one's; 0 where either side is missing or invalid.
	BestSpeedUp        float64 `json:"best_speedup"`
	GOOneSpeedUp       float64 `json:"go_one_speedup"`
	ZeroShotSpeedUp    float64 `json:"zero_shot_speedup"`
	FineTunedSpeedUp   float64 `json:"fine_tuned_speedup"`
	FineTunedOverGOOne float64 `json:"fine_tuned_over_go_one"`

	// WallTime is the family's whole wall time in seconds: pre-training,
	// baselines and the three learned methods.
	WallTime float64 `json:"wall_time_s"`
}

// SetRatios fills the row's speed-ups and the fine-tuned / GO-one ratio
// from its runs.
func (r *GeneralizationRow) SetRatios() {
	ratio := func(num, den GeneralizationRun) float64 {
		if !num.Valid || !den.Valid || num.StepTime <= 0 || den.StepTime <= 0 {
			return 0
		}
		return num.StepTime / den.StepTime
	}
	r.BestSpeedUp = ratio(r.Expert, r.Best)
	r.GOOneSpeedUp = ratio(r.Expert, r.GOOne)
	r.ZeroShotSpeedUp = ratio(r.Expert, r.ZeroShot)
	r.FineTunedSpeedUp = ratio(r.Expert, r.FineTuned)
	r.FineTunedOverGOOne = ratio(r.FineTuned, r.GOOne)
}

// GeoMean is a geometric mean over the families where the ratio is
// defined (both sides valid).
type GeoMean struct {
	Value    float64 `json:"geomean"` // 0 when no family has the ratio
	Families int     `json:"families"`
}

// Check is a claim of the papers measured on the rows.
type Check struct {
	Claim    string `json:"claim"`
	Measured string `json:"measured"`
	Holds    bool   `json:"holds"`
}

// GeneralizationSummary holds the geometric means of the rows' ratios and
// the two claims GDP and GO make about transfer, as measured.
type GeneralizationSummary struct {
	Families           int     `json:"families"`
	BestSpeedUp        GeoMean `json:"best_speedup"`
	GOOneSpeedUp       GeoMean `json:"go_one_speedup"`
	ZeroShotSpeedUp    GeoMean `json:"zero_shot_speedup"`
	FineTunedSpeedUp   GeoMean `json:"fine_tuned_speedup"`
	FineTunedOverGOOne GeoMean `json:"fine_tuned_over_go_one"`
	// ZeroShotBeatsExpert holds when every family has a valid zero-shot
	// and expert decision and the geometric-mean speed-up of zero-shot
	// over expert is above 1.
	ZeroShotBeatsExpert Check `json:"zero_shot_beats_expert"`
	// FineTunedNearGOOne holds when every family has valid fine-tuned and
	// GO-one decisions and the geometric mean of fine-tuned step / GO-one
	// step is at most 1.05 (better than GO-one counts as within).
	FineTunedNearGOOne Check `json:"fine_tuned_within_5pct_of_go_one"`
}

// SummarizeGeneralization computes the geometric means and checks of
// rows whose ratios are set (SetRatios).
func SummarizeGeneralization(rows []GeneralizationRow) GeneralizationSummary {
	geo := func(get func(r *GeneralizationRow) float64) GeoMean {
		var g GeoMean
		sum := 0.0
		for i := range rows {
			if v := get(&rows[i]); v > 0 {
				sum += math.Log(v)
				g.Families++
			}
		}
		if g.Families > 0 {
			g.Value = math.Exp(sum / float64(g.Families))
		}
		return g
	}
	s := GeneralizationSummary{
		Families:           len(rows),
		BestSpeedUp:        geo(func(r *GeneralizationRow) float64 { return r.BestSpeedUp }),
		GOOneSpeedUp:       geo(func(r *GeneralizationRow) float64 { return r.GOOneSpeedUp }),
		ZeroShotSpeedUp:    geo(func(r *GeneralizationRow) float64 { return r.ZeroShotSpeedUp }),
		FineTunedSpeedUp:   geo(func(r *GeneralizationRow) float64 { return r.FineTunedSpeedUp }),
		FineTunedOverGOOne: geo(func(r *GeneralizationRow) float64 { return r.FineTunedOverGOOne }),
	}
	measured := func(g GeoMean, unit string) string {
		if g.Families == 0 {
			return "no family with both decisions valid"
		}
		m := fmt.Sprintf("geometric mean %.3f%s over %d of %d families", g.Value, unit, g.Families, len(rows))
		if g.Families < len(rows) {
			m += fmt.Sprintf(" (%d without both decisions valid)", len(rows)-g.Families)
		}
		return m
	}
	all := func(g GeoMean) bool { return len(rows) > 0 && g.Families == len(rows) }
	s.ZeroShotBeatsExpert = Check{
		Claim:    "zero-shot beats the expert placement on held-out families on average (speed-up over expert > 1)",
		Measured: measured(s.ZeroShotSpeedUp, "x"),
		Holds:    all(s.ZeroShotSpeedUp) && s.ZeroShotSpeedUp.Value > 1,
	}
	s.FineTunedNearGOOne = Check{
		Claim:    "fine-tuned lands within 5% of GO-one on average (fine-tuned step / GO-one step <= 1.05)",
		Measured: measured(s.FineTunedOverGOOne, ""),
		Holds:    all(s.FineTunedOverGOOne) && s.FineTunedOverGOOne.Value <= 1.05,
	}
	return s
}

// ms formats a run's step time in milliseconds, marked when it ran out
// of memory.
func (r GeneralizationRun) ms() string {
	if r.StepTime <= 0 {
		return "n/a"
	}
	s := fmt.Sprintf("%.3f", r.StepTime*1e3)
	if !r.Valid {
		s += " OOM"
	}
	return s
}

func speedUp(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3fx", v)
}

func geoCell(g GeoMean, unit string) string {
	if g.Families == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f%s", g.Value, unit)
}

// WriteGeneralization writes g as one table (one row per held-out family
// and a row of geometric means) with a header naming the setting and
// footnotes stating the two checks as measured.
func WriteGeneralization(w io.Writer, g Generalization) error {
	w, flush := report.FitLines(w)
	defer flush()
	fmt.Fprintf(w, "generalization: each family held out in turn on %d x %s (%s), %s transfers; tasks %s; seed %d\n",
		g.Devices, g.Hardware, g.Topology, g.Transfers, g.Tasks, g.Seed)
	fmt.Fprintf(w, "policy %s, %d samples per step; pre-training %s on the other families' graphs; GO-one %s from scratch; fine-tuning %d steps\n",
		g.Policy, g.Samples, StepsOrTime(g.PretrainSteps, g.PretrainTime), StepsOrTime(g.SearchSteps, g.SearchTime), g.FinetuneSteps)
	var rows [][]string
	var notes []string
	for _, r := range g.Rows {
		expert := r.Expert.ms()
		if r.Expert.Method != "expert" {
			expert = r.Expert.Method + " " + expert
			notes = append(notes, fmt.Sprintf("%s: no expert placement for %s; %s stands in for it", r.Family, r.Graph, r.Expert.Method))
		}
		rows = append(rows, []string{
			r.Family, r.Graph, fmt.Sprint(r.Ops), expert, r.Best.Method + " " + r.Best.ms(),
			r.GOOne.ms(), r.ZeroShot.ms(), r.FineTuned.ms(),
			speedUp(r.BestSpeedUp), speedUp(r.GOOneSpeedUp), speedUp(r.ZeroShotSpeedUp), speedUp(r.FineTunedSpeedUp),
			ratioCell(r.FineTunedOverGOOne),
			strings.Join([]string{report.Seconds(r.PretrainTime), report.Seconds(r.GOOne.WallTime), report.Seconds(r.ZeroShot.WallTime), report.Seconds(r.FineTuned.WallTime)}, " / "),
		})
	}
	s := g.Summary
	rows = append(rows, []string{"geomean", "", "", "", "", "", "", "",
		geoCell(s.BestSpeedUp, "x"), geoCell(s.GOOneSpeedUp, "x"), geoCell(s.ZeroShotSpeedUp, "x"), geoCell(s.FineTunedSpeedUp, "x"),
		geoCell(s.FineTunedOverGOOne, ""), ""})
	header := []string{"held out", "test graph", "ops", "expert (ms)", "best baseline (ms)", "GO-one (ms)", "zero-shot (ms)", "fine-tuned (ms)",
		"best vs expert", "GO-one vs expert", "zero-shot vs expert", "fine-tuned vs expert", "fine-tuned / GO-one",
		"wall: pre-train / GO-one / zero-shot / fine-tune"}
	// Where it is too wide: the wall times, the op counts, then the step
	// times the speed-ups are made of.
	if err := report.TableFit(w, header, rows, []int{13, 2, 3, 4, 5, 6, 7}); err != nil {
		return err
	}
	fmt.Fprintln(w, "speed-up: expert step / step; fine-tuned / GO-one: fine-tuned step / GO-one step (below 1: fine-tuned is faster); OOM: runs out of memory")
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	for _, c := range []Check{s.ZeroShotBeatsExpert, s.FineTunedNearGOOne} {
		fmt.Fprintf(w, "%s: %s: %v\n", c.Claim, c.Measured, c.Holds)
	}
	return nil
}

func ratioCell(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// StepsOrTime describes a budget of steps and wall time in seconds (0 =
// none).
func StepsOrTime(steps int, sec float64) string {
	switch {
	case steps > 0 && sec > 0:
		return fmt.Sprintf("%d steps or %s", steps, report.Seconds(sec))
	case sec > 0:
		return report.Seconds(sec)
	default:
		return fmt.Sprintf("%d steps", steps)
	}
}

// GeneralizationPlot draws GDP fig. 2: per held-out family, grouped bars
// of the speed-up over the expert placement of the best baseline, GO-one,
// zero-shot and fine-tuned, with the expert at 1 (a missing or invalid
// decision has no bar).
func GeneralizationPlot(g Generalization) report.BarPlot {
	bp := report.BarPlot{
		Title:  fmt.Sprintf("Held-out families on %d x %s: speed-up over the expert placement", g.Devices, g.Hardware),
		YLabel: "speed-up over expert (expert step / step)",
		Ref:    1, RefName: "expert",
	}
	series := []report.BarSeries{{Name: "best baseline"}, {Name: "GO-one"}, {Name: "zero-shot"}, {Name: "fine-tuned"}}
	for _, r := range g.Rows {
		bp.Groups = append(bp.Groups, r.Family)
		for i, v := range []float64{r.BestSpeedUp, r.GOOneSpeedUp, r.ZeroShotSpeedUp, r.FineTunedSpeedUp} {
			series[i].Values = append(series[i].Values, v)
		}
	}
	bp.Series = series
	return bp
}
