package plans

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/placer/placer/report"
)

// Sizing is placer size's answer: for so many tokens of one model, each
// candidate cluster's best plan (placer search's), its step, throughput,
// time to train, GPU-hours, energy and cost, each with the band of the
// step's stated error carried through (docs/sizing.md).
type Sizing struct {
	Model   string      `json:"model"`
	Tokens  float64     `json:"tokens"`
	Phases  []SizePhase `json:"phases"`
	For     string      `json:"for"`
	Strat   string      `json:"kept,omitempty"`
	Goodput Goodput     `json:"goodput"`
	Prices  PriceSource `json:"prices"`
	// Deadline (seconds) and MaxCost (the price table's currency, USD
	// in the default table): 0 = none.
	Deadline   float64         `json:"deadline_s,omitempty"`
	MaxCost    float64         `json:"max_cost,omitempty"`
	Candidates []SizeCandidate `json:"candidates"`
	// Chosen is the index in Candidates of the answer (the cheapest
	// candidate meeting the deadline and the budget, or the fastest with
	// --choose fastest); -1 = none meets them.
	Chosen    int     `json:"chosen"`
	ChosenWhy string  `json:"chosen_why"`
	CPU       float64 `json:"cpu_s"`
	Out       string  `json:"out,omitempty"`
	Plot      string  `json:"plot,omitempty"`
}

// SizePhase is one phase of the run's schedule: its sequence length,
// global batch (sequences) and the tokens it trains.
type SizePhase struct {
	Seq    int     `json:"seq"`
	Batch  int     `json:"batch"`
	Tokens float64 `json:"tokens"`
}

// Goodput is the share of the run's wall time that trains: restarts
// after failures, checkpointing and evaluation take the rest.
type Goodput struct {
	Value  float64 `json:"value"`
	Source string  `json:"source"`
}

// PriceSource says which price table priced the answer.
type PriceSource struct {
	File string `json:"file"`
	Rows int    `json:"rows"`
}

// Price is one row of a price table: what one GPU-hour of a preset's
// GPUs costs from one provider, with the page it was read from and when.
type Price struct {
	Preset   string  `json:"preset"`
	Provider string  `json:"provider"`
	Offer    string  `json:"offer"`
	PerHour  float64 `json:"usd_per_gpu_hour"`
	Source   string  `json:"source"`
	Date     string  `json:"date"`
}

// Band is a figure and the range its stated error allows: Low and High
// are 0 where the step has no stated error.
type Band struct {
	Value float64 `json:"value"`
	Low   float64 `json:"low,omitempty"`
	High  float64 `json:"high,omitempty"`
}

// Scaled is b times k, its range too.
func (b Band) Scaled(k float64) Band { return Band{b.Value * k, b.Low * k, b.High * k} }

// Add is b plus c, range by range (errors of one sign: the phases of
// one run on one cluster share their model's error).
func (b Band) Add(c Band) Band { return Band{b.Value + c.Value, b.Low + c.Low, b.High + c.High} }

// SizeRun is one phase of a candidate: the plan search found and what it
// predicts.
type SizeRun struct {
	Strategy  string  `json:"strategy"`
	Stack     string  `json:"stack"`
	Step      float64 `json:"step_s"`
	MFU       float64 `json:"mfu"`
	Tokens    float64 `json:"tokens"`
	Steps     float64 `json:"steps"`
	TrainTime Band    `json:"train_s"`
	// Error is the step's stated error (the 90th percentile of |error|
	// in its regime, placer search's "±25% stated error"), 0 = none;
	// ErrorBasis says where it comes from.
	Error      float64   `json:"error"`
	ErrorBasis string    `json:"error_basis"`
	Phase      SizePhase `json:"-"`
}

// SizeCandidate is one cluster of the answer.
type SizeCandidate struct {
	Cluster string `json:"cluster"`
	Preset  string `json:"preset"`
	Nodes   int    `json:"nodes"`
	GPUs    int    `json:"gpus"`
	// NoPlan is why no plan fits ("" = one does): the candidate has no
	// figures.
	NoPlan string    `json:"no_plan,omitempty"`
	Runs   []SizeRun `json:"phases,omitempty"`
	// Error is the largest stated error of the phases' steps (0: one
	// has none).
	Error float64 `json:"error"`
	// TokensPerSec is the tokens over the time the steps take (no
	// goodput), Time the run's wall time with goodput, in seconds.
	TokensPerSec Band    `json:"tokens_per_s"`
	Time         Band    `json:"time_s"`
	GPUHours     Band    `json:"gpu_hours"`
	PowerW       float64 `json:"gpu_power_w"`
	EnergyMWh    Band    `json:"energy_mwh"`
	Price        *Price  `json:"price,omitempty"`
	Cost         *Band   `json:"cost,omitempty"`
	Late         bool    `json:"misses_deadline,omitempty"`
	OverBudget   bool    `json:"over_budget,omitempty"`
	Pareto       bool    `json:"pareto"`
}

// Fits says the candidate has a plan.
func (c *SizeCandidate) Fits() bool { return c.NoPlan == "" }

// Meets says the candidate has a plan that meets the deadline and the
// budget (a candidate without a price meets no budget).
func (c *SizeCandidate) Meets() bool { return c.Fits() && !c.Late && !c.OverBudget }

// MarkPareto sets Pareto on every candidate with a plan and a cost that
// no other is at least as fast and as cheap as, and better in one.
func MarkPareto(cs []SizeCandidate) {
	for i := range cs {
		a := &cs[i]
		a.Pareto = false
		if !a.Fits() || a.Cost == nil {
			continue
		}
		a.Pareto = true
		for j := range cs {
			b := &cs[j]
			if i == j || !b.Fits() || b.Cost == nil {
				continue
			}
			if b.Time.Value <= a.Time.Value && b.Cost.Value <= a.Cost.Value &&
				(b.Time.Value < a.Time.Value || b.Cost.Value < a.Cost.Value) {
				a.Pareto = false
				break
			}
		}
	}
}

// Days formats seconds as days (hours below a day).
func Days(s float64) string {
	if s < 86400 {
		return fmt.Sprintf("%.1f h", s/3600)
	}
	return fmt.Sprintf("%.1f d", s/86400)
}

// Count formats a count with K, M, B or T.
func Count(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 1e12:
		return fmt.Sprintf("%.3gT", x/1e12)
	case a >= 1e9:
		return fmt.Sprintf("%.3gB", x/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3gM", x/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.3gK", x/1e3)
	}
	return fmt.Sprintf("%.3g", x)
}

// bandText is b as "value (low-high)", low and high in value's unit
// (scaled by unit, suffixed by suffix), or value alone where b has no
// band.
func bandText(b Band, prefix string, unit func(float64) (float64, string)) string {
	div, suffix := unit(b.Value)
	v := prefix + num(b.Value/div) + suffix
	if b.Low == 0 && b.High == 0 {
		return v
	}
	return fmt.Sprintf("%s (%s-%s)", v, num(b.Low/div), num(b.High/div))
}

// num is x to three significant figures, without an exponent.
func num(x float64) string {
	if math.Abs(x) >= 1000 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

// countUnit scales a count by K, M, B or T.
func countUnit(x float64) (float64, string) {
	switch a := math.Abs(x); {
	case a >= 1e12:
		return 1e12, "T"
	case a >= 1e9:
		return 1e9, "B"
	case a >= 1e6:
		return 1e6, "M"
	case a >= 1e3:
		return 1e3, "K"
	}
	return 1, ""
}

// dayUnit scales seconds to days, or hours below a day.
func dayUnit(s float64) (float64, string) {
	if s < 86400 {
		return 3600, " h"
	}
	return 86400, " d"
}

func plainUnit(float64) (float64, string) { return 1, "" }

func dollars(x float64) string { return "$" + Count(x) }

// WriteSizing writes the answer as a table of candidates, then the
// assumptions it rests on.
func WriteSizing(w io.Writer, s Sizing) error {
	header := []string{"cluster", "GPUs", "plan", "step", "tokens/s", "time", "GPU-hours", "energy MWh", "$/GPU-h", "cost", "error", ""}
	var rows [][]string
	for i, c := range s.Candidates {
		mark := ""
		switch {
		case i == s.Chosen:
			mark = "chosen"
		case c.Fits() && c.Late:
			mark = "late"
		case c.Fits() && c.OverBudget:
			mark = "over budget"
		}
		if c.Pareto {
			mark = strings.TrimSpace(mark + " pareto")
		}
		if !c.Fits() {
			rows = append(rows, []string{c.Cluster, fmt.Sprint(c.GPUs), "no plan: " + c.NoPlan, "", "", "", "", "", "", "", "", ""})
			continue
		}
		r := c.Runs[0]
		plan, step := r.Strategy, report.Seconds(r.Step)
		if len(c.Runs) > 1 {
			var ps, ss []string
			for _, r := range c.Runs {
				ps, ss = append(ps, r.Strategy), append(ss, report.Seconds(r.Step))
			}
			plan, step = strings.Join(ps, " | "), strings.Join(ss, " | ")
		}
		price, cost := "-", "no price"
		if c.Price != nil {
			price = fmt.Sprintf("%.2f", c.Price.PerHour)
			cost = bandText(*c.Cost, "$", countUnit)
		}
		errText := "none stated"
		if c.Error > 0 {
			errText = fmt.Sprintf("±%.0f%%", 100*c.Error)
		}
		rows = append(rows, []string{c.Cluster, fmt.Sprint(c.GPUs), plan, step,
			bandText(c.TokensPerSec, "", countUnit), bandText(c.Time, "", dayUnit), bandText(c.GPUHours, "", countUnit),
			bandText(c.EnergyMWh, "", plainUnit), price, cost, errText, mark})
	}
	if err := report.TableFit(w, header, rows, []int{2, 7, 8, 4}); err != nil {
		return err
	}
	var phases []string
	for _, p := range s.Phases {
		phases = append(phases, fmt.Sprintf("%s tokens at seq %d, batch %d", Count(p.Tokens), p.Seq, p.Batch))
	}
	run := strings.Join(phases, "; ")
	if len(phases) > 1 {
		run = fmt.Sprintf("%s tokens in %d phases: %s", Count(s.Tokens), len(phases), run)
	}
	lines := []string{
		fmt.Sprintf("model %s: %s", s.Model, run),
		fmt.Sprintf("plans: placer search's for %s; ranges: the step's stated error (the 90th percentile of |error| in its regime) carried to every figure", s.For),
		fmt.Sprintf("time = steps x step / goodput %.2f (%s)", s.Goodput.Value, s.Goodput.Source),
		"energy: the GPUs at their power limit for the whole time (no hosts, network or cooling)",
		fmt.Sprintf("prices: %s (%d rows; each row's provider, source and date in --json)", s.Prices.File, s.Prices.Rows),
	}
	if s.Deadline > 0 || s.MaxCost > 0 {
		var c []string
		if s.Deadline > 0 {
			c = append(c, "deadline "+Days(s.Deadline))
		}
		if s.MaxCost > 0 {
			c = append(c, "budget "+dollars(s.MaxCost))
		}
		lines = append(lines, strings.Join(c, ", ")+": the predicted figure must meet it")
	}
	if s.Chosen >= 0 {
		c := s.Candidates[s.Chosen]
		lines = append(lines, fmt.Sprintf("chosen: %s (%s)", c.Cluster, s.ChosenWhy))
		if c.Price != nil {
			lines = append(lines, fmt.Sprintf("  priced at $%.2f per GPU-hour: %s, %s, read %s", c.Price.PerHour, c.Price.Provider, c.Price.Offer, c.Price.Date),
				"  source: "+c.Price.Source)
		}
	} else {
		lines = append(lines, "chosen: none ("+s.ChosenWhy+")")
	}
	if s.Out != "" {
		lines = append(lines, "the chosen plan written to "+s.Out+" (as placer search -o writes it)")
	}
	lines = append(lines, fmt.Sprintf("%d candidates in %.1f CPU s", len(s.Candidates), s.CPU))
	for _, l := range lines {
		body := strings.TrimLeft(l, " ")
		indent := l[:len(l)-len(body)]
		wrapped := strings.ReplaceAll(report.WrapLine(body, report.MaxWidth-len(indent)), "\n", "\n"+indent)
		if _, err := fmt.Fprintln(w, indent+wrapped); err != nil {
			return err
		}
	}
	return nil
}

// WriteSizingPlot draws each candidate's time to train (days) against
// its cost, with its error band as bars, the Pareto front as a line, and
// the candidates that miss the deadline or the budget in grey.
func WriteSizingPlot(path string, s Sizing) error {
	if _, err := report.PlotFormat(path); err != nil {
		return err
	}
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("time to train %s tokens against cost", Count(s.Tokens))
	pl.X.Label.Text = "cost (million USD)"
	pl.Y.Label.Text = "time to train (days)"
	pl.X.Tick.Marker = report.ReadableTicks{}
	pl.Y.Tick.Marker = report.ReadableTicks{}
	pl.Add(plotter.NewGrid())
	grey := color.RGBA{R: 170, G: 170, B: 170, A: 255}
	var meet, miss, front plotter.XYs
	var errs []plotter.XY
	var lows, highs []float64
	var names plotter.XYLabels
	for _, c := range s.Candidates {
		if !c.Fits() || c.Cost == nil {
			continue
		}
		pt := plotter.XY{X: c.Cost.Value / 1e6, Y: c.Time.Value / 86400}
		names.XYs = append(names.XYs, pt)
		names.Labels = append(names.Labels, " "+c.Cluster)
		if c.Meets() {
			meet = append(meet, pt)
		} else {
			miss = append(miss, pt)
		}
		if c.Pareto {
			front = append(front, pt)
		}
		if c.Time.High > 0 {
			errs = append(errs, pt)
			lows, highs = append(lows, c.Time.Low/86400), append(highs, c.Time.High/86400)
		}
	}
	slices.SortFunc(front, func(a, b plotter.XY) int { return cmpFloat(a.X, b.X) })
	if len(errs) > 0 {
		bars := make(yBand, len(errs))
		for i := range errs {
			bars[i] = struct{ X, Y, Lo, Hi float64 }{errs[i].X, errs[i].Y, lows[i], highs[i]}
		}
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		eb.Color = grey
		pl.Add(eb)
	}
	if len(front) > 1 {
		l, err := plotter.NewLine(front)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		l.Color, l.Width = report.Palette[1], vg.Points(1.5)
		pl.Add(l)
		pl.Legend.Add("Pareto front", l)
	}
	for _, set := range []struct {
		name string
		xy   plotter.XYs
		c    color.Color
	}{{"meets deadline and budget", meet, report.Palette[0]}, {"misses deadline or budget", miss, grey}} {
		if len(set.xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(set.xy)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		sc.Color, sc.Shape, sc.Radius = set.c, draw.CircleGlyph{}, vg.Points(3.5)
		pl.Add(sc)
		pl.Legend.Add(set.name, sc)
	}
	if len(names.XYs) > 0 {
		l, err := plotter.NewLabels(names)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		for i := range l.TextStyle {
			l.TextStyle[i].Font.Size = vg.Points(7)
		}
		pl.Add(l)
	}
	pl.Legend.Top = true
	// Room around the points: 8% of each range on every side, more on
	// the right for the labels.
	dx, dy := pl.X.Max-pl.X.Min, pl.Y.Max-pl.Y.Min
	pl.X.Min, pl.X.Max = pl.X.Min-0.08*dx, pl.X.Max+0.25*dx
	pl.Y.Min, pl.Y.Max = max(0, pl.Y.Min-0.08*dy), pl.Y.Max+0.3*dy
	if d := s.Deadline / 86400; d > 0 {
		l, err := plotter.NewLine(plotter.XYs{{X: pl.X.Min, Y: d}, {X: pl.X.Max, Y: d}})
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		l.Color, l.Dashes = grey, []vg.Length{vg.Points(5), vg.Points(3)}
		pl.Add(l)
		pl.Legend.Add("deadline", l)
		pl.Y.Max = max(pl.Y.Max, 1.1*d)
	}
	return report.SavePlot(path, pl)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// yBand is points with a low and a high y: plotter.YErrorer's.
type yBand []struct{ X, Y, Lo, Hi float64 }

func (b yBand) Len() int                    { return len(b) }
func (b yBand) XY(i int) (float64, float64) { return b[i].X, b[i].Y }
func (b yBand) YError(i int) (float64, float64) {
	return b[i].Y - b[i].Lo, b[i].Hi - b[i].Y
}
