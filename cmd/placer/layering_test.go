package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayering: cmd/placer depends on jobs and report only. Its files,
// tests and files of every build tag included, import no package of this
// module but jobs, jobs/inputs, report and internal/... (exit codes,
// atomic files, early signals); the CLI binds flags and prints, and the
// work, its settings and their checks live in jobs.
func TestLayering(t *testing.T) {
	const module = "github.com/placer/placer/"
	allowed := func(path string) bool {
		switch strings.TrimPrefix(path, module) {
		case "jobs", "jobs/inputs", "report":
			return true
		}
		return strings.HasPrefix(path, module+"internal/")
	}
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, module) && !allowed(path) {
				t.Errorf("%s imports %s: cmd/placer may import only jobs, jobs/inputs, report and internal/...", name, path)
			}
		}
	}
}
