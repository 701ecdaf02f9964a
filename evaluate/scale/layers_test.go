package scale

import (
	"strings"
	"testing"

	"github.com/placer/placer/evaluate/scale/eager"

	"github.com/placer/placer/evaluate/scale/plan"
)

// namedLayers is layer costs under another name: fused's under name.
type namedLayers struct {
	fusedLayers
	name string
}

func (n namedLayers) Name() string { return n.name }

// TestLayerRegistry: the registry takes each name once, refusing a
// second registration of a name (whatever the type) and an empty name,
// and keeps the in-tree stacks' layer costs in order.
func TestLayerRegistry(t *testing.T) {
	for _, c := range []struct {
		name    string
		lcs     []LayerCoster
		want    string // the names registered, or the error's words
		refused bool
	}{
		{"in-tree", []LayerCoster{fusedLayers{}, llamaPyLayers{eagerLayers{eager.LayerLlamaPy}}, hfLayers{eagerLayers{eager.LayerHF}}, titanLayers{eagerLayers{eager.LayerTitan}}},
			"fused, llama.py, transformers, torchtitan", false},
		{"two names", []LayerCoster{fusedLayers{}, namedLayers{name: "fused-slow"}}, "fused, fused-slow", false},
		{"duplicate type", []LayerCoster{fusedLayers{}, fusedLayers{}}, `layer costs "fused" registered twice`, true},
		{"duplicate name, another type", []LayerCoster{hfLayers{eagerLayers{eager.LayerHF}}, namedLayers{name: plan.LayersHF}}, `layer costs "transformers" registered twice`, true},
		{"no name", []LayerCoster{namedLayers{}}, "have no name", true},
	} {
		r, err := newLayerRegistry(c.lcs...)
		switch {
		case c.refused && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		case !c.refused && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.refused && r.names() != c.want:
			t.Errorf("%s: registered %q, want %q", c.name, r.names(), c.want)
		}
	}
	if got, want := layerCosters.names(), "fused, llama.py, transformers, torchtitan"; got != want {
		t.Errorf("layerCosters: %q, want %q", got, want)
	}
}
