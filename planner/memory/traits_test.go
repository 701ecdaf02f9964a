package memory

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNamesNoFamily: the memory model reads no family's own fields or
// predicates (latent attention's, multi-token prediction's): what a
// family keeps in place of the block's own is its trait's, handed in as
// Step.Attention and Step.Prediction (traits.go).
func TestNamesNoFamily(t *testing.T) {
	family := regexp.MustCompile(`\.(MLA\(\)|MTP\b|QLoRA\b|KVLoRA\b|RopeDim\b)`)
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) < 10 {
		t.Fatalf("the package's files: %v, %v", files, err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if code, _, _ := strings.Cut(line, "//"); family.MatchString(code) {
				t.Errorf("%s:%d reads a family's own field: %s", path, i+1, strings.TrimSpace(line))
			}
		}
	}
}
