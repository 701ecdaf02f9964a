package rl17

import (
	"context"
	"errors"
	"math"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/optimize"
)

// Episode is the part of a REINFORCE placer's run that rl17 and hdp
// share: the budget, the start and fallback decisions, the reward's
// reference, the moving-average baseline and the learning curve. The
// placer draws placements, evaluates them (Tracker.EvaluateBatch), turns
// the results into advantages (Advantages), updates its networks and
// closes the step (Record).
type Episode struct {
	Tracker  *optimize.Tracker
	Start    decision.Decision // the problem's Start, fused as TensorFlow's defaults where fusion is left to the placer
	Fallback decision.Decision // Start completed: the result when nothing better is found
	Ref      float64           // the reward's reference: the cost model's lower bound on the step, or one device's capacity for PeakMemory
	Learning *optimize.Learning

	obj         optimize.Objective // the problem's
	decay, fail float64
	baseline    float64
	started     bool
	onStep      func(optimize.CurvePoint, float64)
}

// Begin starts an episode of method name on p: with no budget at all it
// runs defaultSteps steps. When there is nothing to place (one device, or
// the problem's tasks leave out placement) it evaluates the fallback and
// returns the finished result instead (done true).
func Begin(ctx context.Context, name string, p *optimize.Problem, set *optimize.Settings, defaultSteps int, settings any, decay, fail float64, onStep func(optimize.CurvePoint, float64)) (e *Episode, res *optimize.Result, done bool, err error) {
	var st optimize.Settings
	if set != nil {
		st = *set
	}
	if st.Budget == (optimize.Budget{}) {
		st.Budget.Steps = defaultSteps
	}
	e = &Episode{Tracker: optimize.NewTracker(name, p, &st, 0), Start: p.Start(), Learning: &optimize.Learning{Settings: settings},
		decay: decay, fail: fail, onStep: onStep, obj: p.Objective}
	if p.EffectiveTasks().Fusion && e.Start.Fusion == nil {
		// The placer places; where the problem leaves it the fusion and
		// its Base has none, it fuses as TensorFlow's defaults do (as
		// the expert row), so that the placements are compared alone.
		e.Start.Fusion = decision.TopologicalFusion(p.Graph)
	}
	e.Fallback = p.Complete(e.Start.Clone())
	if !p.EffectiveTasks().Placement || p.Devices() < 2 {
		if _, err := e.Tracker.Evaluate(ctx, e.Fallback); err != nil && !errors.Is(err, optimize.ErrStopped) {
			return nil, nil, true, err
		}
		res, err := e.Finish(ctx)
		return nil, res, true, err
	}
	e.Ref = p.Cost.LowerBound(e.Start.Fusion != nil)
	if p.Objective == optimize.PeakMemory {
		// No memory bound in the cost model: one device's capacity
		// sets the scale (REINFORCE's moving baseline absorbs it).
		e.Ref = float64(p.Capacity())
	}
	if e.Ref <= 0 {
		e.Ref = 1e-6
	}
	e.Learning.RefStep = e.Ref
	return e, nil, false, nil
}

// Advantages scores the step's n results: it fills pt's mean and best
// reward and share of valid placements, and returns each sample's
// REINFORCE weight, (reward - baseline) / n. The baseline starts at the
// first step's mean reward (the 2017 paper starts it at the failing
// signal for more exploration; with K samples per step the mean is a
// lower-variance start).
func (e *Episode) Advantages(results []evaluate.Result, pt *optimize.CurvePoint) []float64 {
	n := len(results)
	pt.BestReward = math.Inf(-1)
	rewards := make([]float64, n)
	for i := range n {
		rewards[i] = Reward(e.obj, &results[i], e.Ref, e.fail)
		pt.MeanReward += rewards[i] / float64(n)
		pt.BestReward = max(pt.BestReward, rewards[i])
		if e.obj.Valid(&results[i]) {
			pt.Valid += 1 / float64(n)
		}
	}
	if !e.started {
		e.baseline, e.started = pt.MeanReward, true
	}
	w := make([]float64, n)
	for i := range n {
		w[i] = (rewards[i] - e.baseline) / float64(n)
	}
	return w
}

// Record closes a step after the networks' update: the baseline moves
// towards the step's mean reward, and pt, completed with the tracker's
// statistics, joins the curve.
func (e *Episode) Record(pt optimize.CurvePoint) {
	e.baseline = e.decay*e.baseline + (1-e.decay)*pt.MeanReward
	e.Tracker.Step()
	stats := e.Tracker.Stats()
	pt.Step, pt.Elapsed, pt.Evaluations, pt.BestStep, pt.Best = stats.Steps, stats.Elapsed.Seconds(), stats.Evaluations, stats.BestStep, stats.Best
	e.Learning.Curve = append(e.Learning.Curve, pt)
	if e.onStep != nil {
		e.onStep(pt, e.Ref)
	}
}

// Finish returns the best decision found (the fallback if none) with the
// learning record.
func (e *Episode) Finish(ctx context.Context) (*optimize.Result, error) {
	res, err := e.Tracker.Result(ctx, e.Fallback)
	if err != nil {
		return nil, err
	}
	res.Learning = e.Learning
	return res, nil
}
