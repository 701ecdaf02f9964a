package planner

import (
	"os"
	"strings"
	"testing"

	"github.com/placer/placer/planner/plan"
)

// bridgeTags are the NeMo containers of Megatron-Bridge's performance
// archive and the Megatron-Bridge tag each ships (docs/versions1.json at
// 067f987d; 25.09: docs/releases/software-versions.md, 0.1.0rc3).
var bridgeTags = map[string]string{
	"25.09": "v0.1.0rc3", "25.11": "v0.2.0", "26.02": "v0.3.0", "26.02.01": "v0.3.1",
	"26.04": "v0.4.0", "26.04.01": "v0.4.2", "26.06": "v0.5.0",
}

// TestBridgeStacks: each named Megatron-Bridge stack sets what its
// release's H100 recipes set (by hand, from the tags: the all-to-all
// dispatcher, fused permutation and router, grouped GEMMs, no CUDA
// graphs, dropless), names its tag in its source, and docs/stacks.md's
// row for it says the same, column by column.
func TestBridgeStacks(t *testing.T) {
	want := plan.Settings{Dispatcher: plan.DispatcherAllToAll, Graphs: plan.GraphsOff}
	// The table's columns: dispatcher, permute fusion, router fusion,
	// grouped GEMM, CUDA graphs, routing.
	wantCols := []string{"alltoall", "on", "on", "on", "off", "dropless"}
	doc, err := os.ReadFile("../docs/stacks.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 9 {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows[name] = cells[2:]
	}
	n := 0
	for _, ns := range plan.Stacks {
		if !strings.HasPrefix(ns.Name, "megatron-bridge-") {
			continue
		}
		n++
		rel := strings.TrimPrefix(ns.Name, "megatron-bridge-")
		tag, ok := bridgeTags[rel]
		if !ok {
			t.Errorf("%s: no release %q in the archive", ns.Name, rel)
			continue
		}
		if ns.Settings != want {
			t.Errorf("%s: %+v, want %+v", ns.Name, ns.Settings, want)
		}
		if !strings.Contains(ns.Source, "Megatron-Bridge "+tag+" ") {
			t.Errorf("%s: source %q does not name %s", ns.Name, ns.Source, tag)
		}
		cols, ok := rows[ns.Name]
		if !ok {
			t.Errorf("%s: no row in docs/stacks.md", ns.Name)
			continue
		}
		for i, w := range wantCols {
			if cols[i] != w {
				t.Errorf("%s: docs/stacks.md column %d %q, want %q", ns.Name, i+1, cols[i], w)
			}
		}
		if !strings.Contains(cols[6], tag) {
			t.Errorf("%s: docs/stacks.md's source does not name %s", ns.Name, tag)
		}
	}
	if n != len(bridgeTags) {
		t.Errorf("%d Megatron-Bridge stacks, want one per release: %d", n, len(bridgeTags))
	}
}
