package policy

import (
	"fmt"
	"math/rand/v2"
)

// Refine runs GO's non-autoregressive refinement (GO eq. 2) across steps
// forward passes: each pass conditions on the decision drawn from the pass
// before it (sampled with r, or the argmax when r is nil), starting from
// in's own initial decision. It returns the last pass, whose input (Output.
// Input) carries the decision it was conditioned on, so that the
// log-probabilities of decisions drawn from it are those of the final step.
// Config.RefineSteps adds soft iterations inside every pass on top.
func (p *Policy) Refine(in *Input, r *rand.Rand, steps int) (*Output, error) {
	if steps < 1 {
		return nil, fmt.Errorf("policy: %d refinement steps", steps)
	}
	cur := in
	for range steps - 1 {
		out, err := p.Forward(cur)
		if err != nil {
			return nil, err
		}
		var d = out.Argmax()
		if r != nil {
			d = out.Sample(r, 1)[0]
		}
		out.Release()
		if cur, err = in.WithInitial(&d); err != nil {
			return nil, err
		}
	}
	return p.Forward(cur)
}
