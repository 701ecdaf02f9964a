package classical

import (
	"context"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/optimize"
)

// RoundRobin deals ops to devices one at a time in topological order (a
// co-location group follows its first op; decision.RoundRobin) and keeps
// the problem's Base schedule and fusion.
type RoundRobin struct{}

var _ optimize.Optimizer = RoundRobin{}

// Name returns "round-robin".
func (RoundRobin) Name() string { return "round-robin" }

// Optimize evaluates the round-robin placement once.
func (o RoundRobin) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	return heuristic(ctx, o.Name(), p, s, func() (decision.Decision, error) {
		d := p.Start()
		d.Device = decision.RoundRobin(p.Graph, p.Devices())
		return d, nil
	})
}
