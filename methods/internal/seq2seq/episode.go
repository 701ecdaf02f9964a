package seq2seq

import (
	"context"
	"errors"
	"math"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/optimize"
)

// ClipNorm is the global norm the gradients are clipped to before every
// update (TensorFlow's hierarchical controller's grad_bound).
const ClipNorm = 1.0

// Episode is the part of a REINFORCE placer's run that rl17 and hdp
// share: the budget, the start and fallback decisions, the reward's
// reference, the moving-average baseline and the learning curve. Begin
// starts it, Train runs its steps and returns the result.
type Episode struct {
	Tracker  *optimize.Tracker
	Start    decision.Decision // the problem's Start, fused as TensorFlow's defaults where fusion is left to the placer
	Fallback decision.Decision // Start completed: the result when nothing better is found
	Ref      float64           // the reward's reference: the cost model's lower bound on the step, or one device's capacity for PeakMemory
	Learning *optimize.Learning

	p           *optimize.Problem
	decay, fail float64
	baseline    float64
	started     bool
}

// Begin starts an episode of method name on p with knobs k (resolved:
// the baseline's decay and the failing signal are read here): with no
// budget at all it runs DefaultSteps steps. When there is nothing to
// place (one device, or the problem's tasks leave out placement) it
// evaluates the fallback and returns the finished result instead (done
// true).
func Begin(ctx context.Context, name string, p *optimize.Problem, set *optimize.Settings, settings optimize.Knobs, k Knobs) (e *Episode, res *optimize.Result, done bool, err error) {
	var st optimize.Settings
	if set != nil {
		st = *set
	}
	if st.Budget == (optimize.Budget{}) {
		st.Budget.Steps = DefaultSteps
	}
	e = &Episode{Tracker: optimize.NewTracker(name, p, &st, 0), Start: p.Start(), Learning: &optimize.Learning{Settings: settings},
		decay: k.Decay, fail: k.FailReward, p: p}
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
		res, err := e.finish(ctx)
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

// advantages scores the step's n results: it fills pt's mean and best
// reward and share of valid placements, and returns each sample's
// REINFORCE weight, (reward - baseline) / n. The baseline starts at the
// first step's mean reward (the 2017 paper starts it at the failing
// signal for more exploration; with K samples per step the mean is a
// lower-variance start).
func (e *Episode) advantages(results []evaluate.Result, pt *optimize.CurvePoint) []float64 {
	n := len(results)
	pt.BestReward = math.Inf(-1)
	rewards := make([]float64, n)
	for i := range n {
		rewards[i] = Reward(e.p.Objective, &results[i], e.Ref, e.fail)
		pt.MeanReward += rewards[i] / float64(n)
		pt.BestReward = max(pt.BestReward, rewards[i])
		if e.p.Objective.Valid(&results[i]) {
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

// record closes a step after the networks' update: the baseline moves
// towards the step's mean reward, and pt, completed with the tracker's
// statistics, joins the curve.
func (e *Episode) record(pt optimize.CurvePoint) {
	e.baseline = e.decay*e.baseline + (1-e.decay)*pt.MeanReward
	e.Tracker.Step()
	stats := e.Tracker.Stats()
	pt.Step, pt.Elapsed, pt.Evaluations, pt.BestStep, pt.Best = stats.Steps, stats.Elapsed.Seconds(), stats.Evaluations, stats.BestStep, stats.Best
	e.Learning.Curve = append(e.Learning.Curve, pt)
	e.Tracker.Point(pt, e.Ref)
}

// Policy is the network an Episode trains.
type Policy interface {
	// Sample draws k placements for step (counted from 0): devices[s]
	// is sample s's device per op. entropy is the step's mean entropy
	// per decision, for the learning curve.
	Sample(step, k int) (devices [][]int, entropy float64)
	// Reinforce adds to the parameters' gradients the REINFORCE
	// gradient of -Σ_s w[s] log p(sample s) over the first len(w)
	// samples of the last Sample (the budget may cut a step's batch).
	Reinforce(w []float64)
}

// ParamGroup is parameters that one Adam optimizer updates with one step
// size.
type ParamGroup struct {
	Params       nn.Params[float32]
	LearningRate float64
}

// Train runs REINFORCE steps of k samples each until the budget ends and
// returns the result: per step, pol draws k placements, each
// completed from the start decision (Problem.Complete), the batch is
// evaluated, the advantages weight pol's gradient, the gradients of all
// groups together are clipped to ClipNorm, each group takes its Adam step,
// and the step is recorded.
func (e *Episode) Train(ctx context.Context, k int, pol Policy, groups ...ParamGroup) (*optimize.Result, error) {
	var params nn.Params[float32]
	opts := make([]*nn.Adam, len(groups))
	for i, g := range groups {
		params = append(params, g.Params...)
		opts[i] = &nn.Adam{}
	}
	ds := make([]decision.Decision, k)
	results := make([]evaluate.Result, k)
	for step := 0; !e.Tracker.Done(ctx); step++ {
		devs, entropy := pol.Sample(step, k)
		for s := range k {
			d := e.Start.Clone()
			d.Device = devs[s]
			ds[s] = e.p.Complete(d)
		}
		n, err := e.Tracker.EvaluateBatch(ctx, ds, results)
		if errors.Is(err, optimize.ErrStopped) || n == 0 {
			break
		}
		if err != nil {
			return nil, err
		}
		pt := optimize.CurvePoint{Entropy: entropy}
		w := e.advantages(results[:n], &pt)
		pol.Reinforce(w)
		nn.ClipGradNorm(params, ClipNorm)
		for i, g := range groups {
			opts[i].Step(g.Params, g.LearningRate)
		}
		e.record(pt)
	}
	return e.finish(ctx)
}

// finish returns the best decision found (the fallback if none) with the
// learning record.
func (e *Episode) finish(ctx context.Context) (*optimize.Result, error) {
	res, err := e.Tracker.Result(ctx, e.Fallback)
	if err != nil {
		return nil, err
	}
	res.Learning = e.Learning
	return res, nil
}

// Reward is the reward of a result under objective o: -sqrt(v / ref) with
// v = o.Of(r) (the step time, or the largest per-device peak memory), or
// fail when the placement is invalid under o.
func Reward(o optimize.Objective, r *evaluate.Result, ref, fail float64) float64 {
	v := o.Of(r)
	if !o.Valid(r) || v <= 0 || math.IsNaN(v) {
		return fail
	}
	return -math.Sqrt(v / ref)
}
