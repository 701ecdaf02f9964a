package plans

import (
	"testing"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// The experts' communication is said where a plan has some: expert
// parallelism (whatever its source), or an expert-tensor degree above 1
// priced from a profile; not a dense plan's (its ETP its T, its
// experts' source the zero) nor experts at etp 1 and ep 1.
func TestExpertsComm(t *testing.T) {
	for _, c := range []struct {
		name       string
		T, ETP, EP int
		src        profile.Source
		want       bool
	}{
		{"dense tp 2", 2, 2, 1, profile.Modelled, false},
		{"experts tp 2 etp 1", 2, 1, 1, profile.Modelled, false},
		{"experts ep 2, modelled", 1, 1, 2, profile.Modelled, true},
		{"experts tp 2 etp 2, measured", 2, 2, 1, profile.Measured, true},
		{"experts tp 2 etp 2, composed", 2, 2, 1, profile.Composed, true},
	} {
		pl := plan.Plan{TP: c.T, EP: c.EP, ETP: c.ETP}
		if got := expertsComm(pl, &planner.Sources{EP: c.src}); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
