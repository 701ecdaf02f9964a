package search

import (
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestSpaceKeepsMemoryRecipe: the memory recipe written with a search's
// strategy (fp8-params, fp8-dpa, graph-pool, the allocator's settings)
// is every plan's, as the fine-tuning and the stack are.
func TestSpaceKeepsMemoryRecipe(t *testing.T) {
	sp, err := SpaceOf("fp8=delayed,fp8-params=on,fp8-dpa=on,cuda-graphs=dense,graph-pool=layers,gc-threshold=0.8,memory-fraction=0.9")
	if err != nil {
		t.Fatal(err)
	}
	want := plan.MemoryRecipe{FP8Params: true, FP8DPA: true, GraphPool: plan.GraphPoolLayers, GCThreshold: 0.8, MemoryFraction: 0.9}
	if sp.MemoryRecipe != want {
		t.Errorf("space's recipe %+v, want %+v", sp.MemoryRecipe, want)
	}
}
