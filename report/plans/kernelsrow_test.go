package plans

import (
	"strings"
	"testing"

	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/plan"
)

// TestKernelsRow: a plan priced without a profile says where its pod's
// kernel figures come from (measured, or modelled); with a profile the
// profile's row says it, and no kernels row is printed.
func TestKernelsRow(t *testing.T) {
	for _, c := range []struct {
		name    string
		sources *planner.Sources
		want    bool
	}{{"no profile", nil, true}, {"a profile", &planner.Sources{}, false}} {
		var b strings.Builder
		p := ScalePlan{Strategy: "tp=1,pp=1,dp=8,mbs=1", Kernels: "modelled from published kernel benchmarks", Result: planner.Result{Step: 1, Sources: c.sources}}
		if err := WriteScalePlan(&b, p); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "│ kernels"); got != c.want {
			t.Errorf("%s: kernels row %v, want %v:\n%s", c.name, got, c.want, b.String())
		}
	}
	// Each pod preset names where its kernels come from, and the
	// Blackwell ones say they are modelled.
	for _, name := range plan.PodPresets() {
		p, err := plan.ParsePod(name + ":1")
		if err != nil {
			t.Fatal(err)
		}
		k := p.Kernels.Provenance
		if k == "" {
			t.Errorf("pod %s: no kernel provenance", name)
		}
		if blackwell := strings.Contains(name, "b200") || strings.Contains(name, "b300"); blackwell && !strings.HasPrefix(k, "modelled") {
			t.Errorf("pod %s: kernels %q, want them said modelled", name, k)
		}
	}
}
