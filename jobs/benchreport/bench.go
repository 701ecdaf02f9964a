package benchreport

import (
	"context"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/jobs"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/bench"
	"github.com/placer/placer/planner/bench/calibration"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/published"
	"github.com/placer/placer/report/plans"
)

// BenchOptions are placer report bench's: ShowValidation prints the
// validation part's rows too (by default only its aggregates).
type BenchOptions struct {
	ShowValidation bool
}

// Bench is placer report bench: every MLPerf submission of the bench
// (bench.Rows) read as placer eval reads its workload, cluster and
// strategy and predicted, and the published sweeps placer carries
// (published.Sweeps, as placer report sweeps predicts them), each in its
// part (bench.PartOf, bench.SweepPart): the development part's and the
// validation part's figures apart, the validation part's rows left out
// unless opts.ShowValidation.
func Bench(ctx context.Context, opts BenchOptions) (plans.Bench, error) {
	rep := plans.Bench{ValidationRule: "MLPerf round " + bench.ValidationRound + " whole, and the published source set " + bench.ValidationSet +
		" (measurements/mlperf/README.md, \"The validation part\"), and each code base's own (published.CodebaseValidationSets: " + strings.Join(published.CodebaseValidationSets(), ", ") + "; measurements/<codebase>/README.md)", ShowValidation: opts.ShowValidation}
	rows, err := bench.Rows()
	if err != nil {
		return rep, err
	}
	parts := map[string]*plans.BenchPart{bench.Development: {Name: bench.Development}, bench.Validation: {Name: bench.Validation}}
	sweeps := map[string][]plans.BenchRow{}
	sets := bench.NewSetTally()
	for _, r := range rows {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		br := benchRow(r)
		pt := parts[bench.PartOf(r.Round, r.Benchmark, r.GPU)]
		sets.Add(pt.Name, bench.SetOf(r.Round, r.Benchmark, r.GPU), br.Refused == "" && br.Predicted > 0, br.Error, br.Fits)
		pt.MLPerf.Submissions++
		switch {
		case !r.Measured():
			pt.MLPerf.Unmeasured++
		case br.Refused != "":
			pt.MLPerf.Refused++
			why := br.Refused
			if pt.Name == bench.Validation && !opts.ShowValidation {
				why = planHidden(why)
			}
			pt.MLPerf.Reasons = addReason(pt.MLPerf.Reasons, why)
		default:
			pt.MLPerf.Predicted++
			pt.MLPerf.MeanAbsError += math.Abs(br.Error)
			pt.MLPerf.MaxAbsError = max(pt.MLPerf.MaxAbsError, math.Abs(br.Error))
			if br.Error > 0 {
				pt.MLPerf.Slow++
			}
			if !br.Fits {
				pt.MLPerf.Over++
			}
			sweeps[r.Sweep()] = append(sweeps[r.Sweep()], br)
		}
		if pt.Name == bench.Development || opts.ShowValidation {
			pt.Rows = append(pt.Rows, br)
		}
	}
	// Spearman within each sweep of three plans or more (one round, one
	// benchmark, one GPU).
	names := make([]string, 0, len(sweeps))
	for n := range sweeps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		rs := sweeps[n]
		pt := parts[rs[0].Part]
		sw := plans.BenchSweep{Name: n, Rows: len(rs)}
		var m, p []float64
		for _, r := range rs {
			m, p = append(m, r.Measured), append(p, r.Predicted)
			sw.MeanAbsError += math.Abs(r.Error)
		}
		sw.MeanAbsError /= float64(len(rs))
		if rho := jobs.Spearman(m, p); len(rs) >= 3 && !math.IsNaN(rho) {
			sw.Spearman = &rho
		}
		pt.MLPerf.Sweeps = append(pt.MLPerf.Sweeps, sw)
	}
	// The published sweeps, each in its part.
	var dev, val []published.Sweep
	for _, sw := range published.Sweeps() {
		if bench.SweepPart(sw.Set) == bench.Validation {
			val = append(val, sw)
		} else {
			dev = append(dev, sw)
		}
	}
	for _, x := range []struct {
		part   string
		sweeps []published.Sweep
	}{{bench.Development, dev}, {bench.Validation, val}} {
		sr, err := jobs.SweepsOf(ctx, x.sweeps, plan.Tuned)
		if err != nil {
			return rep, err
		}
		parts[x.part].Published = publishedPart(sr, x.part == bench.Development || opts.ShowValidation)
		parts[x.part].Published.Sets = publishedSets(x.sweeps, sr)
	}
	for _, pt := range parts {
		pt.MLPerf.Sets = sets.Of(pt.Name)
		if pt.MLPerf.Predicted > 0 {
			pt.MLPerf.MeanAbsError /= float64(pt.MLPerf.Predicted)
		}
		pt.MLPerf.SweepSummary = summarize(pt.MLPerf.Sweeps)
		if pt.Name == bench.Validation && !opts.ShowValidation {
			pt.MLPerf.Sweeps = nil // aggregates only: SweepSummary
		}
	}
	rep.Development, rep.Validation = *parts[bench.Development], *parts[bench.Validation]
	st, err := stated()
	if err != nil {
		return rep, err
	}
	rep.Stated = &st
	return rep, nil
}

// stated is the stated error's calibration: the development part's
// regimes, each with the error placer states beside its plans, the
// development part's coverage leaving each row's sweep out, and the
// validation part's coverage against the development part's table.
func stated() (plans.BenchStated, error) {
	t, err := calibration.Development()
	if err != nil {
		return plans.BenchStated{}, err
	}
	val, err := calibration.RowsOf(bench.Validation)
	if err != nil {
		return plans.BenchStated{}, err
	}
	reach, err := calibration.DevelopmentReach()
	if err != nil {
		return plans.BenchStated{}, err
	}
	st := plans.BenchStated{Level: calibration.StatedLevel, Development: calibration.LeaveOneSweepOut(t.Rows(), calibration.StatedLevel),
		Validation: calibration.HoldoutReach(t, reach, val), FamilyOut: calibration.LeaveFamilyOut(t.Rows(), calibration.StatedLevel)}
	count := map[calibration.Regime]int{}
	for _, r := range t.Rows() {
		count[r.Regime]++
	}
	for g, n := range count {
		st.Regimes = append(st.Regimes, plans.BenchRegime{Regime: g, Rows: n, Stated: t.ForRegime(g)})
	}
	sort.Slice(st.Regimes, func(i, j int) bool { return st.Regimes[i].Regime.Key() < st.Regimes[j].Regime.Key() })
	return st, nil
}

// benchRow reads and predicts one MLPerf row (a refusal is the row's
// answer, not an error of the report).
func benchRow(r bench.Row) plans.BenchRow {
	br := plans.BenchRow{ID: r.ID, Part: bench.PartOf(r.Round, r.Benchmark, r.GPU), Sweep: r.Sweep(), GPUs: r.GPUs, Measured: r.StepSeconds,
		StepMethod: r.StepMethod, Config: r.Config, GPUMemGiB: r.GPUMemGiB}
	if !r.Measured() {
		br.Refused = "no step time: the result files are absent from the mirror"
		return br
	}
	if r.SameLogsAs != "" {
		// A measurement judged once: where it was first submitted.
		br.Refused = "a resubmission of an earlier submission's runs (runs.csv same_logs_as): judged once, where first submitted"
		return br
	}
	rd, err := bench.Read(r)
	if err != nil {
		br.Refused = err.Error()
		return br
	}
	br.Workload, br.Cluster, br.Strategy, br.Assumed, br.LeftOut = rd.Workload, rd.Cluster, rd.Strategy, rd.Assumed, rd.LeftOut
	m, err := transformer.Parse(rd.Workload)
	if err != nil {
		br.Refused = err.Error()
		return br
	}
	p, err := plan.ParsePod(rd.Cluster)
	if err != nil {
		br.Refused = err.Error()
		return br
	}
	s, err := plan.ParseStrategy(rd.Strategy)
	if err != nil {
		br.Refused = err.Error()
		return br
	}
	res, err := planner.Evaluate(m, s, p)
	if err != nil {
		br.Refused = err.Error()
		return br
	}
	if math.IsNaN(res.Step) || math.IsInf(res.Step, 0) || res.Step <= 0 {
		br.Refused = "no finite prediction"
		return br
	}
	br.Predicted, br.Error, br.Fits = res.Step, res.Step/r.StepSeconds-1, res.Fits
	br.PredictedGiB = float64(res.Memory) / (1 << 30)
	if res.Judged > 0 {
		br.PredictedGiB = float64(res.Judged) / (1 << 30)
	}
	br.UsableGiB = float64(res.Usable) / (1 << 30)
	return br
}

// planHidden is a refusal's reason without the plan it names ("strategy
// tp=4,...: pp=8 x vp=8 does not divide the 126 layers" is "strategy (the
// row's plan, not printed): pp=8 x vp=8 ..."): a validation row's plan is
// not printed without --show-validation.
func planHidden(reason string) string {
	if rest, ok := strings.CutPrefix(reason, "strategy "); ok {
		if _, tail, ok := strings.Cut(rest, ": "); ok {
			return "strategy (the row's plan, not printed): " + tail
		}
	}
	return reason
}

// addReason counts reason among rs (one entry per distinct reason, in
// first-seen order).
func addReason(rs []plans.BenchReason, reason string) []plans.BenchReason {
	i := slices.IndexFunc(rs, func(x plans.BenchReason) bool { return x.Reason == reason })
	if i < 0 {
		return append(rs, plans.BenchReason{Reason: reason, Rows: 1})
	}
	rs[i].Rows++
	return rs
}

// summarize is the sweeps' aggregate: how many have a Spearman (3 plans
// or more), its mean and least, and how many reach 0.8.
func summarize(sw []plans.BenchSweep) plans.BenchSweepSummary {
	var s plans.BenchSweepSummary
	s.Sweeps = len(sw)
	first := true
	for _, x := range sw {
		if x.Spearman == nil {
			continue
		}
		s.Ranked++
		s.MeanSpearman += *x.Spearman
		if first || *x.Spearman < s.MinSpearman {
			s.MinSpearman, first = *x.Spearman, false
		}
		if *x.Spearman >= 0.8 {
			s.AtLeast08++
		}
	}
	if s.Ranked > 0 {
		s.MeanSpearman /= float64(s.Ranked)
	}
	return s
}

// publishedSets are one part's published sweeps in aggregate by source
// set, in the order the sets first appear (sr: SweepsOf of sweeps, one
// sweep of its each in order).
func publishedSets(sweeps []published.Sweep, sr plans.Sweeps) []plans.BenchSet {
	var out []plans.BenchSet
	at := map[string]int{}
	lists := map[string][]plans.BenchSweep{}
	for i, sw := range sr.Sweeps {
		set := sweeps[i].Set
		j, ok := at[set]
		if !ok {
			at[set], j = len(out), len(out)
			out = append(out, plans.BenchSet{Set: set})
		}
		s := &out[j]
		s.Sweeps++
		b := plans.BenchSweep{Name: sw.Name, MeanAbsError: sw.MeanAbsError, Spearman: sw.Spearman, OrderOnly: sw.OrderOnly}
		for _, r := range sw.Rows {
			if r.Refused != "" {
				s.Refused++
				continue
			}
			b.Rows++
			if sw.OrderOnly {
				continue
			}
			s.Rows++
			s.MeanAbsError += math.Abs(r.Error)
			s.MaxAbsError = max(s.MaxAbsError, math.Abs(r.Error))
		}
		lists[set] = append(lists[set], b)
	}
	for i := range out {
		if out[i].Rows > 0 {
			out[i].MeanAbsError /= float64(out[i].Rows)
		}
		out[i].SweepSummary = summarize(lists[out[i].Set])
	}
	return out
}

// publishedPart is the aggregate of one part's published sweeps (the
// sweeps themselves where show).
func publishedPart(sr plans.Sweeps, show bool) plans.BenchPublished {
	out := plans.BenchPublished{Rows: sr.Rows, Refused: sr.Refused, MeanAbsError: sr.MeanAbsError, MaxAbsError: sr.MaxAbsError}
	var sws []plans.BenchSweep
	for _, sw := range sr.Sweeps {
		out.Sweeps++
		b := plans.BenchSweep{Name: sw.Name, MeanAbsError: sw.MeanAbsError, Spearman: sw.Spearman, OrderOnly: sw.OrderOnly}
		for _, r := range sw.Rows {
			if r.Refused != "" {
				continue
			}
			b.Rows++
			if !r.Fits {
				out.Over++
				if show {
					out.OverRows = append(out.OverRows, sw.Name+": "+r.Label)
				}
			}
		}
		sws = append(sws, b)
	}
	out.SweepSummary = summarize(sws)
	if show {
		out.SweepList = sws
	}
	return out
}
