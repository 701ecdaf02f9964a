package sizing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/report/plans"
)

// Run answers placer size: each candidate of o.Clusters searched for
// each phase of the run, its figures carried to the whole run, the
// Pareto front of time and cost marked, and one candidate chosen.
func Run(ctx context.Context, o Options) (plans.Sizing, error) {
	start := optimize.ProcessCPU()
	s, clusters, prices, err := o.setUp()
	if err != nil {
		return s, err
	}
	for i, c := range clusters {
		if err := ctx.Err(); err != nil {
			return s, err
		}
		cand, err := o.candidate(ctx, c, s.Phases, prices)
		if err != nil {
			return s, err
		}
		s.Candidates = append(s.Candidates, cand)
		if o.Progress != nil {
			o.Progress(i+1, len(clusters), c)
		}
	}
	plans.MarkPareto(s.Candidates)
	s.Chosen, s.ChosenWhy = choose(s.Candidates, o.Choose)
	s.CPU = (optimize.ProcessCPU() - start).Seconds()
	if o.Out != "" && s.Chosen >= 0 {
		// The chosen plan's file is placer search -o's own: that search
		// again, runners up and all, written by it.
		c := s.Candidates[s.Chosen]
		so := o.search(c.Cluster, longest(c.Runs).Phase, false)
		so.Out = o.Out
		if _, err := jobs.ScaleSearch(ctx, so); err != nil {
			return s, err
		}
		s.Out = o.Out
	}
	if o.Plot != "" {
		if err := plans.WriteSizingPlot(o.Plot, s); err != nil {
			return s, err
		}
		s.Plot = o.Plot
	}
	return s, nil
}

// setUp checks o and reads what the candidates share: the schedule, the
// clusters, the prices, the goodput.
func (o Options) setUp() (plans.Sizing, []string, []plans.Price, error) {
	s := plans.Sizing{Chosen: -1, Deadline: o.Deadline, MaxCost: o.MaxCost, Strat: o.Strat, For: o.For}
	if s.For == "" {
		s.For = jobs.DefaultSearchTarget
	}
	if o.Choose != "" && o.Choose != ChooseCheapest && o.Choose != ChooseFastest {
		return s, nil, nil, fail.Usagef("--choose %q: want %s or %s", o.Choose, ChooseCheapest, ChooseFastest)
	}
	if o.Goodput < 0 || o.Goodput > 1 {
		return s, nil, nil, fail.Usagef("--goodput %g: want a share of the wall time, above 0 and at most 1", o.Goodput)
	}
	if o.For != "" && !slices.Contains(jobs.SearchTargets, o.For) {
		return s, nil, nil, fail.Usagef("--for %q: want one of %s", o.For, strings.Join(jobs.SearchTargets, ", "))
	}
	if _, err := plan.ParseWritten(o.Strat); err != nil {
		return s, nil, nil, fail.Usagef("--strategy: %v", err)
	}
	if o.Deadline < 0 || o.MaxCost < 0 {
		return s, nil, nil, fail.Usagef("--deadline and --max-cost: want 0 (none) or above")
	}
	s.Goodput = plans.Goodput{Value: DefaultGoodput, Source: DefaultGoodputSource}
	if o.Goodput > 0 {
		s.Goodput = plans.Goodput{Value: o.Goodput, Source: "--goodput"}
	}
	var err error
	if s.Phases, err = o.phases(); err != nil {
		return s, nil, nil, err
	}
	m, err := transformer.Parse(phaseWorkload(o.Workload, s.Phases[0]))
	if err != nil {
		return s, nil, nil, fail.Usagef("--workload: %v", err)
	}
	s.Model = m.String()
	if s.Phases[0].Seq == 0 {
		s.Phases[0].Seq, s.Phases[0].Batch = m.Seq, m.Batch
	}
	for _, ph := range s.Phases {
		s.Tokens += ph.Tokens
	}
	clusters, err := Candidates(o.Clusters)
	if err != nil {
		return s, nil, nil, err
	}
	prices, name, err := o.loadPrices()
	if err != nil {
		return s, nil, nil, err
	}
	if o.Provider != "" && !slices.ContainsFunc(prices, func(p plans.Price) bool { return strings.EqualFold(p.Provider, o.Provider) }) {
		var names []string
		for _, p := range prices {
			if !slices.Contains(names, p.Provider) {
				names = append(names, p.Provider)
			}
		}
		return s, nil, nil, fail.Usagef("--provider %q: no row of %s names it (providers: %s)", o.Provider, name, strings.Join(names, ", "))
	}
	s.Prices = plans.PriceSource{File: name, Rows: len(prices)}
	return s, clusters, prices, nil
}

// candidate is cluster c's answer: each phase searched, the figures of
// the whole run with their bands.
func (o Options) candidate(ctx context.Context, c string, phases []plans.SizePhase, prices []plans.Price) (plans.SizeCandidate, error) {
	p, err := plan.ParsePod(c)
	if err != nil {
		return plans.SizeCandidate{}, fail.Usagef("--clusters: %v", err)
	}
	preset, _, _ := strings.Cut(p.Name, ":")
	cand := plans.SizeCandidate{Cluster: c, Preset: preset, Nodes: p.Nodes, GPUs: p.GPUs(), PowerW: p.PowerLimit}
	var compute plans.Band
	banded := true
	for _, ph := range phases {
		rep, err := jobs.ScaleSearch(ctx, o.search(c, ph, true))
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return cand, err
			}
			var u fail.Usage
			if errors.As(err, &u) && strings.Contains(err.Error(), "--for") {
				return cand, err // a framework no plan can name: the command line's
			}
			cand.NoPlan = noPlanText(err, p.Name)
			if strings.Contains(cand.NoPlan, "(0 plans tried") {
				// The search tried nothing: no layout of the pod's GPUs
				// divides the batch, whatever the memory.
				m, _ := transformer.Parse(phaseWorkload(o.Workload, ph))
				cand.NoPlan = fmt.Sprintf("no layout of %d GPUs divides the global batch of %d sequences (%s)", cand.GPUs, m.Batch, cand.NoPlan)
			}
			cand.Runs = nil
			return cand, nil
		}
		run := runOf(rep, ph)
		if run.Error == 0 {
			banded = false
		}
		cand.Runs = append(cand.Runs, run)
		compute = compute.Add(run.TrainTime)
	}
	cand.Error = 0
	for _, r := range cand.Runs {
		cand.Error = max(cand.Error, r.Error)
	}
	if !banded {
		cand.Error, compute.Low, compute.High = 0, 0, 0
	}
	tokens := 0.0
	for _, ph := range phases {
		tokens += ph.Tokens
	}
	cand.TokensPerSec = plans.Band{Value: tokens / compute.Value}
	if banded {
		cand.TokensPerSec.Low, cand.TokensPerSec.High = tokens/compute.High, tokens/compute.Low
	}
	cand.Time = compute.Scaled(1 / goodput(o))
	cand.GPUHours = cand.Time.Scaled(float64(cand.GPUs) / 3600)
	cand.EnergyMWh = cand.GPUHours.Scaled(p.PowerLimit / 1e6)
	if cand.Price = PriceOf(prices, preset, o.Provider); cand.Price != nil {
		cost := cand.GPUHours.Scaled(cand.Price.PerHour)
		cand.Cost = &cost
	}
	cand.Late = o.Deadline > 0 && cand.Time.Value > o.Deadline
	cand.OverBudget = o.MaxCost > 0 && (cand.Cost == nil || cand.Cost.Value > o.MaxCost)
	return cand, nil
}

// search is placer search's options for cluster c and phase ph (its
// answer alone where bestOnly).
func (o Options) search(c string, ph plans.SizePhase, bestOnly bool) jobs.ScaleOptions {
	return jobs.ScaleOptions{Workload: phaseWorkload(o.Workload, ph), Cluster: c, For: o.For, Strat: o.Strat,
		AllowTight: o.AllowTight, MemoryMargin: o.MemoryMargin, BestOnly: bestOnly, NoHints: true}
}

func goodput(o Options) float64 {
	if o.Goodput > 0 {
		return o.Goodput
	}
	return DefaultGoodput
}

// runOf is one phase's run from its search: its steps, the time they
// take, and the band of the step's stated error.
func runOf(rep plans.ScaleSearch, ph plans.SizePhase) plans.SizeRun {
	b := rep.Best
	seq, batch := ph.Seq, ph.Batch
	r := plans.SizeRun{Strategy: b.Strategy, Stack: b.Stack.Name, Step: b.Step, MFU: b.MFU, Tokens: ph.Tokens, Phase: ph}
	r.Steps = ph.Tokens / float64(seq*batch)
	r.TrainTime = plans.Band{Value: r.Steps * b.Step}
	r.ErrorBasis = "none stated"
	if e := b.StatedError; e != nil && e.Rows > 0 && e.Bound > 0 && e.Bound < 1 {
		r.Error, r.ErrorBasis = e.Bound, e.String()
		r.TrainTime.Low, r.TrainTime.High = r.TrainTime.Value*(1-e.Bound), r.TrainTime.Value*(1+e.Bound)
	}
	return r
}

// noPlanText is a search's no-plan error without its "workload ... on
// POD: " head, which the table's row already says.
func noPlanText(err error, pod string) string {
	line := fail.Line(err)
	if _, rest, ok := strings.Cut(line, " on "+pod+": "); ok {
		return rest
	}
	return line
}

// choose is the answer among cs: of the candidates meeting the deadline
// and the budget, the cheapest (those without a price last, by
// GPU-hours) or the fastest; -1 when none meets them.
func choose(cs []plans.SizeCandidate, how string) (int, string) {
	var ok []int
	for i := range cs {
		if cs[i].Meets() {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return -1, "no candidate with a plan meets the deadline and the budget"
	}
	if how == ChooseFastest {
		best := slices.MinFunc(ok, func(a, b int) int { return cmp.Compare(cs[a].Time.Value, cs[b].Time.Value) })
		return best, "the fastest that meets the deadline and the budget"
	}
	best := slices.MinFunc(ok, func(a, b int) int {
		ca, cb := cs[a].Cost, cs[b].Cost
		switch {
		case ca != nil && cb != nil:
			return cmp.Or(cmp.Compare(ca.Value, cb.Value), cmp.Compare(cs[a].Time.Value, cs[b].Time.Value))
		case ca != nil:
			return -1
		case cb != nil:
			return 1
		}
		return cmp.Compare(cs[a].GPUHours.Value, cs[b].GPUHours.Value)
	})
	return best, "the cheapest that meets the deadline and the budget"
}

// longest is the run of the most tokens (the first of equals).
func longest(runs []plans.SizeRun) plans.SizeRun {
	best := runs[0]
	for _, r := range runs[1:] {
		if r.Tokens > best.Tokens {
			best = r
		}
	}
	return best
}

// String is a candidate's one-line summary (tests, logs).
func String(c plans.SizeCandidate) string {
	if !c.Fits() {
		return fmt.Sprintf("%s: no plan (%s)", c.Cluster, c.NoPlan)
	}
	return fmt.Sprintf("%s: %s, %s", c.Cluster, plans.Days(c.Time.Value), plans.Count(c.GPUHours.Value))
}
