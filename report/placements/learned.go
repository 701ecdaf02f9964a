package placements

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/placer/placer/report"
)

// Learned is the comparison of the learned methods of `placer report
// learned` (docs/learned.md): on each graph, every method given the same
// wall time (or CPU time), its step time against the expert placement's, the
// time it took to beat the expert, and its learning curve.
type Learned struct {
	Hardware string    `json:"hardware"`
	Seed     uint64    `json:"seed"`
	Budgets  []float64 `json:"budgets_s"` // wall time (or CPU time, with CPU) per method and graph
	// CPU says the budgets, and every time of the curves and the
	// summary, are CPU time of the process (all threads), not wall time.
	CPU     bool            `json:"cpu_budgets,omitempty"`
	Methods []string        `json:"methods"`
	Graphs  []LearnedGraph  `json:"graphs"`
	Summary []LearnedBudget `json:"summary"` // one per budget
}

// LearnedGraph is one graph: its expert, its reference and every cell.
type LearnedGraph struct {
	Graph   string `json:"graph"`
	Ops     int    `json:"ops"`
	Devices int    `json:"devices"`
	// ExpertStep is the step time of the expert placement; 0 when the
	// graph has none or it is invalid (ExpertNote says which).
	ExpertStep float64 `json:"expert_step_s"`
	ExpertNote string  `json:"expert_note,omitempty"`
	// Reference is the best quick baseline: the anchor of the methods
	// that take one (go), computed once per graph, outside the budgets.
	Reference string        `json:"reference"`
	RefStep   float64       `json:"reference_step_s"`
	RefTime   float64       `json:"reference_wall_s"`        // wall time of the quick baselines
	Cells     []LearnedCell `json:"cells"`                   // methods x budgets, method-major
	Error     string        `json:"error,omitempty"`         // why the graph has no cells
	Note      string        `json:"note,omitempty"`          // e.g. "no valid reference"
	Missing   int           `json:"missing_cells,omitempty"` // cells not run yet (interrupted, or not kept with --no-run)
}

// LearnedCell is one method on one graph at one budget.
type LearnedCell struct {
	Method   string  `json:"method"`
	Budget   float64 `json:"budget_s"`
	StepTime float64 `json:"step_time_s"` // the best decision's; 0 = failed
	Valid    bool    `json:"valid"`
	// Ratio is StepTime over the expert's step time (0 = no valid
	// decision or no expert); below 1 beats the expert.
	Ratio float64 `json:"expert_ratio"`
	// BeatExpert says whether the curve went below the expert's step
	// time, and ToBeat when: the first point of the curve below it, in
	// seconds of the budget's kind (wall or CPU) from the run's start.
	BeatExpert  bool    `json:"beat_expert"`
	ToBeat      float64 `json:"time_to_beat_expert_s,omitempty"`
	Wall        float64 `json:"wall_s"`
	CPU         float64 `json:"cpu_s"` // process CPU time (all threads)
	Evaluations int     `json:"evaluations"`
	Steps       int     `json:"steps"`
	Status      string  `json:"status,omitempty"`
	Error       string  `json:"error,omitempty"`
	// Curve is the best valid step time so far, one point per step of
	// the method where it improved, and a last point at the end of the
	// run.
	Curve []LearnedPoint `json:"curve"`
}

// LearnedPoint is a point of a learning curve.
type LearnedPoint struct {
	Wall        float64 `json:"wall_s"` // since the run's start
	CPU         float64 `json:"cpu_s"`  // process CPU time since the run's start
	Evaluations int     `json:"evaluations"`
	BestStep    float64 `json:"best_step_s"` // best valid step time so far
}

// time is the point's time in the budget's kind.
func (p LearnedPoint) time(cpu bool) float64 {
	if cpu {
		return p.CPU
	}
	return p.Wall
}

// TimeToReach is the time (CPU time if cpu, else wall time) of the first
// point of curve whose best step is below step (at or below it when
// orEqual); ok is false when no point is.
func TimeToReach(curve []LearnedPoint, step float64, orEqual, cpu bool) (t float64, ok bool) {
	for _, p := range curve {
		if p.BestStep > 0 && (p.BestStep < step || orEqual && p.BestStep == step) {
			return p.time(cpu), true
		}
	}
	return 0, false
}

// LearnedBudget summarizes one budget: how many graphs each method beat
// the expert on, and the papers' two claims about GO and HDP as
// measured (when both "go" and "hdp" ran).
type LearnedBudget struct {
	Budget float64 `json:"budget_s"`
	// ExpertGraphs counts the graphs with a valid expert placement;
	// BeatExpert, per method, those where it beat it.
	ExpertGraphs int            `json:"expert_graphs"`
	BeatExpert   map[string]int `json:"beat_expert"`
	// Pairs counts the graphs where go and hdp both have a valid
	// decision, GoAhead those where go's step time is strictly shorter,
	// and GoOverHDP is the geometric mean over them of go's step over
	// hdp's (below 1: go ahead; GDP reports 1/1.092 for GDP, GO 1/1.18).
	Pairs     int     `json:"go_hdp_graphs"`
	GoAhead   int     `json:"go_ahead_of_hdp"`
	GoOverHDP float64 `json:"go_over_hdp_geomean,omitempty"`
	// Reach is, per such graph, when go reached hdp's final step time;
	// Holds counts the graphs where it did in a fifteenth of the budget.
	Reach []LearnedReach `json:"go_reaches_hdp_final,omitempty"`
	Holds int            `json:"fifteenth_holds"`
}

// LearnedReach is the claim "GO reaches HDP's final step time in a
// fifteenth of the time" on one graph, from the two curves.
type LearnedReach struct {
	Graph   string  `json:"graph"`
	HDPStep float64 `json:"hdp_final_step_s"`
	// Reached says go's curve got to HDPStep (at or below it), GoTime
	// when, and Fraction is GoTime over the budget.
	Reached  bool    `json:"reached"`
	GoTime   float64 `json:"go_time_s,omitempty"`
	Fraction float64 `json:"fraction_of_budget,omitempty"`
	// HDPTime is when hdp itself first reached its final step time.
	HDPTime float64 `json:"hdp_time_s"`
	Holds   bool    `json:"holds"` // Reached and Fraction <= 1/15
}

// Cell returns the cell of method at budget b, if any.
func (g *LearnedGraph) Cell(method string, b float64) *LearnedCell {
	for i := range g.Cells {
		if c := &g.Cells[i]; c.Method == method && c.Budget == b {
			return c
		}
	}
	return nil
}

// Summarize fills each cell's ratio and time to beat the expert from the
// graph's expert and the cell's curve, and l.Summary.
func (l *Learned) Summarize() {
	for gi := range l.Graphs {
		g := &l.Graphs[gi]
		for ci := range g.Cells {
			c := &g.Cells[ci]
			c.Ratio, c.BeatExpert, c.ToBeat = 0, false, 0
			if c.Valid && c.StepTime > 0 && g.ExpertStep > 0 {
				c.Ratio = c.StepTime / g.ExpertStep
			}
			if g.ExpertStep > 0 {
				c.ToBeat, c.BeatExpert = TimeToReach(c.Curve, g.ExpertStep, false, l.CPU)
			}
		}
	}
	l.Summary = l.Summary[:0]
	for _, budget := range l.Budgets {
		s := LearnedBudget{Budget: budget, BeatExpert: map[string]int{}}
		logs := 0.0
		for gi := range l.Graphs {
			g := &l.Graphs[gi]
			if g.ExpertStep > 0 {
				s.ExpertGraphs++
				for _, m := range l.Methods {
					s.BeatExpert[m] += 0 // the key says the method ran
					if c := g.Cell(m, budget); c != nil && c.BeatExpert {
						s.BeatExpert[m]++
					}
				}
			}
			gc, hc := g.Cell("go", budget), g.Cell("hdp", budget)
			if gc == nil || hc == nil || !gc.Valid || !hc.Valid || gc.StepTime <= 0 || hc.StepTime <= 0 {
				continue
			}
			s.Pairs++
			logs += math.Log(gc.StepTime / hc.StepTime)
			if gc.StepTime < hc.StepTime {
				s.GoAhead++
			}
			r := LearnedReach{Graph: g.Graph, HDPStep: hc.StepTime}
			r.HDPTime, _ = TimeToReach(hc.Curve, hc.StepTime, true, l.CPU)
			if r.GoTime, r.Reached = TimeToReach(gc.Curve, hc.StepTime, true, l.CPU); r.Reached {
				r.Fraction = r.GoTime / budget
				r.Holds = r.Fraction <= 1.0/15
			}
			if r.Holds {
				s.Holds++
			}
			s.Reach = append(s.Reach, r)
		}
		if s.Pairs > 0 {
			s.GoOverHDP = math.Exp(logs / float64(s.Pairs))
		}
		l.Summary = append(l.Summary, s)
	}
}

// budgetKind is what the budgets measure: "wall time" or "CPU time".
func (l Learned) budgetKind() string {
	if l.CPU {
		return "CPU time"
	}
	return "wall time"
}

// WriteLearned prints one table per budget, a row per graph and method:
// the step time reached, its ratio to the expert's, the time to beat the
// expert, the evaluations and the CPU seconds; then how many graphs each
// method beat the expert on and the claims about GO and HDP as measured.
func WriteLearned(w io.Writer, l Learned) error {
	w, flush := report.FitLines(w)
	defer flush()
	kind := l.budgetKind()
	for bi, budget := range l.Budgets {
		fmt.Fprintf(w, "\nbudget %s %s per method and graph (%s, seed %d): step time reached, over the expert placement's (below 1 beats it), and the %s it took to beat the expert\n",
			report.Seconds(budget), kind, l.Hardware, l.Seed, kind)
		header := []string{"graph", "GPUs", "expert", "method", "step time", "/ expert", "to beat expert", "evaluations", "CPU s"}
		var rows [][]string
		for _, g := range l.Graphs {
			expert := report.Seconds(g.ExpertStep)
			switch {
			case g.Error != "":
				expert = "error: " + g.Error
			case g.ExpertStep <= 0:
				expert = g.ExpertNote
			}
			first := true
			for _, m := range l.Methods {
				row := []string{"", "", "", m}
				if first {
					row[0], row[1], row[2] = g.Graph, fmt.Sprint(g.Devices), expert
					first = false
				}
				c := g.Cell(m, budget)
				switch {
				case c == nil:
					row = append(row, "-", "-", "-", "-", "-")
				case c.Error != "":
					row = append(row, "failed", "-", "-", fmt.Sprint(c.Evaluations), fmt.Sprintf("%.0f", c.CPU))
				default:
					step, ratio, beat := "invalid", "-", "-"
					if c.Valid {
						step = report.Seconds(c.StepTime)
					}
					if c.Ratio > 0 {
						ratio = fmt.Sprintf("%.3f", c.Ratio)
					}
					if g.ExpertStep > 0 {
						beat = "never"
						if c.BeatExpert {
							beat = report.Seconds(c.ToBeat)
						}
					}
					row = append(row, step, ratio, beat, fmt.Sprint(c.Evaluations), fmt.Sprintf("%.0f", c.CPU))
				}
				rows = append(rows, row)
			}
			if first { // no methods
				rows = append(rows, []string{g.Graph, fmt.Sprint(g.Devices), expert, "", "", "", "", "", ""})
			}
		}
		if err := report.Table(w, header, rows); err != nil {
			return err
		}
		for _, g := range l.Graphs {
			if g.Reference != "" {
				fmt.Fprintf(w, "%s: reference (go's anchor) %s %s, from the quick baselines in %s of wall time outside the budget%s\n",
					g.Graph, g.Reference, report.Seconds(g.RefStep), report.Seconds(g.RefTime), noteSuffix(g.Note))
			} else if g.Note != "" {
				fmt.Fprintf(w, "%s: %s\n", g.Graph, g.Note)
			}
			if g.Missing > 0 {
				fmt.Fprintf(w, "%s: %d of %d cells missing (not run yet, or not kept)\n", g.Graph, g.Missing, len(l.Methods)*len(l.Budgets))
			}
		}
		if bi >= len(l.Summary) {
			continue
		}
		s := l.Summary[bi]
		if s.ExpertGraphs > 0 {
			var parts []string
			for _, m := range l.Methods {
				parts = append(parts, fmt.Sprintf("%s %d/%d", m, s.BeatExpert[m], s.ExpertGraphs))
			}
			fmt.Fprintf(w, "beat the expert (graphs with a valid expert placement): %s\n", strings.Join(parts, ", "))
		}
		if s.Pairs > 0 {
			fmt.Fprintf(w, "go ahead of hdp on %d of %d graphs; go's step time over hdp's, geometric mean %.3f: go's %.1f%% shorter, hdp's %.3fx go's (GDP reports 9.2%% faster placements than HDP, GO 18%%)\n",
				s.GoAhead, s.Pairs, s.GoOverHDP, 100*(1-s.GoOverHDP), 1/s.GoOverHDP)
			fmt.Fprintf(w, "go reaching hdp's final step time in a fifteenth of the budget (%s %s): holds on %d of %d graphs\n",
				report.Seconds(budget/15), kind, s.Holds, s.Pairs)
			for _, r := range s.Reach {
				verdict := "does not hold"
				if r.Holds {
					verdict = "holds"
				}
				if !r.Reached {
					fmt.Fprintf(w, "  %s: go never reached hdp's final %s (hdp reached it at %s): %s\n", r.Graph, report.Seconds(r.HDPStep), report.Seconds(r.HDPTime), verdict)
					continue
				}
				fmt.Fprintf(w, "  %s: go reached hdp's final %s at %s = %.3f of the budget (hdp reached it at %s): %s\n",
					r.Graph, report.Seconds(r.HDPStep), report.Seconds(r.GoTime), r.Fraction, report.Seconds(r.HDPTime), verdict)
			}
		}
	}
	return nil
}

func noteSuffix(note string) string {
	if note == "" {
		return ""
	}
	return " (" + note + ")"
}

// LearnedPlot draws the learning curves of every method on graph g at
// budget b: the best step time so far (ms) against the time since the
// run's start, as stairs, with dashed lines at the expert's step time
// and the reference's.
func LearnedPlot(l Learned, g LearnedGraph, b float64) report.Plot {
	kind := l.budgetKind()
	p := report.Plot{Title: fmt.Sprintf("%s on %d GPUs, %s of %s per method: best step so far", g.Graph, g.Devices, report.Seconds(b), kind),
		XLabel: "s of " + kind + " since the method's start", YLabel: "best step time (ms)", LegendTop: true}
	end := b
	for _, m := range l.Methods {
		c := g.Cell(m, b)
		if c == nil {
			continue
		}
		var x, y []float64
		for i, pt := range c.Curve {
			t := pt.time(l.CPU)
			if i > 0 { // stairs: hold the last best until this point
				x, y = append(x, t), append(y, y[len(y)-1])
			}
			x, y = append(x, t), append(y, 1e3*pt.BestStep)
			end = max(end, t)
		}
		p.Series = append(p.Series, report.Series{Name: m, X: x, Y: y})
	}
	if g.ExpertStep > 0 {
		p.Series = append(p.Series, report.Series{Name: "expert", X: []float64{0, end}, Y: []float64{1e3 * g.ExpertStep, 1e3 * g.ExpertStep}, Dash: true})
	}
	if g.RefStep > 0 {
		p.Series = append(p.Series, report.Series{Name: "reference (" + g.Reference + ", go's anchor)", X: []float64{0, end}, Y: []float64{1e3 * g.RefStep, 1e3 * g.RefStep}, Dash: true})
	}
	return p
}

// LearnedPlotPath is the file of graph's plot at budget b in dir:
// DIR/<graph>@<GPUs>-<budget>s.<ext>.
func LearnedPlotPath(dir string, g LearnedGraph, b float64, ext string) string {
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r == ':' {
			return '_'
		}
		return r
	}, g.Graph)
	return filepath.Join(dir, fmt.Sprintf("%s@%d-%gs.%s", name, g.Devices, b, ext))
}

// WriteLearnedPlots writes one plot per graph and budget that has cells
// (LearnedPlot) to dir, in the format ext names (png, svg or pdf), and
// returns the files written.
func WriteLearnedPlots(dir, ext string, l Learned) ([]string, error) {
	if _, err := report.PlotFormat("x." + ext); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, g := range l.Graphs {
		for _, b := range l.Budgets {
			has := false
			for _, m := range l.Methods {
				if c := g.Cell(m, b); c != nil && len(c.Curve) > 0 {
					has = true
				}
			}
			if !has {
				continue
			}
			path := LearnedPlotPath(dir, g, b, ext)
			if err := report.WritePlot(path, LearnedPlot(l, g, b)); err != nil {
				return files, err
			}
			files = append(files, path)
		}
	}
	return files, nil
}
