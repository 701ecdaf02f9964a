package scale

import "github.com/placer/placer/evaluate/profile"

// denseLayer is one of a model with experts' dense layers before them
// (block without experts), from the profile's dense layers where their
// shape was measured or composes (profile.DenseLayer: the dense layer
// runs alike at every expert-parallel degree), else the roofline's. A
// profile without dense layers (one written before they were profiled)
// leaves them the roofline's, as before.
func (c *coster) denseLayer() (fwd, bwd phase) {
	if pr := c.pod.Profile; pr != nil {
		if f, b, ok := c.profiled(pr.DenseLayer, pr.DenseLayerInPlace, blockOf); ok {
			return f, b
		}
	}
	return c.block(false)
}

// denseSource is where the dense layers before the experts come from
// (nil in a model without them): the profile's dense layers at c's
// shape where they answer, else the roofline (modelled).
func denseSource(c *coster) *profile.Source {
	if !c.m.MoE() || c.m.DenseLayers == 0 || c.pod.Profile == nil {
		return nil
	}
	src := profile.Modelled
	if _, _, ok := c.profiled(c.pod.Profile.DenseLayer, nil, blockOf); ok {
		_, _, src = c.pod.Profile.DenseLayer(c.layerShape())
	}
	return &src
}
