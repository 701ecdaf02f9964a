package mechanisms

import "github.com/placer/placer/planner/cost"

// Adam is the optimizer's step of the stacks that run Adam (every stack
// but those that run LAMB, Settings.LAMB): cost.Optimizer, its step on
// the most loaded device (adamStep), with torchtitan's gradient
// clipping before it (titanClip).
type Adam struct{}

var _ cost.Optimizer = Adam{}

// Name is the mechanism's registered name.
func (Adam) Name() string { return "adam" }

// When is Adam's declaration: every stack's optimizer but LAMB's.
func (Adam) When() cost.When { return adamWhen }

var adamWhen = cost.When{cost.Not(lambSetting)}

// OptimizerStep is Adam's step on the most loaded of stages (adamStep).
func (Adam) OptimizerStep(s *cost.Shard, stages []cost.Stage) float64 {
	return adamStep(s, stages, 0, 0)
}
