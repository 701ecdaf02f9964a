package classical

import (
	"context"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/optimize"
)

// TFDefault is TensorFlow's reference configuration, the one GO measures
// its scheduling and fusion gains from (seeds/
// go-transferable-graph-optimizers-neurips2020.txt §5): the expert
// placement (the problem's Base placement when no expert is available),
// FIFO scheduling and the default XLA-like fusion that tries ops in
// topological order (decision.TopologicalFusion). Parts the problem's
// tasks do not cover keep the Base.
type TFDefault struct{}

var _ optimize.Optimizer = TFDefault{}

// Name returns "tf-default".
func (TFDefault) Name() string { return "tf-default" }

// Optimize evaluates TensorFlow's defaults once.
func (o TFDefault) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	return heuristic(ctx, o.Name(), p, s, func() (decision.Decision, error) {
		d := p.Start()
		if dev, err := expertPlacement(p); err == nil {
			d.Device = dev
		}
		d.Priority, d.Transfer = nil, nil
		d.Fusion = decision.TopologicalFusion(p.Graph)
		return d, nil
	})
}
