package classical

import (
	"context"
	"errors"
	"fmt"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/optimize"
)

// ErrNoExpert is returned by the expert method when the problem has no
// expert placement (Problem.Expert is nil: an imported or synthetic graph).
var ErrNoExpert = errors.New("classical: the problem has no expert placement")

// Expert is the human expert's placement (Problem.Expert), with the problem's
// Base schedule and fusion. The papers' experts: one LSTM layer per
// device for RNNLM and GNMT, attention and softmax with the top layer,
// the embedding with the first (Wu et al. 2016; seeds/
// device-placement-rl-icml2017.txt); Inception-V3 in contiguous parts of
// equal layer count; the others split evenly by layers, stacks or cells
// (DESIGN.md §4). A placement that breaks co-location is repaired by
// moving each group to the device of its first op.
type Expert struct{}

var _ optimize.Optimizer = Expert{}

// Name returns "expert".
func (Expert) Name() string { return "expert" }

// Optimize evaluates the expert placement once.
func (o Expert) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	var dev []int
	if p.EffectiveTasks().Placement {
		var err error
		if dev, err = expertPlacement(p); err != nil {
			return nil, err
		}
	}
	return heuristic(ctx, o.Name(), p, s, func() (decision.Decision, error) {
		d := p.Start()
		if dev != nil {
			d.Device = dev
		}
		return d, nil
	})
}

// expertPlacement checks the problem's expert placement and repairs it.
func expertPlacement(p *optimize.Problem) ([]int, error) {
	dev := p.Expert
	if dev == nil {
		return nil, ErrNoExpert
	}
	if err := (decision.Decision{Device: dev}).Validate(p.Graph, p.Devices()); err != nil {
		return nil, fmt.Errorf("expert: %w", err)
	}
	dev = append([]int(nil), dev...)
	colocate(p.Graph, dev)
	return dev, nil
}
