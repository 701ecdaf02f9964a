package jobs

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/bench/calibration"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/published"
	"github.com/placer/placer/report/plans"
)

// Sweeps is placer report sweeps: every published sweep of published.Sweeps,
// each row read as placer eval reads its workload, cluster and strategy,
// predicted in the sweep's unit, and the order within each sweep against
// the measured one. The code bases' validation sweeps
// (published.CodebaseValidationSets) are left out: placer report bench
// gives their aggregates, never their rows.
func Sweeps(ctx context.Context) (plans.Sweeps, error) {
	var sweeps []published.Sweep
	for _, sw := range published.Sweeps() {
		if !slices.Contains(published.CodebaseValidationSets(), sw.Set) {
			sweeps = append(sweeps, sw)
		}
	}
	rep, err := SweepsOf(ctx, sweeps, plan.Tuned)
	if err != nil {
		return rep, err
	}
	rep.Ratios = sweepRatios(published.BlackwellRatios(), plan.Tuned)
	return rep, nil
}

// sweepRatios are the ratio checks: each ratio's two rows predicted as
// their sweeps' rows (sweepRow, in tokens a second per GPU) and their
// ratio against the published one.
func sweepRatios(rs []published.SweepRatio, tuned []plan.TunedConstant) []plans.SweepRatio {
	var out []plans.SweepRatio
	for _, r := range rs {
		n := sweepRow(published.TokensPerGPU, r.Num, r.NumSet, tuned)
		d := sweepRow(published.TokensPerGPU, r.Den, r.DenSet, tuned)
		rr := plans.SweepRatio{Name: r.Name, Published: r.Num.Measured / r.Den.Measured}
		switch {
		case n.Refused != "":
			rr.Refused = r.Num.Label + ": " + n.Refused
		case d.Refused != "":
			rr.Refused = r.Den.Label + ": " + d.Refused
		default:
			rr.Predicted = n.Predicted / d.Predicted
			rr.Error = rr.Predicted/rr.Published - 1
			rr.Holds = abs(rr.Error) <= published.RatioTolerance
		}
		out = append(out, rr)
	}
	return out
}

// SweepsOf is Sweeps of the given sweeps, each also out of sample: its
// rows again with the constants of tuned its source set chose reset to
// their values without it (plan.Pod.WithoutSource).
func SweepsOf(ctx context.Context, sweeps []published.Sweep, tuned []plan.TunedConstant) (plans.Sweeps, error) {
	var rep plans.Sweeps
	var sumAbs, sumOut, sumPeak, sumWithout float64
	for _, sw := range sweeps {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		out := plans.Sweep{Name: sw.Name, Source: sw.Source, Unit: sw.Unit.String(), Stack: sw.Stack, OrderOnly: sw.Unit == published.Order}
		var measured, predicted, outPredicted []float64
		var labels []string
		var kept, keptPredicted []float64 // the rows of no known regression
		keptAbs := 0.0
		// What the sweep's source chose: the same for every row.
		_, reset := plan.Pod{}.WithoutSource(tuned, sw.Set)
		for _, row := range sw.Rows {
			r := sweepRow(sw.Unit, row, sw.Set, tuned)
			out.Rows = append(out.Rows, r)
			if r.Refused != "" {
				rep.Refused++
				continue
			}
			rep.Rows++
			if r.PublishedPeakGiB > 0 {
				rep.Peaks++
				if r.PredictedReserved {
					rep.ReservedPeaks++
				}
				sumPeak += abs(r.PeakError)
				rep.MaxAbsPeakError = max(rep.MaxAbsPeakError, abs(r.PeakError))
			}
			measured, predicted, labels = append(measured, r.Measured), append(predicted, r.Predicted), append(labels, r.Label)
			outPredicted = append(outPredicted, r.OutOfSamplePredicted)
			if r.Regression != "" {
				out.Regressions++
			} else {
				kept, keptPredicted, keptAbs = append(kept, r.Measured), append(keptPredicted, r.Predicted), keptAbs+abs(r.Error)
			}
			if out.OrderOnly {
				rep.Ordered++ // a rank has no error
				continue
			}
			sumAbs += abs(r.Error)
			sumOut += abs(r.OutOfSampleError)
			if r.Regression != "" {
				rep.Regressions++
			} else {
				sumWithout += abs(r.Error)
			}
			out.MeanAbsError += abs(r.Error)
			rep.MaxAbsError = max(rep.MaxAbsError, abs(r.Error))
		}
		if n := len(measured); n > 0 {
			if !out.OrderOnly {
				out.MeanAbsError /= float64(n)
			}
			// Spearman's rho is undefined where either side is all
			// ties (a sweep whose rows placer predicts alike): none.
			if rho := Spearman(measured, predicted); n >= 3 && !math.IsNaN(rho) {
				out.Spearman = &rho
			}
			var fm, fp int
			out.Pairs, out.Concordant, out.Tied, fm, fp = sweepOrder(sw.Unit, measured, predicted)
			out.FastestMeasured, out.FastestPredicted = labels[fm], labels[fp]
			out.OrderHolds = out.Concordant == out.Pairs
		}
		if n := len(kept); out.Regressions > 0 && n > 0 {
			o := &plans.SweepWithout{Rows: n, MeanAbsError: keptAbs / float64(n)}
			if rho := Spearman(kept, keptPredicted); n >= 3 && !math.IsNaN(rho) {
				o.Spearman = &rho
			}
			out.WithoutRegressions = o
		}
		out.Sample = published.SampleErrorOf(sw.Set, reset, measured, predicted, outPredicted, Spearman)
		if out.OrderOnly {
			out.Sample.MeanAbs, out.Sample.OutMeanAbs = 0, 0 // a rank is no figure to be off by
		}
		rep.Sweeps = append(rep.Sweeps, out)
	}
	if n := rep.Rows - rep.Ordered; n > 0 {
		rep.MeanAbsError, rep.OutOfSampleMeanAbsError = sumAbs/float64(n), sumOut/float64(n)
		if k := n - rep.Regressions; rep.Regressions > 0 && k > 0 {
			rep.MeanAbsErrorWithoutRegressions = sumWithout / float64(k)
		}
	}
	rep.ByGPU = sweepsByGPU(rep.Sweeps)
	if rep.Peaks > 0 {
		rep.MeanAbsPeakError = sumPeak / float64(rep.Peaks)
	}
	return rep, nil
}

// sweepsByGPU groups the rows of sweeps with an error (predicted, not
// order-only) by their GPU, in the order the GPUs first appear.
func sweepsByGPU(sweeps []plans.Sweep) []plans.SweepGPU {
	var out []plans.SweepGPU
	at := map[string]int{}
	for _, sw := range sweeps {
		if sw.OrderOnly {
			continue
		}
		for _, r := range sw.Rows {
			if r.Refused != "" {
				continue
			}
			i, ok := at[r.GPU]
			if !ok {
				i = len(out)
				at[r.GPU] = i
				out = append(out, plans.SweepGPU{GPU: r.GPU})
			}
			g := &out[i]
			g.Rows++
			g.MeanAbsError += abs(r.Error)
			g.OutOfSampleMeanAbsError += abs(r.OutOfSampleError)
			if !r.Fits {
				g.Over++
			}
		}
	}
	for i := range out {
		out[i].MeanAbsError /= float64(out[i].Rows)
		out[i].OutOfSampleMeanAbsError /= float64(out[i].Rows)
	}
	return out
}

// sweepRow predicts one row: its workload, cluster and strategy read as
// placer eval reads them (a refusal is the row's answer, not an error of
// the report), the step converted to the sweep's unit; and again out of
// sample, on the pod with the constants of tuned its source set chose
// reset (none: the same prediction).
func sweepRow(unit published.SweepUnit, row published.SweepRow, set string, tuned []plan.TunedConstant) plans.SweepRow {
	r := plans.SweepRow{Label: row.Label, Workload: row.Workload, Cluster: row.Cluster, Strategy: row.Strategy, Note: row.Note,
		Measured: row.Measured, PublishedPeakGiB: row.PeakGiB, PeakReserved: row.PeakReserved, Regression: row.Regression}
	res, out, m, p, err := evalSweepRow(row, set, tuned)
	r.GPU = p.Hardware.Name
	if err != nil {
		r.Refused = err.Error()
		return r
	}
	inUnit := func(res planner.Result) float64 {
		if unit == published.StepSeconds || unit == published.Order {
			return res.Step
		}
		return float64(m.Batch) * float64(m.Seq) / res.Step / float64(p.GPUs())
	}
	r.Predicted, r.OutOfSamplePredicted = inUnit(res), inUnit(out)
	if unit != published.Order { // a rank is no figure to be off by
		r.Error = r.Predicted/row.Measured - 1
		r.OutOfSampleError = r.OutOfSamplePredicted/row.Measured - 1
	}
	r.Fits = res.Fits
	if se, err := calibration.For(m, res.Plan.Strategy, p); err == nil {
		r.Stated = &se
	}
	if row.PeakGiB > 0 {
		// A reserved figure against placer's reserved (the caching
		// allocator simulated on the plan's trace), an allocated one
		// against its allocated.
		r.PredictedAllocatedGiB = float64(res.Memory) / (1 << 30)
		r.PredictedPeakGiB = r.PredictedAllocatedGiB
		if row.PeakReserved && res.Allocator != nil {
			r.PredictedPeakGiB, r.PredictedReserved = float64(res.Allocator.Reserved)/(1<<30), true
		}
		r.PeakError = r.PredictedPeakGiB/row.PeakGiB - 1
	}
	for _, st := range res.HostStages {
		r.HostBound = r.HostBound || st.Bound
	}
	if bad := r.Error + r.OutOfSampleError; math.IsNaN(bad) || math.IsInf(bad, 0) {
		r.Refused, r.Predicted, r.Error, r.OutOfSamplePredicted, r.OutOfSampleError = "no finite prediction", 0, 0, 0, 0
	}
	return r
}

// evalSweepRow is row's prediction in sample and out of sample (on its
// pod without the constants of tuned that set chose), with the
// allocator's reserve where a peak is published.
func evalSweepRow(row published.SweepRow, set string, tuned []plan.TunedConstant) (res, out planner.Result, m transformer.Spec, p plan.Pod, err error) {
	if m, err = transformer.Parse(row.Workload); err != nil {
		return res, out, m, p, err
	}
	if p, err = plan.ParsePod(row.Cluster); err != nil {
		return res, out, m, p, err
	}
	s, err := plan.ParseStrategy(row.Strategy)
	if err != nil {
		return res, out, m, p, err
	}
	if res, err = planner.Evaluate(m, s, p); err != nil {
		return res, out, m, p, err
	}
	out = res
	pOut, reset := p.WithoutSource(tuned, set)
	if len(reset) > 0 {
		if out, err = planner.Evaluate(m, s, pOut); err != nil {
			return res, out, m, p, fmt.Errorf("out of sample (%s): %w", strings.Join(reset, ", "), err)
		}
	}
	if row.PeakGiB > 0 {
		// The allocator's reserve where a peak is published to set it beside.
		res = planner.WithAllocator(m, p, res)
	}
	return res, out, m, p, nil
}

// sweepOrder compares the order of predicted with measured's, in a
// sweep of unit u (more tokens a second is faster, fewer seconds a step):
// the pairs measured apart, those predicted in the same order
// (concordant) and those predicted alike (tied), and the fastest row
// measured and predicted (the first of equals). In an Order sweep the
// measured figures are ranks (1 the fastest) and the predicted ones
// seconds: fewer is faster in both.
func sweepOrder(u published.SweepUnit, measured, predicted []float64) (pairs, concordant, tied, fm, fp int) {
	faster := func(a, b float64) bool { return a > b }
	if u == published.StepSeconds || u == published.Order {
		faster = func(a, b float64) bool { return a < b }
	}
	for i := range measured {
		if faster(measured[i], measured[fm]) {
			fm = i
		}
		if faster(predicted[i], predicted[fp]) {
			fp = i
		}
		for j := range i {
			if measured[i] == measured[j] {
				continue // a tie measured orders nothing
			}
			pairs++
			switch {
			case predicted[i] == predicted[j]:
				tied++
			case faster(measured[i], measured[j]) == faster(predicted[i], predicted[j]):
				concordant++
			}
		}
	}
	return pairs, concordant, tied, fm, fp
}
