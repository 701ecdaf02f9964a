package layering

import (
	"bytes"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// issueNumber is a reference to a numbered issue: the word issue or
// issues, in any case, then a number, with or without a "#" before it
// (TestIssueNumberLines shows each form). A comment says what the code
// does and why; an issue number tells a reader nothing without the
// tracker, and the project's history is told in docs/history.md. The
// optional decimal part lets issueNumberLines pass the verb with a
// duration after it (the host's time to issue 1.4 ms of kernels), which
// names no issue.
var issueNumber = regexp.MustCompile(`(?i)\bissues? #?\d+(\.\d)?`)

// issueNumberLines returns the lines of src, a file called name, that
// cite an issue by number. In Go only comments are read (go/scanner's,
// so a "//" inside a string is no comment); in Python, shell and make
// files every line is, which covers their comments, docstrings and the
// messages they print.
func issueNumberLines(name string, src []byte) []int {
	var lines []int
	add := func(line int) {
		if n := len(lines); n == 0 || lines[n-1] != line {
			lines = append(lines, line)
		}
	}
	if strings.HasSuffix(name, ".go") {
		fset := token.NewFileSet()
		file := fset.AddFile(name, -1, len(src))
		var s scanner.Scanner
		s.Init(file, src, nil, scanner.ScanComments)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok != token.COMMENT {
				continue
			}
			start := fset.Position(pos).Line
			for _, m := range issueNumber.FindAllStringSubmatchIndex(lit, -1) {
				if m[2] < 0 {
					add(start + strings.Count(lit[:m[0]], "\n"))
				}
			}
		}
		return lines
	}
	for i, line := range bytes.Split(src, []byte("\n")) {
		for _, m := range issueNumber.FindAllSubmatchIndex(line, -1) {
			if m[2] < 0 {
				add(i + 1)
			}
		}
	}
	return lines
}

func TestIssueNumberLines(t *testing.T) {
	cases := []struct {
		name, src string
		want      []int
	}{
		{name: "a.go", src: "package a\n\n// F is issue 34's speed figure.\nfunc F() {}\n", want: []int{3}},
		{name: "a.go", src: "package a\n\nfunc F() {} // see Issue #45\n", want: []int{3}},
		{name: "a.go", src: "package a\n\n/* one\n   two (issues 58 to 60)\n*/\n", want: []int{4}},
		{name: "a.go", src: "package a\n\n// one issue 5\n// two issue 6 and issue 7\n", want: []int{3, 4}},
		{name: "a.go", src: "package a\n\nconst s = \"// issue 21\"\n", want: nil},
		{name: "a.go", src: "package a\n\n// the host's issue 1.4 ms, tissue 5, issues a kernel, the issue's targets\n", want: nil},
		{name: "x.py", src: "\"\"\"The op-level table of issue 59.\"\"\"\nx = 1  # (issue 58)\n", want: []int{1, 2}},
		{name: "x.py", src: "out.append(\"targets (issue 35): 5%\")\n", want: []int{1}},
		{name: "run.sh", src: "#!/bin/sh\n# a GPU's short list (issues 58 to 60):\necho ok\n", want: []int{2}},
		{name: "Makefile", src: "all:\n\t# The CPU loop (Issue 58)\n", want: []int{2}},
		{name: "x.py", src: "# what the code does, and why\n", want: nil},
	}
	for _, c := range cases {
		if got := issueNumberLines(c.name, []byte(c.src)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("issueNumberLines(%s, %q) = %v, want %v", c.name, c.src, got, c.want)
		}
	}
}

// TestNoIssueNumbersInComments holds every Go, Python and shell file and
// Makefile of the repository to issueNumber: none may cite an issue by
// number. Documentation (docs/, *.md), test inputs (testdata/), build
// outputs (out/, bin/, hidden folders such as .git and .venv) and the
// files placer export writes into the checkout's root (*.py, *.sh, ignored
// by .gitignore) are not the project's code and are not read.
func TestNoIssueNumbersInComments(t *testing.T) {
	root := filepath.Join("..", "..")
	skipDirs := map[string]bool{"docs": true, "testdata": true, "out": true, "bin": true, "__pycache__": true}
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if d.IsDir() {
			if rel != "." && (skipDirs[name] || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(name)
		if name != "Makefile" && ext != ".go" && ext != ".py" && ext != ".sh" {
			return nil
		}
		if !strings.Contains(rel, "/") && (ext == ".py" || ext == ".sh") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		for _, line := range issueNumberLines(name, src) {
			t.Errorf("%s:%d: an issue number in a comment; say what the code does and why, and cite the doc or measurement instead", rel, line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Errorf("read %d files; the walk from %s missed the repository", n, root)
	}
}
