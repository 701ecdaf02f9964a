package report

import (
	"math"
	"slices"
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
	for _, m := range ms {
		c, nl := g.Cell(m, budget), g.Cell(m+"-no-learning", budget)
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
