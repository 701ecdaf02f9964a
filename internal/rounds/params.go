package rounds

import (
	"fmt"

	"github.com/placer/placer/nn"
)

// StateOf is params' weights and opt's state, copied: a step's or a
// round's state of a network trained with Adam.
func StateOf(params nn.Params[float32], opt *nn.Adam) State {
	var s State
	for _, p := range params {
		s.W = append(s.W, append([]float32(nil), p.W...))
	}
	m, v, t := opt.State()
	for i := range m {
		s.M = append(s.M, append([]float32(nil), m[i]...))
		s.V = append(s.V, append([]float32(nil), v[i]...))
	}
	s.T = t
	return s
}

// Apply copies s's weights into params (clearing their gradients) and
// returns an Adam with s's moments and step count; what names the
// trainer in errors ("pretrain", "regal: train").
func (s State) Apply(what string, params nn.Params[float32]) (*nn.Adam, error) {
	if len(params) != len(s.W) {
		return nil, fmt.Errorf("%s: a round's state has %d parameters, the network %d", what, len(s.W), len(params))
	}
	for i, p := range params {
		if len(p.W) != len(s.W[i]) {
			return nil, fmt.Errorf("%s: a round's state: parameter %s has %d weights, want %d", what, p.Name, len(s.W[i]), len(p.W))
		}
		copy(p.W, s.W[i])
		clear(p.G)
	}
	opt := &nn.Adam{}
	var m, v [][]float32
	if s.M != nil {
		m, v = make([][]float32, len(s.M)), make([][]float32, len(s.V))
		for i := range s.M {
			m[i], v[i] = append([]float32(nil), s.M[i]...), append([]float32(nil), s.V[i]...)
		}
	}
	opt.SetState(m, v, s.T)
	return opt, nil
}
