package published

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// Where placer's model was checked: every published row placer can
// write, predicted as placer report megatron and report sweeps predict
// it, with what it ran (Traits) and placer's error on it (CheckedRow).
// A row checks a plan that runs what it ran, where placer predicts the
// row within a tolerance: 10% for a dense model, 15% for one with
// experts (CheckPlan); the rows of a regime give the error its figures
// carry (ErrorOf).

// checkedRows (checked_table.go, generated) is CheckRows as it was last
// written: eval and search read the published rows' traits and errors
// from it rather than evaluate every row (and search some) in every
// process, and as Go, not a file to decode (a JSON table of these rows
// took 0.7 ms a process to decode). TestCheckedTable recomputes it and
// fails where it is stale;
//
//	go test ./planner/published -run TestCheckedTable -update
//
// (go generate ./planner/published) rewrites it.
//
//go:generate go test -run TestCheckedTable -update .

// Checked are the published rows placer predicts, with their traits and
// errors, as CheckRows last computed them (checkedRows). Read only.
func Checked() []CheckedRow { return checkedRows }

// CheckRows computes every published row placer predicts (the
// Megatron-LM, Megatron-Bridge and Llama 3 tables read at their
// configurations' defaults, MegatronDefault, as placer report megatron
// reads them, and every sweep row placer can write and whose figure is
// published, as placer report sweeps reads them): what Checked reads,
// computed, each row's error in sample and out of sample (its source
// set's tuned constants reset: WithoutSource). It evaluates every row
// and searches those read at their fastest, about 20 ms, and again the
// rows of a source set that chose a constant.
func CheckRows(ctx context.Context) ([]CheckedRow, error) {
	var out []CheckedRow
	round := func(e float64) float64 { return math.Round(e*1e4) / 1e4 }
	keep := func(source, set, regression string, m transformer.Spec, s plan.Strategy, p plan.Pod, e, eOut float64, fast func(float64) bool) {
		out = append(out, CheckedRow{Source: source, Traits: TraitsOf(m, s, p), Error: round(e), Fast: fast(e),
			Set: set, OutOfSample: round(eOut), OutFast: fast(eOut), Regression: regression})
	}
	tables := []struct {
		name string
		rows []Row
	}{{"Megatron-LM H100", MegatronTable()}, {"Megatron-LM A100", MegatronA100()}, {"Llama 3 405B", Llama3()},
		{"Megatron-Bridge 25.11", MegatronBridge()}}
	for _, t := range tables {
		for _, row := range t.rows {
			p, err := plan.PodOf(row.Pod, row.GPUs)
			if err != nil {
				return nil, err
			}
			r, err := MegatronDefault(ctx, row, p)
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", t.name, row.Name, err)
			}
			rOut := r
			if pOut, reset := WithoutSource(p, row.Set); len(reset) > 0 {
				if rOut, err = MegatronDefault(ctx, row, pOut); err != nil {
					return nil, fmt.Errorf("%s, %s, out of sample: %w", t.name, row.Name, err)
				}
			}
			e := func(r planner.Result) float64 {
				if row.Tokens > 0 {
					return float64(row.Model.Batch)*float64(row.Model.Seq)/r.Step/float64(p.GPUs())/row.Tokens - 1
				}
				return r.TFLOPs/row.TFLOPs - 1
			}
			keep(t.name+", "+row.Name, row.Set, row.Regression, row.Model, r.Plan.Strategy, p, e(r), e(rOut), func(e float64) bool { return e > 0 })
		}
	}
	for _, sw := range Sweeps() {
		if sw.Unit == Order {
			continue // a rank is no figure to be off by
		}
		if slices.Contains(CodebaseValidationSets(), sw.Set) {
			continue // a validation part: aggregates only (report bench)
		}
		for _, row := range sw.Rows {
			m, p, r, rOut, ok := evalSweep(row, sw.Set)
			if !ok {
				continue // a plan placer cannot write checks nothing
			}
			e := func(r planner.Result) float64 {
				pred := r.Step
				if sw.Unit == TokensPerGPU {
					pred = float64(m.Batch) * float64(m.Seq) / r.Step / float64(p.GPUs())
				}
				return pred/row.Measured - 1
			}
			if x := e(r) + e(rOut); math.IsNaN(x) || math.IsInf(x, 0) {
				continue
			}
			keep(sw.Name+", "+row.Label, sw.Set, row.Regression, m, r.Plan.Strategy, p, e(r), e(rOut),
				func(e float64) bool { return (e > 0) == (sw.Unit == TokensPerGPU) })
			if row.PeakGiB > 0 {
				k := &out[len(out)-1]
				k.Peak, k.PeakError, k.PeakOutOfSample = true, round(PeakError(row, r)), round(PeakError(row, rOut))
			}
		}
	}
	return out, nil
}

// evalSweep is a sweep row as placer eval reads and predicts it, in
// sample and with the constants its source set chose reset (the same
// result where it chose none); !ok where placer refuses it.
func evalSweep(row SweepRow, set string) (m transformer.Spec, p plan.Pod, r, rOut planner.Result, ok bool) {
	m, err := transformer.Parse(row.Workload)
	if err != nil {
		return m, p, r, r, false
	}
	if p, err = plan.ParsePod(row.Cluster); err != nil {
		return m, p, r, r, false
	}
	s, err := plan.ParseStrategy(row.Strategy)
	if err != nil {
		return m, p, r, r, false
	}
	if r, err = planner.Evaluate(m, s, p); err != nil {
		return m, p, r, r, false
	}
	rOut = r
	pOut, reset := WithoutSource(p, set)
	if len(reset) > 0 {
		if rOut, err = planner.Evaluate(m, s, pOut); err != nil {
			return m, p, r, r, false
		}
	}
	if row.PeakGiB > 0 {
		// The allocator's reserve where a peak is published to set it
		// beside (as placer report sweeps reads it).
		r, rOut = planner.WithAllocator(m, p, r), planner.WithAllocator(m, pOut, rOut)
	}
	return m, p, r, rOut, true
}
