package scale

import (
	"os"
	"strings"
	"testing"
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
	want := Settings{Dispatcher: DispatcherAllToAll, Graphs: GraphsOff}
	// The table's columns: dispatcher, permute fusion, router fusion,
	// grouped GEMM, CUDA graphs, routing.
	wantCols := []string{"alltoall", "on", "on", "on", "off", "dropless"}
	doc, err := os.ReadFile("../../docs/stacks.md")
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
	for _, ns := range Stacks {
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

// TestBridgeRowsStacks: every row of the Megatron-Bridge by-release
// sweeps names the stack of the release in its label, and the settings
// in effect are its release's with its model's own (by hand, from the
// recipes: 25.09's Qwen3 rows capacity factor 1; Qwen3-30B-A3B the flex
// dispatcher from 26.02 on; everything else the all-to-all dispatcher,
// dropless).
func TestBridgeRowsStacks(t *testing.T) {
	type run struct {
		dispatcher string
		capacity   float64
	}
	a2a, drop, flex := run{DispatcherAllToAll, 0}, run{DispatcherAllToAll, 1}, run{DispatcherFlex, 0}
	wants := map[string]map[string]run{
		"Llama 3 8B":      {"25.09": a2a, "25.11": a2a},
		"Llama 3 70B":     {"25.09": a2a, "25.11": a2a, "26.02": a2a, "26.02.01": a2a, "26.04": a2a, "26.04.01": a2a},
		"Llama 3.1 405B":  {"25.09": a2a, "25.11": a2a, "26.02": a2a, "26.04.01": a2a, "26.06": a2a},
		"GPT-OSS 120B":    {"25.11": a2a, "26.02": a2a, "26.02.01": a2a, "26.04": a2a, "26.04.01": a2a, "26.06": a2a},
		"Qwen3-30B-A3B":   {"25.09": drop, "25.11": a2a, "26.02": flex, "26.02.01": flex, "26.04": flex, "26.04.01": flex, "26.06": flex},
		"Qwen3-235B-A22B": {"25.09": drop, "25.11": a2a, "26.02": a2a, "26.02.01": a2a, "26.04": a2a, "26.04.01": a2a},
	}
	const prefix = "Megatron-Bridge DGX-H100 by release: "
	seen := 0
	for _, sw := range publishedSweeps() {
		if !strings.HasPrefix(sw.Name, prefix) {
			continue
		}
		var model string
		for k := range wants {
			if strings.HasPrefix(sw.Name, prefix+k+",") || strings.HasPrefix(sw.Name, prefix+k+" ") {
				model = k
			}
		}
		if model == "" {
			t.Errorf("%s: no expectation", sw.Name)
			continue
		}
		seen++
		if len(sw.Rows) != len(wants[model]) {
			t.Errorf("%s: %d rows, want %d", sw.Name, len(sw.Rows), len(wants[model]))
		}
		for _, r := range sw.Rows {
			rel, _, _ := strings.Cut(r.Label, ":")
			w, ok := wants[model][rel]
			if !ok {
				t.Errorf("%s, %s: release %q not expected", sw.Name, r.Label, rel)
				continue
			}
			s, err := ParseStrategy(r.Strategy)
			if err != nil {
				t.Errorf("%s, %s: %v", sw.Name, r.Label, err)
				continue
			}
			if s.Software.Stack != "megatron-bridge-"+rel {
				t.Errorf("%s, %s: stack %q, want megatron-bridge-%s", sw.Name, r.Label, s.Software.Stack, rel)
			}
			st := s.Software.Settings()
			if st.Dispatcher != w.dispatcher || st.Capacity != w.capacity || st.Graphs != GraphsOff ||
				st.UnfusedPermute || st.UnfusedRouter || st.ExpertLoop {
				t.Errorf("%s, %s: %+v, want dispatcher %s, capacity %g, the rest fused, grouped, no graphs", sw.Name, r.Label, st, w.dispatcher, w.capacity)
			}
		}
	}
	if seen != len(wants) {
		t.Errorf("%d Megatron-Bridge sweeps, want %d", seen, len(wants))
	}
}
