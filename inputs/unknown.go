package inputs

import (
	"slices"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/workloads"
)

// CheckWorkload refuses a --workload that names nothing placer knows, a
// usage error (exit 2) with the nearest names: not a built-in op graph
// (workloads.Lookup) and not a transformer at cluster scale (WorldOf: a
// preset, gpt:, llama:, hf:). It is the one line for an unknown workload,
// whatever else the command line holds (with --cluster too: a typo of a
// preset is no op graph's mistake).
func CheckWorkload(name string) error {
	if name == "" || WorldOf(name) == ClusterScale {
		return nil
	}
	if _, ok := workloads.Lookup(name); ok {
		return nil
	}
	head, _, _ := strings.Cut(strings.ToLower(name), ":")
	near := Nearest(head, append(workloads.Names(), transformer.Presets()...), 3)
	hint := "placer workloads list"
	if len(near) > 0 {
		hint = "nearest: " + strings.Join(near, ", ") + "; placer workloads list"
	}
	return fail.Usagef("--workload %q: unknown workload (%s)", name, hint)
}

// Nearest is up to n of names nearest to s by edit distance (Levenshtein,
// case-insensitive), nearest first, those within a third of the longer
// name's length (at least 2 edits), ties in names' order.
func Nearest(s string, names []string, n int) []string {
	type cand struct {
		name string
		d, i int
	}
	var cs []cand
	for i, name := range names {
		d := editDistance(strings.ToLower(s), strings.ToLower(name))
		if d <= max(2, max(len(s), len(name))/3) {
			cs = append(cs, cand{name, d, i})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	var out []string
	for _, c := range cs {
		if len(out) == n {
			break
		}
		if !slices.Contains(out, c.name) {
			out = append(out, c.name)
		}
	}
	return out
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
