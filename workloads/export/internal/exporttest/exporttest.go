package exporttest

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// PlanExamples are the plans of docs/torch-plan.md's examples (doc, its
// path from the calling test's folder): a module plan, a transformer
// plan and a transformer plan with experts.
func PlanExamples(t testing.TB, doc string) [][]byte {
	t.Helper()
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, m := range regexp.MustCompile("(?s)```json\n(\\{\n  \"format\".*?)```").FindAllSubmatch(text, -1) {
		out = append(out, m[1])
	}
	if len(out) != 3 {
		t.Fatalf("%d plan examples in docs/torch-plan.md, want 3", len(out))
	}
	return out
}

// Titan03Parts splits a torchtitan 0.3 module into apply_plan's
// statements (one a line, a multi-line list joined) and OVERRIDES'
// arguments, unquoted, joined by spaces.
func Titan03Parts(t *testing.T, out string) (assign []string, overrides string) {
	t.Helper()
	_, body, ok := strings.Cut(out, "    \"\"\"The plan's settings on config.\"\"\"\n")
	body, _, ok2 := strings.Cut(body, "    return config\n")
	if !ok || !ok2 {
		t.Fatalf("no apply_plan in\n%s", out)
	}
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		l = strings.TrimSpace(l)
		// A list's lines join its first.
		if n := len(assign); n > 0 && (strings.HasSuffix(assign[n-1], "[") || strings.HasSuffix(assign[n-1], ",")) {
			assign[n-1] += l
			continue
		}
		assign = append(assign, l)
	}
	_, list, ok := strings.Cut(out, "OVERRIDES = [\n")
	list, _, ok2 = strings.Cut(list, "]\n\n")
	if !ok || !ok2 {
		t.Fatalf("no OVERRIDES in\n%s", out)
	}
	var args []string
	for _, f := range strings.Split(list, ", ") {
		for _, a := range strings.Split(f, ",\n") {
			if a = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(a), ",")); a != "" {
				u, err := strconv.Unquote(a)
				if err != nil {
					t.Fatalf("OVERRIDES item %s: %v", a, err)
				}
				args = append(args, u)
			}
		}
	}
	return assign, strings.Join(args, " ")
}
