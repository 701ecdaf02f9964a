package planner

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/mechanisms"
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

// PricedByOf is what priced plan pl's step of model m on pod p: the
// registered code base (layerCosters) whose layer costs its stack runs,
// and each registered trait and mechanism that
// prices the shard of one of its stages' tensor-parallel degrees
// (cost.Plugin.Prices).
func PricedByOf(m transformer.Spec, pl plan.Plan, p *plan.Pod) PricedBy {
	tokens := float64(pl.MBS) * float64(m.Seq) / float64(max(pl.CP, 1))
	tps := pl.TPs
	if len(tps) == 0 {
		tps = []int{pl.TP}
	}
	var by PricedBy
	shards := make([]*cost.Shard, len(tps))
	for i, T := range tps {
		c := newCoster(m, pl, p, T, tokens)
		shards[i] = &c.Shard
	}
	if names := layerCosters.Priced(shards[0]); len(names) > 0 {
		by.CodeBase = names[0]
	}
	by.Families = families.Registered.Priced(shards...)
	by.Mechanisms = mechanisms.Registered.Priced(shards...)
	return by
}
