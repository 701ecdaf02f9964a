package placements

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/placer/placer/report"
)

// Regal is REGAL's table 1 and figure 3 (seeds/regal-iclr2020.txt §5.3,
// 5.4; the workshop paper's table 1 and figure 2) as `placer report
// regal` measures them: per objective and method, the average % gap from
// the best known solution and the average % improvement over BRKGA at the
// table's evaluation limit (BRKGA-5K), over the test graphs; and, per
// curve method, the improvement over BRKGA-5K as the evaluation limit
// grows.
type Regal struct {
	Hardware  string `json:"hardware"`
	Devices   int    `json:"devices"`
	Memory    int64  `json:"memory_per_device"`
	Transfers string `json:"transfers"` // "sync" (REGAL's model) or "async"
	Tasks     string `json:"tasks"`
	Seed      uint64 `json:"seed"`
	// Evaluations is the table's evaluation limit (REGAL's 5,000).
	Evaluations int `json:"evaluations"`
	// BestBudget is the evaluation limit of the large-budget BRKGA run
	// that joins every method's results in the best known solution.
	BestBudget   int      `json:"best_known_budget"`
	Budgets      []int    `json:"curve_budgets"` // the curve's evaluation limits
	Methods      []string `json:"methods"`
	CurveMethods []string `json:"curve_methods"`
	Objectives   []string `json:"objectives"`
	// Reference is the method improvements are measured against at
	// Evaluations ("brkga").
	Reference string         `json:"reference"`
	Graphs    []RegalGraph   `json:"graphs"`
	Summary   []RegalSummary `json:"summary"` // one per objective
	Curves    []RegalCurve   `json:"curves"`  // per objective and curve method
}

// RegalGraph is one test graph and its cells.
type RegalGraph struct {
	Graph   string      `json:"graph"`
	Set     string      `json:"set"` // "synthetic test", "built-in", "msr-fiddle", "file"
	Ops     int         `json:"ops"`
	Devices int         `json:"devices"`
	Cells   []RegalCell `json:"cells"`
	// Best is, per objective, the best known value: the best valid cell
	// of any method at any budget.
	Best  map[string]RegalBest `json:"best_known"`
	Error string               `json:"error,omitempty"`
}

// RegalBest is a graph's best known solution for one objective.
type RegalBest struct {
	Value  float64 `json:"value"`
	Method string  `json:"method"`
	Budget int     `json:"budget"` // the run's evaluation limit; 0 for a one-shot heuristic
}

// RegalCell is one method on one graph for one objective at one
// evaluation limit.
type RegalCell struct {
	Objective   string  `json:"objective"`
	Method      string  `json:"method"`
	Budget      int     `json:"budget"`      // the evaluation limit given
	Value       float64 `json:"value"`       // the objective's value (seconds or bytes)
	StepTime    float64 `json:"step_time_s"` // of the same decision
	Valid       bool    `json:"valid"`       // under the objective
	Evaluations int     `json:"evaluations"` // used
	Wall        float64 `json:"wall_s"`
	CPU         float64 `json:"cpu_s"`
	Error       string  `json:"error,omitempty"`
}

// RegalSummary is one objective's table: per method the mean % gap from
// the best known solution and the mean % improvement over the reference
// at the table's limit, over the Graphs test graphs where every method
// has a valid cell; Wins counts the graphs where a method beats the
// reference strictly, Losses where it is strictly worse.
type RegalSummary struct {
	Objective   string             `json:"objective"`
	Graphs      int                `json:"graphs"`
	Gap         map[string]float64 `json:"mean_gap_pct"`
	Improvement map[string]float64 `json:"mean_improvement_pct"`
	Wins        map[string]int     `json:"beats_reference"`
	Losses      map[string]int     `json:"behind_reference"`
	CPU         map[string]float64 `json:"mean_cpu_s"`
}

// RegalCurve is one method's mean % improvement over the reference at the
// table's limit, at each curve budget (NaN-free: a budget where some
// graph has no valid cell is left out).
type RegalCurve struct {
	Objective   string    `json:"objective"`
	Method      string    `json:"method"`
	Budgets     []int     `json:"budgets"`
	Improvement []float64 `json:"mean_improvement_pct"`
	Graphs      []int     `json:"graphs"`
}

// Cell returns the cell of method at budget for objective, if any.
func (g *RegalGraph) Cell(objective, method string, budget int) *RegalCell {
	for i := range g.Cells {
		if c := &g.Cells[i]; c.Objective == objective && c.Method == method && c.Budget == budget {
			return c
		}
	}
	return nil
}

func (c *RegalCell) ok() bool { return c != nil && c.Error == "" && c.Valid && c.Value > 0 }

// SetBest fills g.Best from its cells: per objective the lowest valid
// value, the first on ties.
func (g *RegalGraph) SetBest(objectives []string) {
	g.Best = map[string]RegalBest{}
	for _, o := range objectives {
		var b *RegalCell
		for i := range g.Cells {
			if c := &g.Cells[i]; c.Objective == o && c.ok() && (b == nil || c.Value < b.Value) {
				b = c
			}
		}
		if b != nil {
			bb := RegalBest{Value: b.Value, Method: b.Method, Budget: b.Budget}
			if b.Evaluations <= 1 {
				bb.Budget = 0 // a one-shot heuristic: no limit to name
			}
			g.Best[o] = bb
		}
	}
}

// Summarize fills the best known values, the summaries and the curves.
func (r *Regal) Summarize() {
	r.Summary, r.Curves = r.Summary[:0], r.Curves[:0]
	for gi := range r.Graphs {
		r.Graphs[gi].SetBest(r.Objectives)
	}
	for _, o := range r.Objectives {
		s := RegalSummary{Objective: o, Gap: map[string]float64{}, Improvement: map[string]float64{}, Wins: map[string]int{}, Losses: map[string]int{}, CPU: map[string]float64{}}
		for gi := range r.Graphs {
			g := &r.Graphs[gi]
			best, okBest := g.Best[o]
			ref := g.Cell(o, r.Reference, r.Evaluations)
			complete := okBest && ref.ok()
			for _, m := range r.Methods {
				complete = complete && g.Cell(o, m, r.Evaluations).ok()
			}
			if !complete {
				continue
			}
			s.Graphs++
			for _, m := range r.Methods {
				c := g.Cell(o, m, r.Evaluations)
				s.Gap[m] += 100 * (c.Value - best.Value) / best.Value
				s.Improvement[m] += 100 * (ref.Value - c.Value) / ref.Value
				s.CPU[m] += c.CPU
				s.Wins[m] += b2i(c.Value < ref.Value)
				s.Losses[m] += b2i(c.Value > ref.Value)
			}
		}
		if s.Graphs > 0 {
			n := float64(s.Graphs)
			for _, m := range r.Methods {
				s.Gap[m] /= n
				s.Improvement[m] /= n
				s.CPU[m] /= n
			}
		}
		r.Summary = append(r.Summary, s)
		for _, m := range r.CurveMethods {
			cv := RegalCurve{Objective: o, Method: m}
			for _, b := range r.Budgets {
				sum, n := 0.0, 0
				complete := true
				for gi := range r.Graphs {
					g := &r.Graphs[gi]
					if g.Error != "" {
						continue
					}
					ref, c := g.Cell(o, r.Reference, r.Evaluations), g.Cell(o, m, b)
					if !ref.ok() || !c.ok() {
						complete = false
						break
					}
					sum += 100 * (ref.Value - c.Value) / ref.Value
					n++
				}
				if complete && n > 0 {
					cv.Budgets, cv.Improvement, cv.Graphs = append(cv.Budgets, b), append(cv.Improvement, sum/float64(n)), append(cv.Graphs, n)
				}
			}
			r.Curves = append(r.Curves, cv)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WriteRegal prints one table per objective in REGAL table 1's shape, the
// per-graph values and best known solutions, and the curve.
func WriteRegal(w io.Writer, r Regal) error {
	w, flush := report.FitLines(w)
	defer flush()
	fmt.Fprintf(w, "REGAL table 1 on %d x %s, %s per device, %s transfers, tasks %s; %d evaluations per method (seed %d)\n",
		r.Devices, r.Hardware, report.Bytes(r.Memory), r.Transfers, r.Tasks, r.Evaluations, r.Seed)
	fmt.Fprintf(w, "best known = the best valid solution of any method here, including %s at %d evaluations\n", r.Reference, r.BestBudget)
	for _, s := range r.Summary {
		fmt.Fprintf(w, "\n%s: mean over %d graphs (those where every method has a valid result)\n", ObjectiveTitle(s.Objective), s.Graphs)
		var rows [][]string
		for _, m := range r.Methods {
			name := m
			if m == r.Reference {
				name = m + " " + EvalsLabel(r.Evaluations)
			}
			if s.Graphs == 0 {
				rows = append(rows, []string{name, "-", "-", "-", "-"})
				continue
			}
			rows = append(rows, []string{name, fmt.Sprintf("%+.2f%%", s.Improvement[m]), fmt.Sprintf("%.2f%%", s.Gap[m]),
				fmt.Sprintf("%d / %d", s.Wins[m], s.Losses[m]), fmt.Sprintf("%.2f", s.CPU[m])})
		}
		header := []string{"method", "% improvement over " + r.Reference + " " + EvalsLabel(r.Evaluations), "% gap from best known", "graphs better / worse", "mean CPU s"}
		if err := report.Table(w, header, rows); err != nil {
			return err
		}
		var cv []string
		for _, c := range r.Curves {
			if c.Objective != s.Objective {
				continue
			}
			var pts []string
			for i, b := range c.Budgets {
				pts = append(pts, fmt.Sprintf("%s %+.2f%%", EvalsLabel(b), c.Improvement[i]))
			}
			if len(pts) > 0 {
				cv = append(cv, fmt.Sprintf("  %s: %s", c.Method, strings.Join(pts, ", ")))
			}
		}
		if len(cv) > 0 {
			fmt.Fprintf(w, "improvement over %s %s as the evaluation limit grows (figure 3):\n%s\n", r.Reference, EvalsLabel(r.Evaluations), strings.Join(cv, "\n"))
		}
	}
	// Per graph: the best known and each method's gap.
	for _, o := range r.Objectives {
		fmt.Fprintf(w, "\n%s per graph: best known and each method's %% gap from it\n", ObjectiveTitle(o))
		header := append([]string{"graph", "set", "ops", "best known"}, r.Methods...)
		var rows [][]string
		for _, g := range r.Graphs {
			row := []string{g.Graph, g.Set, fmt.Sprint(g.Ops), "-"}
			if g.Error != "" {
				row[3] = "error: " + g.Error
				rows = append(rows, row)
				continue
			}
			b, ok := g.Best[o]
			if ok {
				if b.Budget > 0 {
					row[3] = fmt.Sprintf("%s (%s %s)", ObjectiveValue(o, b.Value), b.Method, EvalsLabel(b.Budget))
				} else {
					row[3] = fmt.Sprintf("%s (%s)", ObjectiveValue(o, b.Value), b.Method)
				}
			}
			for _, m := range r.Methods {
				c := g.Cell(o, m, r.Evaluations)
				switch {
				case c == nil:
					row = append(row, "-")
				case c.Error != "":
					row = append(row, "failed")
				case !c.ok():
					row = append(row, "invalid")
				default:
					row = append(row, fmt.Sprintf("%.2f%%", 100*(c.Value-b.Value)/b.Value))
				}
			}
			rows = append(rows, row)
		}
		if err := report.Table(w, header, rows); err != nil {
			return err
		}
	}
	var failed []string
	for _, g := range r.Graphs {
		for _, c := range g.Cells {
			if c.Error != "" {
				failed = append(failed, fmt.Sprintf("%s %s %s %d: %s", g.Graph, c.Objective, c.Method, c.Budget, c.Error))
			}
		}
	}
	for _, f := range failed {
		fmt.Fprintln(w, "failed:", f)
	}
	return nil
}

// RegalPlot draws figure 3: each curve method's mean % improvement over
// the reference at the table's limit against the evaluation limit, one
// series per objective and method.
func RegalPlot(r Regal) report.Plot {
	p := report.Plot{Title: fmt.Sprintf("improvement over %s %s as the evaluation limit grows", r.Reference, EvalsLabel(r.Evaluations)),
		XLabel: "evaluation limit (thousands)", YLabel: "mean % improvement over " + r.Reference + " " + EvalsLabel(r.Evaluations)}
	for _, c := range r.Curves {
		var x, y []float64
		for i, b := range c.Budgets {
			x, y = append(x, float64(b)/1000), append(y, c.Improvement[i])
		}
		if len(x) > 0 {
			p.Series = append(p.Series, report.Series{Name: c.Method + " (" + ObjectiveTitle(c.Objective) + ")", X: x, Y: y})
		}
	}
	return p
}

// WriteRegalPlot plots r's curves to path (.png, .svg or .pdf).
func WriteRegalPlot(path string, r Regal) error { return report.WritePlot(path, RegalPlot(r)) }

// SortedBudgets returns the distinct budgets in ascending order.
func SortedBudgets(bs []int) []int {
	out := slices.Clone(bs)
	slices.Sort(out)
	return slices.Compact(out)
}

// EvalsLabel writes an evaluation limit the way REGAL names budgets: "5K"
// for multiples of 1,000, else the number.
func EvalsLabel(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%dK", n/1000)
	}
	return fmt.Sprint(n)
}
