package export

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/placer/placer/workloads/export/internal/exporttest"
)

// read back the same.
func FuzzDecodePlan(f *testing.F) {
	for _, data := range exporttest.PlanExamples(f, "../../docs/torch-plan.md") {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePlan(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		out, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		q, err := DecodePlan(out)
		if err != nil {
			t.Fatalf("written plan does not read back: %v", err)
		}
		again, _ := q.Encode()
		if !bytes.Equal(out, again) {
			t.Fatalf("written twice differently:\n%s\n%s", out, again)
		}
	})
}

// TestPlanFuzzSeeds checks that the committed seeds are what their names
// say: valid-* read, bad-* are refused.
func TestPlanFuzzSeeds(t *testing.T) {
	files, err := filepath.Glob("testdata/fuzz/FuzzDecodePlan/*")
	if err != nil || len(files) == 0 {
		t.Fatal("no seed corpus")
	}
	for _, p := range files {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(strings.TrimSpace(string(raw)), "\n", 2)
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[len(lines)-1], "[]byte("), ")"))
		if len(lines) != 2 || lines[0] != "go test fuzz v1" || err != nil {
			t.Fatalf("%s: not a []byte corpus file", p)
		}
		_, err = DecodePlan([]byte(s))
		switch name := filepath.Base(p); {
		case strings.HasPrefix(name, "valid-") && err != nil:
			t.Errorf("%s: %v", name, err)
		case strings.HasPrefix(name, "bad-") && err == nil:
			t.Errorf("%s: no error", name)
		}
	}
}
