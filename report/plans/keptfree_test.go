package plans

import (
	"slices"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// TestKeptFree: the memory line names what the usable memory leaves out
// beside the margin: the CUDA context and NCCL's buffers, and DeepEP's
// buffers where a flex plan holds them.
func TestKeptFree(t *testing.T) {
	base := []plan.MemoryPart{{Name: "weights", Bytes: 1}, {Name: "CUDA context", Bytes: 1, Outside: true},
		{Name: "NCCL buffers", Bytes: 1, Outside: true}}
	for _, c := range []struct {
		parts []plan.MemoryPart
		want  string
	}{
		{base, "the CUDA context and NCCL's buffers"},
		{append(slices.Clone(base), plan.MemoryPart{Name: "DeepEP buffers", Bytes: 1, Outside: true}),
			"the CUDA context, NCCL's buffers and DeepEP buffers"},
		{append(slices.Clone(base), plan.MemoryPart{Name: "DeepEP buffers", Outside: true}), "the CUDA context and NCCL's buffers"},
	} {
		if got := keptFree(c.parts); got != c.want {
			t.Errorf("%v: %q, want %q", c.parts, got, c.want)
		}
	}
}
