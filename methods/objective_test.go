package methods_test

import (
	"context"
	"testing"

	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// TestSearchesFollowTheObjective runs every search and learned method on
// the graph where the objectives disagree (graphtest.TwoWeights: one
// GPU is the shorter step, a and b apart the smaller peak, by hand) once per
// objective: each must return the placement its objective prefers, with
// no code of its own for the objective.
func TestSearchesFollowTheObjective(t *testing.T) {
	apart := map[optimize.Objective]bool{optimize.StepTime: false, optimize.PeakMemory: true}
	for _, e := range methods.All() {
		if e.Kind != methods.Search && e.Kind != methods.Learned || e.Pretrained {
			continue
		}
		for _, obj := range optimize.Objectives {
			t.Run(e.Name+"/"+obj.String(), func(t *testing.T) {
				p, err := methodstest.NewProblem(graphtest.TwoWeights(), 2, 0)
				if err != nil {
					t.Fatal(err)
				}
				p.Objective = obj
				o := methods.Options{Samples: 4}
				if e.Kind == methods.Learned {
					// No imitation of the one-GPU reference: on four ops
					// go's warm-up would pin every sample to it.
					o.Policy, o.Warmup = small, -1
				}
				opt, err := e.New(o)
				if err != nil {
					t.Fatal(err)
				}
				b := optimize.Budget{Evaluations: 64}
				if e.Kind == methods.Learned {
					b = optimize.Budget{Steps: 30}
				}
				res, err := opt.Optimize(context.Background(), p, &optimize.Settings{Budget: b, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				d := res.Decision.Device
				if (d[0] != d[2]) != apart[obj] || (apart[obj] && optimize.MaxPeak(&res.Eval) > 1<<28+1<<26+1<<11) {
					t.Errorf("placement %v, want a and b apart: %v (step %g, peak %d; %+v)", d, apart[obj], res.Eval.StepTime, optimize.MaxPeak(&res.Eval), res.Stats)
				}
			})
		}
	}
}
