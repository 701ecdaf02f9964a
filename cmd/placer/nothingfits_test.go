package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestNothingFitsFails holds the README's exit rule at op level: a search
// whose best decision runs out of device memory prints its table and
// NOTHING FITS, writes its out-of-memory result (marked oom), and exits 1
// ("no plan fits" is a failed run), as cluster scale's "no plan fits"
// does; with room it exits 0.
func TestNothingFitsFails(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		memory string
		code   int
	}{
		{"1000", 1}, // 1000 bytes a GPU: nothing of trxl2 fits
		{"", 0},     // the v100's own memory
	} {
		args := []string{"search", "--workload", "trxl2", "--gpus", "2", "--evals", "20", "-q", "-o", filepath.Join(dir, "r"+tc.memory+".json")}
		if tc.memory != "" {
			args = append(args, "--memory", tc.memory)
		}
		var out, errb bytes.Buffer
		code := runContext(context.Background(), args, strings.NewReader(""), &out, &errb)
		fits := !strings.Contains(out.String(), "NOTHING FITS")
		if code != tc.code || fits != (tc.code == 0) {
			t.Errorf("%s: exit %d, NOTHING FITS printed %v, stderr %q; want exit %d", strings.Join(args, " "), code, !fits, errb.String(), tc.code)
		}
		if tc.code == 1 && (!strings.HasPrefix(errb.String(), "placer: nothing fits") || strings.Count(errb.String(), "\n") != 1) {
			t.Errorf("stderr %q: want one line, placer: nothing fits ...", errb.String())
		}
	}
}
