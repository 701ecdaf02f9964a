package profile

import (
	"fmt"
	"slices"

	"github.com/placer/placer/graph/transformer"
)

// DenseLayer is the forward and backward of one of the dense layers
// before the experts (a model with experts' first DenseLayers, DeepSeek's
// first_k_dense_replace) at shape s: Layer's rules over the profile's
// dense layers (Layer.Block BlockDense). Its expert parallelism is
// none whatever s's (a dense layer has no experts). Modelled where the
// profile has none (a profile without dense layers, or of none of s's
// degree).
func (p *Profile) DenseLayer(s Shape) (fwd, bwd float64, src Source) {
	s.EP, s.ETP = 0, 0
	return compose(dense(p.Layers), s)
}

// DenseLayerInPlace is DenseLayer's with its tensor-parallel
// collectives in place (LayerInPlace's rules).
func (p *Profile) DenseLayerInPlace(s Shape) (fwd, bwd float64, src Source) {
	s.EP, s.ETP = 0, 0
	return compose(inPlace(dense(p.Layers)), s)
}

// HasDense is whether the profile timed a dense layer before the
// experts.
func (p *Profile) HasDense() bool { return len(dense(p.Layers)) > 0 }

// own is ls's layers of the model's own kind: all but the dense layers
// before the experts.
func own(ls []Layer) []Layer {
	if !slices.ContainsFunc(ls, func(l Layer) bool { return l.Block == BlockDense }) {
		return ls // no dense layers: ls itself, not a copy
	}
	var out []Layer
	for _, l := range ls {
		if l.Block != BlockDense {
			out = append(out, l)
		}
	}
	return out
}

// dense is ls's dense layers before the experts.
func dense(ls []Layer) []Layer {
	var out []Layer
	for _, l := range ls {
		if l.Block == BlockDense {
			out = append(out, l)
		}
	}
	return out
}

// checkLatent refuses a profile q of another latent attention than the
// workload m's (the query's latent, the keys' and values' latent, the
// rotary width: the layer's shape).
func checkLatent(q, m transformer.Spec) error {
	for _, f := range []struct {
		name     string
		got, run int
	}{{"q_lora", q.QLoRA, m.QLoRA}, {"kv_lora", q.KVLoRA, m.KVLoRA}, {"rope_dim", q.RopeDim, m.RopeDim}} {
		if f.got != f.run {
			return fmt.Errorf("profile of another model: %s %d, the workload's %d (profile %s; workload %s)", f.name, f.got, f.run, q, m)
		}
	}
	return nil
}
