package layering

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sysPathInsert is a Python line putting a folder at the front of the
// module search path. The project's Python is one package
// (python/placer_torch) that its callers import, installed or on
// PYTHONPATH: a file that inserts a folder of its own ahead of the rest
// finds its imports by where it lies, and shadows an installed package
// of the same name. (sys.path.append stays allowed: the loader appends
// the folder of a user's model file, which it was asked to import.)
var sysPathInsert = regexp.MustCompile(`\bsys\.path\.insert\s*\(`)

func TestSysPathInsertPattern(t *testing.T) {
	for src, want := range map[string]bool{
		"sys.path.insert(0, HERE)":           true,
		"    sys.path.insert (0, str(root))": true,
		"sys.path.append(folder)":            false,
		"# no sys.path tricks":               false,
	} {
		if got := sysPathInsert.MatchString(src); got != want {
			t.Errorf("%q: matched %v, want %v", src, got, want)
		}
	}
}

// TestNoSysPathInsert holds every Python file of the repository (but
// build outputs, hidden folders and test inputs) to no sysPathInsert.
func TestNoSysPathInsert(t *testing.T) {
	root := filepath.Join("..", "..")
	skipDirs := map[string]bool{"testdata": true, "out": true, "bin": true, "__pycache__": true}
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (skipDirs[name] || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(name) != ".py" {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if !strings.Contains(filepath.ToSlash(rel), "/") {
			return nil // placer export's outputs in the checkout's root (ignored by .gitignore)
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		for i, line := range strings.Split(string(src), "\n") {
			if sysPathInsert.MatchString(line) {
				t.Errorf("%s:%d: sys.path.insert; import the placer_torch package (installed or on PYTHONPATH) instead", rel, i+1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Errorf("read %d Python files; the walk from %s missed the repository", n, root)
	}
}
