package placements

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/placer/placer/report"
)

// EqualTime is the equal-budget comparison of `placer report equal-time`: every method
// given the same wall time (or CPU time) on each graph, its step time as a ratio to the
// graph's reference (the best quick baseline, fewer-GPU decisions
// included).
type EqualTime struct {
	Hardware string `json:"hardware"`
	Seed     uint64 `json:"seed"`
	// Seeds are the seeds of a report combined from several (equal-time
	// --seeds, CombineSeeds): its cells are their geometric means.
	Seeds   []uint64  `json:"seeds,omitempty"`
	Budgets []float64 `json:"budgets_s"` // wall time (or CPU time, with CPU) per method and graph
	// CPU says the budgets are CPU time of the process (all threads), not
	// wall time.
	CPU     bool     `json:"cpu_budgets,omitempty"`
	Methods []string `json:"methods"`
	// Lead is the method the claims are about: the graphs where it is
	// ahead of each other method and its geometric-mean margin ("" reads
	// as go, the reports kept before it was recorded).
	Lead string `json:"lead,omitempty"`
	// Objective is what the methods minimised and the ratios compare:
	// "step-time" or "peak-memory" ("" reads as step-time).
	Objective string `json:"objective"`
	// Model names the pre-trained model of the methods that take one
	// (file and sha256 prefix); "" = the embedded default model or none.
	Model   string            `json:"model,omitempty"`
	Graphs  []EqualTimeGraph  `json:"graphs"`
	Summary []EqualTimeBudget `json:"summary"` // one per budget
}

// EqualTimeGraph is one graph's row: its reference and every cell.
type EqualTimeGraph struct {
	Graph     string  `json:"graph"`
	Ops       int     `json:"ops"`
	Devices   int     `json:"devices"`
	Reference string  `json:"reference"`        // the best quick baseline
	RefStep   float64 `json:"reference_step_s"` // its step time
	// RefObjective is its objective value (seconds or bytes): the
	// ratios' denominator.
	RefObjective float64         `json:"reference_objective"`
	RefTime      float64         `json:"reference_wall_s"`        // wall time of the quick baselines
	Cells        []EqualTimeCell `json:"cells"`                   // methods x budgets, method-major
	Error        string          `json:"error,omitempty"`         // why the graph has no cells
	Note         string          `json:"note,omitempty"`          // e.g. "no valid reference"
	Missing      int             `json:"missing_cells,omitempty"` // cells not run yet (interrupted)
	// CascadeFrom is the row on fewer GPUs whose results the methods
	// started from (equal-time --cascade; "" = none).
	CascadeFrom string `json:"cascade_from,omitempty"`
	// RefBySeed is each seed's reference objective in a report combined
	// from several seeds, when they differ (the quick baselines that draw
	// with the seed can give another best): each seed's ratios are to its
	// own reference, Reference and RefObjective are the first seed's.
	RefBySeed []float64 `json:"reference_objective_by_seed,omitempty"`
}

// EqualTimeCell is one method on one graph at one budget.
type EqualTimeCell struct {
	Method      string  `json:"method"`
	Budget      float64 `json:"budget_s"`
	StepTime    float64 `json:"step_time_s"` // 0 = failed or not run
	Objective   float64 `json:"objective"`   // the objective's value (seconds or bytes)
	Valid       bool    `json:"valid"`       // under the objective
	Ratio       float64 `json:"ratio"`       // objective / the reference's; 0 = none
	Wall        float64 `json:"wall_s"`
	CPU         float64 `json:"cpu_s"` // process CPU time (all threads)
	Evaluations int     `json:"evaluations"`
	Steps       int     `json:"steps"`
	Status      string  `json:"status,omitempty"`
	Error       string  `json:"error,omitempty"`
	// From is the row on fewer GPUs whose decision of the same method
	// was this cell's start candidate (equal-time --cascade); FromKept
	// says the method found nothing better, so the cell's result is it.
	From     string `json:"cascade_from,omitempty"`
	FromKept bool   `json:"cascade_kept,omitempty"`
	// SeedRatios are the ratio of each seed, in EqualTime.Seeds' order,
	// in a report combined from several seeds (Ratio is their geometric
	// mean).
	SeedRatios []float64 `json:"seed_ratios,omitempty"`
}

// EqualTimeBudget summarizes one budget: per method the geometric mean of the
// ratios over the graphs where every method has a valid cell, and the
// claims of the issue as measured.
type EqualTimeBudget struct {
	Budget  float64            `json:"budget_s"`
	Graphs  int                `json:"graphs"` // graphs in the geometric means
	GeoMean map[string]float64 `json:"geomean_ratio"`
	CPU     map[string]float64 `json:"mean_cpu_s"`
	// Ahead counts, per other method, the graphs where the lead method
	// (EqualTime.Lead) is strictly ahead of it; Margin is the lead's
	// geometric-mean margin over it (0.03 = the lead's step 3% shorter).
	Ahead  map[string]int     `json:"lead_ahead_of"`
	Margin map[string]float64 `json:"lead_margin_over"`
	// LearningWins counts, per learned method M with an ablation
	// "M-no-learning" in the table, the graphs where M beats it.
	LearningWins map[string]int `json:"learning_beats_no_learning"`
	// PretrainingWins counts, per method M-pretrained... with its
	// untrained twin (M... without "-pretrained") in the table, the
	// graphs where the pre-trained network beats the untrained one.
	PretrainingWins map[string]int `json:"pretrained_beats_untrained"`
	// MoreGPUs is the check "never worse with more GPUs" (docs/search.md),
	// per method:
	// over the pairs of rows that are one graph on N and N/2 GPUs
	// (GPUPairs), where the N-GPU result is worse.
	MoreGPUs map[string]MoreGPUsCheck `json:"more_gpus"`
	// With several seeds (EqualTime.Seeds): Runs is the graphs in the
	// geometric means times the seeds; AheadRuns counts, per other
	// method, the runs (a graph and a seed) where the lead is strictly
	// ahead of it on the same seed; LearningRuns likewise for learning
	// against its ablation; Spread is each method's median over the
	// graphs of its seed-to-seed spread (largest ratio over smallest,
	// minus 1): the noise one draw carries.
	Runs         int                `json:"runs,omitempty"`
	AheadRuns    map[string]int     `json:"lead_ahead_runs,omitempty"`
	LearningRuns map[string]int     `json:"learning_beats_no_learning_runs,omitempty"`
	Spread       map[string]float64 `json:"median_seed_spread,omitempty"`
	// With several seeds, LeadPaired (per other method) and
	// LearningPaired (per learned method against its ablation) are those
	// comparisons per graph, paired by seed, with a 95% confidence
	// interval: the graphs where the difference is beyond the seeds'
	// noise, either way, and those where it is within it.
	LeadPaired     map[string]*PairedTally `json:"lead_paired,omitempty"`
	LearningPaired map[string]*PairedTally `json:"learning_paired,omitempty"`
}

// MoreGPUsCheck is one method's "never worse with more GPUs" check.
type MoreGPUsCheck struct {
	Pairs int      `json:"pairs"` // pairs where both cells have a valid result
	Worse []string `json:"worse,omitempty"`
}

// GPUPairs returns the pairs of rows (indices into gs) that are one graph
// on N and N/2 GPUs: the same name but for a trailing GPU count (rnnlm2,
// rnnlm4), the same number of ops, twice the devices. The first of a
// pair is the N/2-GPU row.
func GPUPairs(gs []EqualTimeGraph) [][2]int {
	stem := func(n string) string { return strings.TrimRight(n, "0123456789") }
	var out [][2]int
	for i := range gs {
		for j := range gs {
			a, b := &gs[i], &gs[j]
			if a.Devices > 0 && b.Devices == 2*a.Devices && a.Ops == b.Ops && a.Ops > 0 && stem(a.Graph) == stem(b.Graph) && stem(a.Graph) != "" {
				out = append(out, [2]int{i, j})
			}
		}
	}
	return out
}

// value is a cell's objective value (its step time for cells kept
// before the objective was recorded).
func (c *EqualTimeCell) value() float64 {
	if c.Objective > 0 {
		return c.Objective
	}
	return c.StepTime
}

// untrainedTwin is the method a "-pretrained" method is compared with: the
// same method from an untrained network ("" = none).
func untrainedTwin(m string) string {
	if !strings.Contains(m, "-pretrained") {
		return ""
	}
	return strings.Replace(m, "-pretrained", "", 1)
}

// LeadMethod is the method the claims are about: Lead, or go when it is
// not recorded.
func (b *EqualTime) LeadMethod() string {
	if b.Lead == "" {
		return "go"
	}
	return b.Lead
}

// Cell returns the cell of method at budget b, if any.
func (g *EqualTimeGraph) Cell(method string, b float64) *EqualTimeCell {
	for i := range g.Cells {
		if c := &g.Cells[i]; c.Method == method && c.Budget == b {
			return c
		}
	}
	return nil
}

// Summarize fills b.Summary from the cells.
func (b *EqualTime) Summarize() {
	b.Summary = b.Summary[:0]
	lead := b.LeadMethod()
	for _, budget := range b.Budgets {
		s := EqualTimeBudget{Budget: budget, GeoMean: map[string]float64{}, CPU: map[string]float64{}, Ahead: map[string]int{}, Margin: map[string]float64{}, LearningWins: map[string]int{}, PretrainingWins: map[string]int{}}
		logs := map[string]float64{}
		cpu := map[string]float64{}
		seeds := len(b.Seeds)
		spreads := map[string][]float64{}
		if seeds > 1 {
			s.AheadRuns, s.LearningRuns, s.Spread = map[string]int{}, map[string]int{}, map[string]float64{}
			s.LeadPaired, s.LearningPaired = map[string]*PairedTally{}, map[string]*PairedTally{}
		}
		for gi := range b.Graphs {
			g := &b.Graphs[gi]
			complete := true
			for _, m := range b.Methods {
				if c := g.Cell(m, budget); c == nil || c.Ratio <= 0 {
					complete = false
				}
			}
			if !complete {
				continue
			}
			s.Graphs++
			for _, m := range b.Methods {
				c := g.Cell(m, budget)
				logs[m] += math.Log(c.Ratio)
				cpu[m] += c.CPU
				if seeds > 1 {
					spreads[m] = append(spreads[m], c.spread())
				}
			}
			if seeds > 1 {
				s.Runs += seeds
				s.countRuns(g, lead, b.Methods, budget, seeds)
			}
			if gc := g.Cell(lead, budget); gc != nil {
				for _, m := range b.Methods {
					if c := g.Cell(m, budget); m != lead && c.Ratio > gc.Ratio {
						s.Ahead[m]++
					}
				}
			}
			for _, m := range b.Methods {
				c, nl := g.Cell(m, budget), g.Cell(m+"-no-learning", budget)
				if c != nil && nl != nil {
					s.LearningWins[m] = s.LearningWins[m] // the key says the pair ran
					if c.Ratio < nl.Ratio {
						s.LearningWins[m]++
					}
				}
				if t := untrainedTwin(m); t != "" {
					if c, u := g.Cell(m, budget), g.Cell(t, budget); c != nil && u != nil {
						s.PretrainingWins[m] = s.PretrainingWins[m]
						if c.Ratio < u.Ratio {
							s.PretrainingWins[m]++
						}
					}
				}
			}
		}
		s.MoreGPUs = map[string]MoreGPUsCheck{}
		for _, pr := range GPUPairs(b.Graphs) {
			lo, hi := &b.Graphs[pr[0]], &b.Graphs[pr[1]]
			for _, m := range b.Methods {
				cl, ch := lo.Cell(m, budget), hi.Cell(m, budget)
				if cl == nil || ch == nil || cl.Ratio <= 0 || ch.Ratio <= 0 {
					continue
				}
				chk := s.MoreGPUs[m]
				chk.Pairs++
				if ch.value() > cl.value() {
					chk.Worse = append(chk.Worse, fmt.Sprintf("%s %s > %s %s", hi.Graph, ObjectiveValue(b.Objective, ch.value()), lo.Graph, ObjectiveValue(b.Objective, cl.value())))
				}
				s.MoreGPUs[m] = chk
			}
		}
		for m, sp := range spreads {
			s.Spread[m] = median(sp)
		}
		if s.Graphs > 0 {
			n := float64(s.Graphs)
			for _, m := range b.Methods {
				s.GeoMean[m] = math.Exp(logs[m] / n)
				s.CPU[m] = cpu[m] / n
			}
			if g, ok := s.GeoMean[lead]; ok {
				for _, m := range b.Methods {
					if m != lead {
						s.Margin[m] = 1 - g/s.GeoMean[m]
					}
				}
			}
		}
		b.Summary = append(b.Summary, s)
	}
}

// WriteEqualTime prints one table per budget: a row per graph with each
// method's step time over the reference (lower is better; the best of
// the row marked *), a geometric-mean row and a mean CPU-seconds row,
// then the claims as measured.
func WriteEqualTime(w io.Writer, b EqualTime) error {
	w, flush := report.FitLines(w)
	defer flush()
	for bi, budget := range b.Budgets {
		fmt.Fprintf(w, "\nbudget %s %s per method and graph (%s, %s): %s / reference (the best quick baseline); lower is better, * = best of the row\n",
			report.Seconds(budget), b.budgetKind(), b.Hardware, b.seedText(), ObjectiveTitle(b.Objective))
		if b.Model != "" {
			fmt.Fprintf(w, "pre-trained model: %s\n", b.Model)
		}
		header := append([]string{"graph", "GPUs", "reference"}, b.Methods...)
		var rows [][]string
		for _, g := range b.Graphs {
			refV := g.RefObjective
			if refV == 0 && (b.Objective == "" || b.Objective == "step-time") {
				refV = g.RefStep // cells kept before the objective was recorded
			}
			row := []string{g.Graph, fmt.Sprint(g.Devices), g.Reference + " " + ObjectiveValue(b.Objective, refV)}
			switch {
			case g.Error != "":
				row[2] = "error: " + g.Error
			case g.Reference == "" && g.Note != "":
				row[2] = g.Note
			case g.CascadeFrom != "":
				row[2] += " (+ " + g.CascadeFrom + "'s results)"
			}
			if len(g.RefBySeed) > 0 {
				row[2] += " (first seed's; differs by seed)"
			}
			best := math.Inf(1)
			for _, m := range b.Methods {
				if c := g.Cell(m, budget); c != nil && c.Ratio > 0 {
					best = math.Min(best, c.Ratio)
				}
			}
			for _, m := range b.Methods {
				c := g.Cell(m, budget)
				switch {
				case c == nil:
					row = append(row, "-")
				case c.Error != "":
					row = append(row, "failed")
				case c.Ratio <= 0:
					row = append(row, "invalid")
				default:
					mark := ""
					if c.Ratio == best {
						mark = "*"
					}
					row = append(row, fmt.Sprintf("%.3f%s", c.Ratio, mark))
				}
			}
			rows = append(rows, row)
		}
		if bi < len(b.Summary) {
			s := b.Summary[bi]
			gm := []string{"geometric mean", "", fmt.Sprintf("%d graphs", s.Graphs)}
			cpu := []string{"mean CPU s", "", ""}
			for _, m := range b.Methods {
				if v, ok := s.GeoMean[m]; ok {
					gm = append(gm, fmt.Sprintf("%.3f", v))
					cpu = append(cpu, fmt.Sprintf("%.0f", s.CPU[m]))
				} else {
					gm, cpu = append(gm, "-"), append(cpu, "-")
				}
			}
			rows = append(rows, gm, cpu)
			if len(s.Spread) > 0 {
				sp := []string{"median seed spread", "", ""}
				for _, m := range b.Methods {
					if v, ok := s.Spread[m]; ok {
						sp = append(sp, fmt.Sprintf("%.1f%%", 100*v))
					} else {
						sp = append(sp, "-")
					}
				}
				rows = append(rows, sp)
			}
		}
		if err := report.Table(w, header, rows); err != nil {
			return err
		}
		if bi < len(b.Summary) && b.Summary[bi].Graphs > 0 {
			s := b.Summary[bi]
			var parts []string
			lead := b.LeadMethod()
			for _, m := range b.Methods {
				if m == lead {
					continue
				}
				if _, ok := s.Margin[m]; ok {
					runs := ""
					if s.Runs > 0 {
						runs = fmt.Sprintf(" (%d/%d runs)", s.AheadRuns[m], s.Runs)
					}
					parts = append(parts, fmt.Sprintf("%s %d/%d graphs%s, %+.1f%%", m, s.Ahead[m], s.Graphs, runs, 100*s.Margin[m]))
				}
			}
			if len(parts) > 0 {
				fmt.Fprintf(w, "%s ahead of: %s (geometric-mean margin; negative = %s behind)\n", lead, strings.Join(parts, "; "), lead)
			}
			for _, m := range b.Methods {
				if t := s.LeadPaired[m]; t != nil && m != lead+"-no-learning" { // learning's line says it
					fmt.Fprintf(w, "%s against %s, paired by seed: %s\n", lead, m, t.text(lead+"/"+m))
				}
			}
			for _, m := range b.Methods {
				if wins, ok := s.LearningWins[m]; ok {
					runs := ""
					if r, ok := s.LearningRuns[m]; ok && s.Runs > 0 {
						runs = fmt.Sprintf(" (%d of %d runs)", r, s.Runs)
					}
					fmt.Fprintf(w, "%s: learning on beats learning off (%s-no-learning) on %d of %d graphs%s\n", m, m, wins, s.Graphs, runs)
				}
				if t := s.LearningPaired[m]; t != nil {
					fmt.Fprintf(w, "%s against %s-no-learning, paired by seed: %s\n", m, m, t.text(m+"/no-learning"))
				}
			}
			for _, m := range b.Methods {
				if chk, ok := s.MoreGPUs[m]; ok {
					line := fmt.Sprintf("%s: more GPUs never worse on %d of %d pairs (N against N/2 GPUs)", m, chk.Pairs-len(chk.Worse), chk.Pairs)
					if len(chk.Worse) > 0 {
						line += "; worse: " + strings.Join(chk.Worse, ", ")
					}
					fmt.Fprintln(w, line)
				}
			}
			for _, m := range b.Methods {
				if wins, ok := s.PretrainingWins[m]; ok {
					fmt.Fprintf(w, "%s: the pre-trained network beats the untrained one (%s) on %d of %d graphs\n", m, untrainedTwin(m), wins, s.Graphs)
				}
			}
		}
	}
	return nil
}

// seedText names the seed, or the seeds a combined report averages.
func (b EqualTime) seedText() string {
	if len(b.Seeds) < 2 {
		return fmt.Sprintf("seed %d", b.Seed)
	}
	ss := make([]string, len(b.Seeds))
	for i, s := range b.Seeds {
		ss[i] = fmt.Sprint(s)
	}
	return "seeds " + strings.Join(ss, ",") + ": each cell the geometric mean of its seeds"
}

// budgetKind is what the budgets measure: "wall time" or "CPU time".
func (b EqualTime) budgetKind() string {
	if b.CPU {
		return "CPU time"
	}
	return "wall time"
}

// EqualTimePlot draws each method's geometric-mean ratio against the budget.
func EqualTimePlot(b EqualTime) report.Plot {
	p := report.Plot{Title: "equal " + b.budgetKind() + ": step / best quick baseline (geometric mean)", XLabel: "budget per method and graph (s of " + b.budgetKind() + ")", YLabel: "step / reference"}
	for _, m := range b.Methods {
		var x, y []float64
		for _, s := range b.Summary {
			if v, ok := s.GeoMean[m]; ok {
				x, y = append(x, s.Budget), append(y, v)
			}
		}
		p.Series = append(p.Series, report.Series{Name: m, X: x, Y: y})
	}
	return p
}

// EqualTimeBars draws the last budget's ratios as grouped bars: a group
// per graph and one for the geometric mean, a bar per method, the
// reference at 1.
func EqualTimeBars(b EqualTime) report.BarPlot {
	bi := len(b.Budgets) - 1
	bp := report.BarPlot{YLabel: "step / reference (lower is better)", Ref: 1, RefName: "reference (best quick baseline)"}
	if bi < 0 {
		return bp
	}
	budget := b.Budgets[bi]
	bp.Title = fmt.Sprintf("equal %s, %s per method and graph", b.budgetKind(), report.Seconds(budget))
	for _, g := range b.Graphs {
		bp.Groups = append(bp.Groups, g.Graph)
	}
	bp.Groups = append(bp.Groups, "geometric mean")
	for _, m := range b.Methods {
		se := report.BarSeries{Name: m}
		for gi := range b.Graphs {
			v := 0.0
			if c := b.Graphs[gi].Cell(m, budget); c != nil && c.Ratio > 0 {
				v = c.Ratio
			}
			se.Values = append(se.Values, v)
		}
		v := 0.0
		if bi < len(b.Summary) {
			v = b.Summary[bi].GeoMean[m]
		}
		se.Values = append(se.Values, v)
		bp.Series = append(bp.Series, se)
	}
	return bp
}

// WriteEqualTimePlot plots b to path: each method's geometric mean
// against the budget when there are several budgets (EqualTimePlot),
// else grouped bars per graph (EqualTimeBars).
func WriteEqualTimePlot(path string, b EqualTime) error {
	if len(b.Budgets) > 1 {
		return report.WritePlot(path, EqualTimePlot(b))
	}
	return report.WriteBarPlot(path, EqualTimeBars(b))
}
