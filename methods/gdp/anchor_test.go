package gdp

import (
	"context"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/nn/graphsage"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/workloads"
)

// TestAnchorIsReference: the reference mapped onto the policy's action
// space (16 priority and fusion levels, one per unit) and mapped back by
// the tie-break is the reference again, step time for step time, for
// references that set their own priorities; without the tie-break the
// levels lose time.
func TestAnchorIsReference(t *testing.T) {
	g, err := workloads.Build("trxl2")
	if err != nil {
		t.Fatal(err)
	}
	h, _ := roofline.Preset("v100")
	c, err := roofline.NewCluster(h, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := methodstest.RooflineProblem(g, c, roofline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.Base = decision.Decision{Fusion: decision.TopologicalFusion(g)}
	if p.Base.Device, err = inputs.Placement("expert", g, 2); err != nil {
		t.Fatal(err)
	}
	c0 := configFor(nil, optimize.AllTasks)
	pol, err := policy.New(&c0, 1)
	if err != nil {
		t.Fatal(err)
	}
	step := func(d decision.Decision) float64 {
		r, err := p.Evaluator.Evaluate(context.Background(), p.Complete(d))
		if err != nil {
			t.Fatal(err)
		}
		return r.StepTime
	}
	for _, o := range []optimize.Optimizer{classical.GPDFS{}, classical.METF{}} {
		method := o.Name()
		res, err := o.Optimize(context.Background(), p, &optimize.Settings{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		ref := p.Complete(res.Decision)
		tgt := policyTarget(pol.Config(), ref)
		// What a policy that copies its anchor decides: every op its
		// unit's (first op's) levels; units are co-location groups, or
		// contracted to at most 256 (grouped by device only, so a unit's
		// ops have levels of their own).
		units, err := Units(p, ref, 256, 1)
		if err != nil || units == nil {
			t.Fatalf("units: %v (%d)", err, len(units))
		}
		in, err := pol.PrepareUnits(g, 2, Hints(p), units)
		if err != nil {
			t.Fatal(err)
		}
		for _, nd := range []*graphsage.Nodes{graphsage.NewNodes(g, true), in.Nodes()} {
			copied := tgt.Clone()
			for op, u := range nd.UnitOf {
				first := nd.Members(int(u))[0]
				copied.Priority[op], copied.Fusion[op] = tgt.Priority[first], tgt.Fusion[first]
			}
			want, quantized, got := step(ref), step(copied), step(newTiebreak(ref, tgt, nd).apply(copied))
			t.Logf("%s, %d units: reference %.3f ms, on 16 levels per unit %.3f ms, with the tie-break %.3f ms", method, nd.N, want*1e3, quantized*1e3, got*1e3)
			if got != want {
				t.Errorf("%s, %d units: the anchor runs %v, the reference %v", method, nd.N, got, want)
			}
		}
	}
}
