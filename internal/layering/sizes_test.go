package layering

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The sizes a package may reach before it is split where a part has a
// name: every Go package at most maxPackageLines lines of its own Go
// files (tests aside), jobs' top folder at most maxJobsLines, and no type
// with more than maxMethods methods (the cost model grows by plug-ins,
// not by one type's methods; a builder by layers, not by one more op).
const (
	maxPackageLines = 4500
	maxJobsLines    = 4000
	maxMethods      = 40
)

// goFiles lists dir's Go files, tests aside (every build tag's).
func goFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		files = append(files, filepath.Join(dir, name))
	}
	return files, nil
}

// packageLines is the lines of the Go files of the package in dir,
// tests aside, as `cat *.go | wc -l` counts them (a last line without
// its newline counts too).
func packageLines(dir string) (int, error) {
	files, err := goFiles(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		n += bytes.Count(src, []byte("\n"))
		if len(src) > 0 && src[len(src)-1] != '\n' {
			n++
		}
	}
	return n, nil
}

// methodCounts is how many methods each type of the package in dir
// declares across its Go files, tests aside, by the receiver's type name
// (pointer or value receiver, generic or not, alike).
func methodCounts(dir string) (map[string]int, error) {
	files, err := goFiles(dir)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv != nil {
				if typ, _, ok := strings.Cut(funcName(fd), "."); ok {
					counts[typ]++
				}
			}
		}
	}
	return counts, nil
}

// packageDirs lists root and the folders under it that hold Go files,
// testdata and hidden folders aside.
func packageDirs(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if files, err := goFiles(path); err != nil {
			return err
		} else if len(files) > 0 {
			dirs = append(dirs, path)
		}
		return nil
	})
	return dirs, err
}

// writeFiles writes files (name: text) into a new folder under t's
// temporary folder and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSizeCounters: the counters on a package written here, worked by
// hand: a.go has 3 lines and b.go 2 (its last without a newline), the
// test file's 4 and the sub-folder's aren't counted: 5 lines; T has
// M (pointer), N (value) and G (in b.go) on its receivers, V[K] one, a
// test's method and a function none.
func TestSizeCounters(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.go":      "package a\n\nfunc (t *T) M() {}\n",
		"b.go":      "package a\nfunc (t T) N() {}; func (v V[K]) O() {}; func (t *T) G() {}; func F() {}",
		"a_test.go": "package a\n\nfunc (t *T) X() {}\nfunc (t *T) Y() {}\n",
		"sub/c.go":  "package c\n\nfunc (t *T) Z() {}\n",
		"notes.txt": "a\nb\n",
	})
	if n, err := packageLines(dir); err != nil || n != 5 {
		t.Errorf("packageLines = %d, %v; want 5", n, err)
	}
	got, err := methodCounts(dir)
	if want := map[string]int{"T": 3, "V": 1}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("methodCounts = %v, %v; want %v", got, err, want)
	}
	dirs, err := packageDirs(dir)
	if want := []string{dir, filepath.Join(dir, "sub")}; err != nil || !reflect.DeepEqual(dirs, want) {
		t.Errorf("packageDirs = %v, %v; want %v", dirs, err, want)
	}
	bad := writeFiles(t, map[string]string{"a.go": "package a\n\nfunc (t *T) M( {}\n"})
	if _, err := methodCounts(bad); err == nil {
		t.Error("methodCounts of a file that does not parse: no error")
	}
}

// rel is dir relative to the module's root, for a message.
func rel(root, dir string) string {
	if r, err := filepath.Rel(root, dir); err == nil {
		return filepath.ToSlash(r)
	}
	return dir
}

// oversized are the packages and types over the limits today, each at
// most the size it had when it was listed (2026-11-29): a debt
// to pay, never to grow. A package or type leaves the list when it is
// split; TestPackageSizes fails on an entry that is no longer over, so
// that the list says only what is true.
var oversized = map[string]int{}

// TestPackageSizes holds every Go package of the module (tools/ and
// testdata aside) to maxPackageLines, jobs' top folder to maxJobsLines
// and every type to maxMethods methods, but for the entries of
// oversized, each held to its own size.
func TestPackageSizes(t *testing.T) {
	root := filepath.Join("..", "..")
	dirs, err := packageDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 60 {
		t.Fatalf("found %d packages under %s; the walk missed it", len(dirs), root)
	}
	seen := map[string]bool{}
	methods := 0
	for _, dir := range dirs {
		pkg := rel(root, dir)
		if pkg == "tools" || strings.HasPrefix(pkg, "tools/") {
			continue // developers' tools, their own commands
		}
		n, err := packageLines(dir)
		if err != nil {
			t.Fatal(err)
		}
		checkSize(t, seen, pkg, "lines of Go (tests aside)", n, maxPackageLines)
		counts, err := methodCounts(dir)
		if err != nil {
			t.Fatal(err)
		}
		types := make([]string, 0, len(counts))
		for typ, n := range counts {
			types = append(types, typ)
			methods += n
		}
		sort.Strings(types)
		for _, typ := range types {
			checkSize(t, seen, pkg+"."+typ, "methods", counts[typ], maxMethods)
		}
	}
	jobs := filepath.Join(root, "jobs")
	if n, err := packageLines(jobs); err != nil {
		t.Fatal(err)
	} else if n > maxJobsLines {
		t.Errorf("jobs: %d lines of Go in its top folder (tests aside), more than %d", n, maxJobsLines)
	}
	if methods < 500 {
		t.Errorf("counted %d methods under %s; the walk missed it", methods, root)
	}
	for name := range oversized {
		if !seen[name] {
			t.Errorf("oversized lists %s, which is no longer over its limit (or no longer exists): take it off the list", name)
		}
	}
}

// checkSize holds what name measures (n of what) to limit, or to its
// entry in oversized; seen records the entries that are still over.
func checkSize(t *testing.T, seen map[string]bool, name, what string, n, limit int) {
	t.Helper()
	if n <= limit {
		return
	}
	if most, ok := oversized[name]; ok {
		seen[name] = true
		if n > most {
			t.Errorf("%s: %d %s, more than the %d it is held to (oversized): split it where a part has a name, do not grow it", name, n, what, most)
		}
		return
	}
	t.Errorf("%s: %d %s, more than %d: split it where a part has a name (a mechanism is a plug-in of its own, not one more method)", name, n, what, limit)
}
