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

// TestTitanCompiledOutput: torchtitan compiled (compile=on) compiles its
// TransformerBlocks only, so a plan's blocks are the fused kernels' and
// its output layer and loss torchtitan's eager ones (eagerOutput of
// LayerTitan), with loss_parallel at tp=4 as without tensor parallelism;
// before, the whole model was costed as Megatron-Core's fused layers.
func TestTitanCompiledOutput(t *testing.T) {
	for _, strategy := range []string{"dp=8,fsdp=on,stack=torchtitan-0.2,compile=on", "tp=4,dp=2,sp=on,stack=torchtitan-0.2,compile=on"} {
		c := stackCoster(t, "llama3-8b:seq=8192,batch=16", strategy, "grand-teton:1,attention=flash")
		lc := layerCoster(&c.pl.Run)
		if _, ok := lc.(titanCompiled); !ok {
			t.Fatalf("%s: layer costs %T, want titanCompiled", strategy, lc)
		}
		gotF, gotB := lc.Output(c)
		wantF, wantB := c.eagerOutput(eager.LayerTitan)
		megF, _ := c.fusedOutput()
		if gotF != wantF || gotB != wantB || gotF == megF {
			t.Errorf("%s: output %+v, %+v; want torchtitan's eager %+v, %+v (not Megatron-Core's %+v)", strategy, gotF, gotB, wantF, wantB, megF)
		}
		dF, dB := lc.Dense(c)
		fF, fB := fusedLayers{}.Dense(c)
		if dF != fF || dB != fB {
			t.Errorf("%s: blocks %+v, %+v; want the fused kernels' %+v, %+v", strategy, dF, dB, fF, fB)
		}
	}
}
