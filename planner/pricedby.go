package planner

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// PricedBy is what priced a plan's step, by the names its parts are
// registered under, so that a figure's provenance is data: the code
// base whose layer costs priced its layers (the stack's registered
// LayerCoster: "fused", "llama.py", ...; a profile's measurements stand
// in for them where the pod has one: Result.Sources), and the families'
// traits (planner/families) and mechanisms
// (planner/mechanisms) that priced it, in the order registered.
type PricedBy struct {
	CodeBase   string   `json:"code_base"`
	Families   []string `json:"families,omitempty"`
	Mechanisms []string `json:"mechanisms,omitempty"`
}

// PricedBy is what priced r's step, by name: what the framework
// recorded when it made the step's shards (cost.Shard.Priced; Registry.Decide),
// not asked of the plug-ins again. The code base is the registered
// LayerCoster that prices the plan's first stage's shard.
func (r Result) PricedBy() PricedBy {
	var by PricedBy
	pts := r.points
	if pts == nil {
		pts = registered
	}
	if names := pts.CodeBases.Named(r.priced.CodeBases); len(names) > 0 {
		by.CodeBase = names[0]
	}
	by.Families = pts.Families.Named(r.priced.Families)
	by.Mechanisms = pts.Mechanisms.Named(r.priced.Mechanisms)
	return by
}

// PricedByOf is what priced plan pl's step of model m on pod p
// (Result.PricedBy): the record of the shards of each of its stages'
// tensor-parallel degrees (decide), without costing the step.
func PricedByOf(m transformer.Spec, pl plan.Plan, p *plan.Pod) PricedBy {
	return pricedByOf(registered, m, pl, p)
}

// pricedByOf is PricedByOf with the plug-ins of pts.
func pricedByOf(pts *cost.Points, m transformer.Spec, pl plan.Plan, p *plan.Pod) PricedBy {
	tokens := float64(pl.MBS) * float64(m.Seq) / float64(max(pl.CP, 1))
	tps := pl.TPs
	if len(tps) == 0 {
		tps = []int{pl.TP}
	}
	var rec cost.Record
	for i, T := range tps {
		c := newCosterOf(pts, m, pl, p, T, tokens)
		if i == 0 {
			rec = c.Priced
		}
		rec = rec.Union(c.Priced)
	}
	return Result{priced: rec, points: pts}.PricedBy()
}
