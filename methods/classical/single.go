package classical

import (
	"context"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/optimize"
)

// Single places every op on device 0 and keeps the problem's Base
// schedule and fusion: the one-device reference.
type Single struct{}

var _ optimize.Optimizer = Single{}

// Name returns "single".
func (Single) Name() string { return "single" }

// Optimize evaluates the single-device placement once.
func (o Single) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	return heuristic(ctx, o.Name(), p, s, func() (decision.Decision, error) {
		d := p.Start()
		d.Device = decision.Single(p.Graph)
		return d, nil
	})
}
