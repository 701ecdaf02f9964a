package placements

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// CombineSeeds merges equal-time reports of the same graphs, methods and
// budgets run with different seeds (equal-time --seeds) into one: each
// cell's ratio is the geometric mean of its seeds' ratios (kept per seed
// in SeedRatios), its CPU time, evaluations and steps the mean, so the
// table, the geometric means and the per-graph claims read the seeds'
// average instead of one draw. Summary adds, per method, the runs (graph
// and seed) where the lead is ahead of it and the seed-to-seed spread of
// each method (EqualTimeBudget.Runs, Spread). A cell is combined only
// when every seed has it with a valid ratio; otherwise it keeps the first
// seed's failure or is missing.
func CombineSeeds(reps []EqualTime) EqualTime {
	if len(reps) == 0 {
		return EqualTime{}
	}
	if len(reps) == 1 {
		return reps[0]
	}
	out := reps[0]
	out.Seed = 0
	out.Seeds = nil
	for _, r := range reps {
		out.Seeds = append(out.Seeds, r.Seed)
	}
	out.Graphs = make([]EqualTimeGraph, len(reps[0].Graphs))
	for gi, g := range reps[0].Graphs {
		ng := g
		ng.Cells = nil
		ng.Missing = 0
		ng.RefBySeed = nil
		for _, r := range reps {
			if gi < len(r.Graphs) && r.Graphs[gi].RefObjective != g.RefObjective {
				for _, r := range reps {
					ng.RefBySeed = append(ng.RefBySeed, r.Graphs[min(gi, len(r.Graphs)-1)].RefObjective)
				}
				break
			}
		}
		for _, c := range g.Cells {
			var runs []*EqualTimeCell
			for _, r := range reps {
				if gi < len(r.Graphs) && r.Graphs[gi].Graph == g.Graph {
					if rc := r.Graphs[gi].Cell(c.Method, c.Budget); rc != nil {
						runs = append(runs, rc)
					}
				}
			}
			if len(runs) < len(reps) {
				ng.Missing++
				continue
			}
			ng.Cells = append(ng.Cells, combineCells(runs))
		}
		for _, r := range reps {
			if gi < len(r.Graphs) && r.Graphs[gi].Missing > ng.Missing {
				ng.Missing = r.Graphs[gi].Missing
			}
		}
		out.Graphs[gi] = ng
	}
	out.Summarize()
	return out
}

// combineCells is one cell over its seeds' runs.
func combineCells(runs []*EqualTimeCell) EqualTimeCell {
	ratios := make([]float64, len(runs))
	for i, r := range runs {
		ratios[i] = r.Ratio
	}
	for _, r := range runs {
		if r.Error != "" || r.Ratio <= 0 {
			// One seed failed or found nothing valid: so does the cell.
			c := *r
			c.SeedRatios = ratios
			return c
		}
	}
	c := *runs[0]
	c.SeedRatios = ratios
	var logR, logO, logS, wall, cpu float64
	var evals, steps int
	for _, r := range runs {
		logR += math.Log(r.Ratio)
		logO += math.Log(r.value())
		logS += math.Log(r.StepTime)
		wall += r.Wall
		cpu += r.CPU
		evals += r.Evaluations
		steps += r.Steps
	}
	n := float64(len(runs))
	c.Ratio, c.Objective, c.StepTime = math.Exp(logR/n), math.Exp(logO/n), math.Exp(logS/n)
	c.Wall, c.CPU = wall/n, cpu/n
	c.Evaluations, c.Steps = evals/len(runs), steps/len(runs)
	return c
}

// spread is a combined cell's seed-to-seed spread: its largest ratio over
// its smallest, minus 1 (0 = one seed, or all alike).
func (c *EqualTimeCell) spread() float64 {
	if len(c.SeedRatios) < 2 {
		return 0
	}
	lo, hi := slices.Min(c.SeedRatios), slices.Max(c.SeedRatios)
	if lo <= 0 {
		return 0
	}
	return hi/lo - 1
}

// median of xs (0 for none); xs is sorted in place.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// countRuns adds graph g's runs to s.AheadRuns and s.LearningRuns: per
// seed, the lead against each other method and each learned method
// against its ablation, on the same seed.
func (s *EqualTimeBudget) countRuns(g *EqualTimeGraph, lead string, ms []string, budget float64, seeds int) {
	paired := func(a, b *EqualTimeCell, i int) bool {
		return a != nil && b != nil && len(a.SeedRatios) == seeds && len(b.SeedRatios) == seeds &&
			a.SeedRatios[i] > 0 && b.SeedRatios[i] > 0
	}
	gc := g.Cell(lead, budget)
	tally := func(to map[string]*PairedTally, m string, a, b *EqualTimeCell) {
		if p, logs, ok := pairedGap(g.Graph, a, b, seeds); ok {
			if to[m] == nil {
				to[m] = &PairedTally{}
			}
			to[m].add(p, logs)
		}
	}
	for _, m := range ms {
		c, nl := g.Cell(m, budget), g.Cell(m+"-no-learning", budget)
		if m != lead {
			tally(s.LeadPaired, m, gc, c)
		}
		tally(s.LearningPaired, m, c, nl)
		if nl != nil {
			s.LearningRuns[m] = s.LearningRuns[m]
		}
		for i := range seeds {
			if m != lead && paired(gc, c, i) && c.SeedRatios[i] > gc.SeedRatios[i] {
				s.AheadRuns[m]++
			}
			if paired(c, nl, i) && c.SeedRatios[i] < nl.SeedRatios[i] {
				s.LearningRuns[m]++
			}
		}
	}
}

// PairedGap is one method against another on one graph, paired by seed:
// the geometric mean over the seeds of the ratio of their results (a/b:
// under 1 = a ahead) and its 95% confidence interval, Student's t over
// the seeds' log ratios. It says whether a difference is larger than
// the seed-to-seed noise: Lo < Hi < 1 is a ahead beyond it, 1 < Lo
// behind beyond it. With fewer than two seeds Lo and Hi are Ratio.
type PairedGap struct {
	Graph string  `json:"graph"`
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"ci95_lo"`
	Hi    float64 `json:"ci95_hi"`
	Seeds int     `json:"seeds"`
}

// Verdict is -1 when the first method is ahead beyond the noise (the
// interval below 1), +1 when it is behind beyond it, 0 otherwise.
func (p PairedGap) Verdict() int {
	switch {
	case p.Seeds < 2:
		return 0
	case p.Hi < 1:
		return -1
	case p.Lo > 1:
		return 1
	}
	return 0
}

// PairedTally counts, over the graphs, the verdicts of one paired
// comparison (the lead against a method, or learning against its
// ablation); Gaps are the per-graph gaps.
type PairedTally struct {
	Ahead  int         `json:"ahead_beyond_noise"`
	Behind int         `json:"behind_beyond_noise"`
	Within int         `json:"within_noise"`
	Gaps   []PairedGap `json:"gaps"`
	// Pooled is the comparison over every run (a graph and a seed) as
	// one sample: Graph "all runs", Seeds the runs.
	Pooled PairedGap `json:"pooled"`

	logs []float64 // every run's log ratio, for Pooled
}

func (t *PairedTally) add(p PairedGap, logs []float64) {
	t.logs = append(t.logs, logs...)
	t.Pooled = gapOf("all runs", t.logs)
	switch p.Verdict() {
	case -1:
		t.Ahead++
	case 1:
		t.Behind++
	default:
		t.Within++
	}
	t.Gaps = append(t.Gaps, p)
}

// pairedGap compares cell a with cell b seed by seed (their SeedRatios,
// in the same seed order), and returns the seeds' log ratios; ok is
// false unless both have every seed.
func pairedGap(graph string, a, b *EqualTimeCell, seeds int) (p PairedGap, logs []float64, ok bool) {
	if a == nil || b == nil || seeds < 2 || len(a.SeedRatios) != seeds || len(b.SeedRatios) != seeds {
		return PairedGap{}, nil, false
	}
	d := make([]float64, seeds)
	for i := range seeds {
		if a.SeedRatios[i] <= 0 || b.SeedRatios[i] <= 0 {
			return PairedGap{}, nil, false
		}
		d[i] = math.Log(a.SeedRatios[i] / b.SeedRatios[i])
	}
	return gapOf(graph, d), d, true
}

// gapOf is the gap whose log ratios are d: their mean and its 95%
// interval, Student's t with len(d)-1 degrees of freedom.
func gapOf(graph string, d []float64) PairedGap {
	if len(d) < 2 {
		r := 1.0
		if len(d) == 1 {
			r = math.Exp(d[0])
		}
		return PairedGap{Graph: graph, Ratio: r, Lo: r, Hi: r, Seeds: len(d)}
	}
	mean, sd := stat.MeanStdDev(d, nil)
	n := float64(len(d))
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975) * sd / math.Sqrt(n)
	return PairedGap{Graph: graph, Ratio: math.Exp(mean), Lo: math.Exp(mean - half), Hi: math.Exp(mean + half), Seeds: len(d)}
}

// String is the gap as the report prints it: "0.953 [0.912, 0.996]".
func (p PairedGap) String() string {
	return fmt.Sprintf("%.3f [%.3f, %.3f]", p.Ratio, p.Lo, p.Hi)
}

// text is a tally as the report prints it: the counts, then the graphs
// within the noise or behind, each with its gap (what names the ratio).
func (t *PairedTally) text(what string) string {
	var in, behind []string
	for _, p := range t.Gaps {
		switch p.Verdict() {
		case 0:
			in = append(in, p.Graph+" "+p.String())
		case 1:
			behind = append(behind, p.Graph+" "+p.String())
		}
	}
	out := fmt.Sprintf("over all %d runs %s %s; ahead beyond the seeds' noise (95%% interval of %s below 1) on %d graphs, behind beyond it on %d, within it on %d",
		t.Pooled.Seeds, what, t.Pooled, what, t.Ahead, t.Behind, t.Within)
	if len(behind) > 0 {
		out += "; behind: " + strings.Join(behind, ", ")
	}
	if len(in) > 0 {
		out += "; within: " + strings.Join(in, ", ")
	}
	return out
}
