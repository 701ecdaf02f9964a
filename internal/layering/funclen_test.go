package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// maxFuncLines is the most lines a function of evaluate/ may span, from
// its func keyword to its closing brace (its doc comment not counted):
// a longer one is split where a part has a name.
const maxFuncLines = 120

// longFunc is a function declaration and the lines it spans.
type longFunc struct {
	Name  string // Name, or Type.Name for a method
	Lines int
}

// longFuncs returns the function declarations of the Go source src, a
// file called name, that span more than limit lines, in source order. A
// function literal counts toward the declaration it is in.
func longFuncs(name string, src []byte, limit int) ([]longFunc, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []longFunc
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
		if n <= limit {
			continue
		}
		out = append(out, longFunc{Name: funcName(fd), Lines: n})
	}
	return out, nil
}

// funcName is fd's name, with its receiver's type for a method
// (Type.Name, whether the receiver is a pointer or generic).
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// body is a function body of n lines between its func line and its
// closing brace's.
func body(n int) string {
	return strings.Repeat("\tx++\n", n)
}

func TestLongFuncs(t *testing.T) {
	cases := []struct {
		name, src string
		limit     int
		want      []longFunc
	}{
		// 1 + 3 + 1 = 5 lines: at the limit, not over it.
		{name: "at limit", src: "package a\n\nfunc F() {\n" + body(3) + "}\n", limit: 5, want: nil},
		{name: "over", src: "package a\n\nfunc F() {\n" + body(4) + "}\n", limit: 5, want: []longFunc{{"F", 6}}},
		// The doc comment is not counted: 1 + 3 + 1.
		{name: "doc", src: "package a\n\n// F\n// does x.\nfunc F() {\n" + body(3) + "}\n", limit: 5, want: nil},
		// A literal's lines are its declaration's: 1 + 1 + 2 + 1 + 1 + 1 = 7.
		{name: "literal", src: "package a\n\nfunc F() {\n\tg := func() {\n" + body(2) + "\t}\n\tg()\n}\n", limit: 6, want: []longFunc{{"F", 7}}},
		{name: "methods", src: "package a\n\nfunc (p *T) M() {\n" + body(5) + "}\n\nfunc (v V[K]) N() {\n" + body(5) + "}\n\nfunc (w W[K, L]) O() {\n" + body(1) + "}\n",
			limit: 5, want: []longFunc{{"T.M", 7}, {"V.N", 7}}},
		{name: "one line", src: "package a\n\nfunc F() { x++ }\n", limit: 0, want: []longFunc{{"F", 1}}},
	}
	for _, c := range cases {
		got, err := longFuncs("a.go", []byte(c.src), c.limit)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: longFuncs = %v, want %v", c.name, got, c.want)
		}
	}
	if _, err := longFuncs("bad.go", []byte("package a\n\nfunc F( {\n"), 5); err == nil {
		t.Error("longFuncs of a file that does not parse: no error")
	}
}

// TestNoLongFunctionsInEvaluate holds every function of evaluate/'s and
// planner/'s Go files (tests and testdata/ aside; files of every build tag, the cuda
// build's among them) to maxFuncLines.
func TestNoLongFunctionsInEvaluate(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, top := range []string{"evaluate", "planner"} {
		walkFuncLengths(t, root, filepath.Join(root, top))
	}
}

// walkFuncLengths holds every function of the Go files under dir to
// maxFuncLines.
func walkFuncLengths(t *testing.T, root, dir string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		long, err := longFuncs(rel, src, maxFuncLines)
		if err != nil {
			return err
		}
		for _, f := range long {
			t.Errorf("%s: %s spans %d lines, more than %d: split it where a part has a name", rel, f.Name, f.Lines, maxFuncLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Errorf("read %d files; the walk of %s missed it", files, dir)
	}
}
