package planner

import (
	"github.com/placer/placer/planner/cost"
)

// A model whose layers' token mixers differ (transformer.Spec.Mixers:
// Qwen3-Next) has in each layer one mixer and its experts. The
// attention half the cost model asks of a block (attnBlock) is the mean
// of the layers' mixers: a gated attention layer (attnBlock's, with the
// gate's GEMM and product: attnGate) or a Gated DeltaNet (gdnBlock: the
// registered cost.LinearMixer's, families.GatedDeltaNet); the
// experts are moeBlock's. As for hybridLayer, a stage's layers cost their
// number times one layer, so the mean is exact over the model and a
// stage of another mix is costed at it.

// mixerBlock is the mean of m's layers' mixers for one micro-batch on
// one GPU, forward, backward and what selective recomputation runs
// again (the attention layers' core attention).
func (c *coster) mixerBlock() (fwd, bwd, rec phase) {
	ng, na := c.M.MixerKinds()
	l := float64(c.M.Layers)
	add := func(f, b, r phase, k int) {
		w := float64(k) / l
		fwd, bwd, rec = fwd.Plus(cost.Scale(f, w)), bwd.Plus(cost.Scale(b, w)), rec.Plus(cost.Scale(r, w))
	}
	if na > 0 {
		plain := *c
		plain.M.Mixers = ""
		f, b, r := plain.attnBlock()
		gf, gb := c.Points.LinearMixer.AttnGate(&c.Shard)
		add(f.Plus(gf), b.Plus(gb), r, na)
	}
	if ng > 0 {
		f, b, r := c.Points.LinearMixer.MixerBlock(&c.Shard)
		add(f, b, r, ng)
	}
	return fwd, bwd, rec
}
