package planner

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// newCoster is the coster of plan pl's stages of tensor-parallel degree
// T (its hardware p's: p is the caller's, not copied), its plug-ins the
// registered ones (newCosterOf).
func newCoster(m transformer.Spec, pl plan.Plan, p *plan.Pod, T int, tokens float64) coster {
	return newCosterOf(registered, m, pl, p, T, tokens)
}

// newCosterOf is newCoster with the plug-ins of pts.
func newCosterOf(pts *cost.Points, m transformer.Spec, pl plan.Plan, p *plan.Pod, T int, tokens float64) coster {
	c := coster{Shard: cost.Shard{M: m, Plan: pl, H: &p.Hardware, Pod: p, TPG: plan.Group{PerNode: T, Nodes: 1}, Tokens: tokens}, Points: pts}
	c.Plan.TP = T
	decide(pts, &c.Shard)
	c.layers = layersOf(&c.Plan.Run, p)
	if c.Points.FineTune.Of(&c.Shard) != nil {
		c.layers = loraLayers{c.layers, pts}
	}
	return c
}

// layersOf is the layer costs a coster of a plan of settings run on pod
// p asks: the stack's (Settings.layerCoster), the profile's
// measurements in their place where p has a profile (profiledLayers).
func layersOf(run *plan.Settings, p *plan.Pod) LayerCoster {
	lc := layerCoster(run)
	if p != nil && p.Profile != nil {
		return profiledLayers{stack: lc}
	}
	return lc
}

// layerCosts is the layer costs c asks: those newCoster chose, or for a
// coster built field by field layersOf's.
func (c *coster) layerCosts() LayerCoster {
	if c.layers != nil {
		return c.layers
	}
	return layersOf(&c.Plan.Run, c.Pod)
}

// layer is one transformer block's forward and backward for one
// micro-batch on one GPU, its recomputation in the backward included: in
// a model with experts an MoE block.
func (c *coster) layer() (fwd, bwd phase) {
	if c.M.Hybrid() {
		return c.hybridLayer() // layers.go
	}
	if c.M.MoE() {
		return c.layerCosts().MoE(c.blocks())
	}
	return c.layerCosts().Dense(c.blocks())
}
