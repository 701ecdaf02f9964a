package inputs

import (
	"slices"
	"testing"

	"github.com/placer/placer/internal/fail"
)

// TestCheckWorkload: an unknown workload is told one way, with the
// nearest names (op graphs and presets alike), whatever the rest of the
// line; names placer knows pass.
func TestCheckWorkload(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"llama3-70:seq=8192,batch=512", `--workload "llama3-70:seq=8192,batch=512": unknown workload (nearest: llama3-70b, llama3-8b; placer workloads list)`},
		{"gnmt9", `--workload "gnmt9": unknown workload (nearest: gnmt2, gnmt4, gnmt8; placer workloads list)`},
		{"zzzzzzzzzz", `--workload "zzzzzzzzzz": unknown workload (placer workloads list)`},
		{"gnmt8", ""},
		{"llama3-70b:seq=8192,batch=512", ""},
		{"gpt:layers=2", ""},
		{"hf:x.json", ""},
		{"", ""},
	} {
		err := CheckWorkload(c.name)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v; want nil", c.name, err)
		case c.want != "" && (err == nil || err.Error() != c.want || fail.Code(err, false) != 2):
			t.Errorf("%q: %v; want %q, exit 2", c.name, err, c.want)
		}
	}
}

// TestNearest: Levenshtein by hand: kitten-sitting 3; the bound is a
// third of the longer name, at least 2.
func TestNearest(t *testing.T) {
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance(kitten, sitting) = %d, want 3", d)
	}
	if d := editDistance("", "abc"); d != 3 {
		t.Errorf("editDistance('', abc) = %d, want 3", d)
	}
	names := []string{"alpha", "alpah", "beta", "gamma"}
	if got := Nearest("alpha", names, 3); !slices.Equal(got, []string{"alpha", "alpah"}) {
		t.Errorf("Nearest(alpha) = %v", got)
	}
	if got := Nearest("zeta", names, 3); !slices.Equal(got, []string{"beta"}) {
		t.Errorf("Nearest(zeta) = %v", got)
	}
}
