package layering

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// fileGraph is which files of one package use which: g[a][b] are the
// names file a uses that file b declares, sorted (a and b are base
// names, never equal).
type fileGraph map[string]map[string][]string

// fileUses is the file graph of the package pkg, from the identifiers
// info records as uses (the type checker's reading, not the text's):
// file a uses file b where an identifier of a stands for a name of the
// package declared in b. What counts, alike: a package-level function,
// type, variable or constant; a method, called or taken as a value,
// reached through an interface or an embedded field; an interface's
// method; a field of a struct; and the receiver's type named by a
// method declared in another file than its type. Names declared inside
// a function are in the file that uses them and draw nothing; so do
// other packages' names.
func fileUses(fset *token.FileSet, pkg *types.Package, info *types.Info) fileGraph {
	owner := fieldOwners(pkg)
	g := fileGraph{}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from == to {
			continue
		}
		if g[from] == nil {
			g[from] = map[string][]string{}
		}
		name := useName(obj, owner)
		if !slices.Contains(g[from][to], name) {
			g[from][to] = append(g[from][to], name)
		}
	}
	for _, m := range g {
		for _, names := range m {
			sort.Strings(names)
		}
	}
	return g
}

// fieldOwners maps the fields of pkg's named struct types to their
// type's name.
func fieldOwners(pkg *types.Package) map[*types.Var]string {
	owner := map[*types.Var]string{}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		if s, ok := tn.Type().Underlying().(*types.Struct); ok {
			for f := range s.Fields() {
				owner[f] = name
			}
		}
	}
	return owner
}

// useName names obj for a message: Type.Method for a method, Type.field
// for a field (.field for one of a struct without a name), the name
// otherwise.
func useName(obj types.Object, owner map[*types.Var]string) string {
	switch o := obj.(type) {
	case *types.Func:
		if recv := o.Signature().Recv(); recv != nil {
			t := recv.Type()
			if p, ok := t.(*types.Pointer); ok {
				t = p.Elem()
			}
			if n, ok := types.Unalias(t).(*types.Named); ok {
				return n.Obj().Name() + "." + o.Name()
			}
			return "." + o.Name() // an interface's method, its type unnamed
		}
	case *types.Var:
		if o.IsField() {
			return owner[o] + "." + o.Name()
		}
	}
	return obj.Name()
}

// fileGroups are the groups of files of g that use each other, directly
// or through other files (its strongly connected components of more
// than one file, by Tarjan's algorithm), each sorted, in the order of
// their first file.
func fileGroups(g fileGraph) [][]string {
	set := map[string]bool{}
	for a, m := range g {
		set[a] = true
		for b := range m {
			set[b] = true
		}
	}
	nodes := make([]string, 0, len(set))
	for n := range set {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	index, low, on := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var groups [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v] = len(index)
		low[v] = index[v]
		stack = append(stack, v)
		on[v] = true
		next := make([]string, 0, len(g[v]))
		for w := range g[v] {
			next = append(next, w)
		}
		sort.Strings(next)
		for _, w := range next {
			if _, ok := index[w]; !ok {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var group []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			on[w] = false
			group = append(group, w)
			if w == v {
				break
			}
		}
		if len(group) > 1 {
			sort.Strings(group)
			groups = append(groups, group)
		}
	}
	for _, n := range nodes {
		if _, ok := index[n]; !ok {
			visit(n)
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i][0] < groups[j][0] })
	return groups
}

// groupArrows are the arrows inside group, one line each: "a.go -> b.go:
// the names a uses that b declares".
func groupArrows(g fileGraph, group []string) []string {
	var lines []string
	for _, from := range group {
		for _, to := range group {
			if names, ok := g[from][to]; ok {
				lines = append(lines, fmt.Sprintf("%s -> %s: %s", from, to, strings.Join(names, ", ")))
			}
		}
	}
	return lines
}

// dirUses is the file graph of the package in dir (its Go files, tests
// aside), type-checked from source: for a package that imports only the
// standard library.
func dirUses(dir string) (fileGraph, error) {
	paths, err := goFiles(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.Default()}
	pkg, err := conf.Check(filepath.Base(dir), fset, files, info)
	if err != nil {
		return nil, err
	}
	return fileUses(fset, pkg, info), nil
}

// TestFileGroups: the file graph and its groups on packages written
// here, worked by hand.
func TestFileGroups(t *testing.T) {
	type arrows = map[string][]string
	cases := []struct {
		name   string
		files  map[string]string
		uses   fileGraph
		groups [][]string
	}{{
		name: "two files that call each other",
		files: map[string]string{
			"a.go": "package p\n\nfunc A() { B() }\n",
			"b.go": "package p\n\nfunc B() {\n\tif false {\n\t\tA()\n\t}\n}\n",
		},
		uses:   fileGraph{"a.go": arrows{"b.go": {"B"}}, "b.go": arrows{"a.go": {"A"}}},
		groups: [][]string{{"a.go", "b.go"}},
	}, {
		name: "a chain of three files, a test file's use aside",
		files: map[string]string{
			"a.go":      "package p\n\nfunc A() int { return B() + K }\n",
			"b.go":      "package p\n\nfunc B() int { var t T; return t.n }\n",
			"c.go":      "package p\n\nconst K = 1\n\ntype T struct{ n int }\n",
			"c_test.go": "package p\n\nvar _ = A\n",
		},
		uses:   fileGraph{"a.go": arrows{"b.go": {"B"}, "c.go": {"K"}}, "b.go": arrows{"c.go": {"T", "T.n"}}},
		groups: nil,
	}, {
		name: "a type whose file calls a method declared in another file",
		files: map[string]string{
			"t.go":   "package p\n\ntype T struct{ n int }\n\nfunc (t T) Twice() int { return 2 * t.M() }\n",
			"m.go":   "package p\n\nfunc (t *T) M() int { return t.n }\n",
			"use.go": "package p\n\ntype I interface{ M() int }\n\nvar f = (*T).M\n\nfunc use(i I) int { return i.M() + f(nil) }\n",
		},
		uses: fileGraph{
			"t.go":   arrows{"m.go": {"T.M"}},
			"m.go":   arrows{"t.go": {"T", "T.n"}},
			"use.go": arrows{"t.go": {"T"}, "m.go": {"T.M"}},
		},
		groups: [][]string{{"m.go", "t.go"}},
	}, {
		name: "two groups and a file between them",
		files: map[string]string{
			"a.go": "package p\n\nfunc A() { B() }\n",
			"b.go": "package p\n\nfunc B() { A(); C() }\n",
			"c.go": "package p\n\nfunc C() { D() }\n",
			"d.go": "package p\n\nfunc D() { E() }\n",
			"e.go": "package p\n\nfunc E() { D() }\n",
		},
		uses: fileGraph{
			"a.go": arrows{"b.go": {"B"}},
			"b.go": arrows{"a.go": {"A"}, "c.go": {"C"}},
			"c.go": arrows{"d.go": {"D"}},
			"d.go": arrows{"e.go": {"E"}},
			"e.go": arrows{"d.go": {"D"}},
		},
		groups: [][]string{{"a.go", "b.go"}, {"d.go", "e.go"}},
	}}
	for _, c := range cases {
		g, err := dirUses(writeFiles(t, c.files))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(g, c.uses) {
			t.Errorf("%s: uses %v, want %v", c.name, g, c.uses)
		}
		if got := fileGroups(g); !reflect.DeepEqual(got, c.groups) {
			t.Errorf("%s: groups %v, want %v", c.name, got, c.groups)
		}
	}
	g := fileGraph{"a.go": {"b.go": {"B"}}, "b.go": {"a.go": {"A", "T.M"}, "c.go": {"C"}}, "c.go": {"b.go": {"x"}}}
	want := []string{"a.go -> b.go: B", "b.go -> a.go: A, T.M", "b.go -> c.go: C", "c.go -> b.go: x"}
	if got := groupArrows(g, []string{"a.go", "b.go", "c.go"}); !reflect.DeepEqual(got, want) {
		t.Errorf("groupArrows = %q, want %q", got, want)
	}
}

// oneWayRoots are the folders whose packages' files must use each other
// one way: the cluster planner's.
const oneWayRoots = "./planner/..."

// TestFilesUseOneWay holds the files of each package under oneWayRoots
// (tests aside) to use each other one way: no file a uses a name that
// file b declares while b, directly or through other files of the
// package, uses a name a declares. Then the files can be read bottom up,
// the package's vocabulary (types, small helpers) in the files at the
// bottom and what builds on it above, and a file's subject is whole in
// it and the files below it.
//
// What counts as a use is fileUses' reading: every name the type
// checker resolves to the package's own declarations, calls, type
// names, method values, variables, constants and fields alike. That
// includes the receiver's type named by a method declared in another
// file than its type, so a type's file that calls a method of the type
// declared in a second file makes a group with it. This is stricter than
// counting calls alone, and chosen so: a method is written against its
// type's declaration, so the two files do use each other; and the
// layout that meets it is the one asked for anyway, the type and the
// methods that call no other file in its own file at the bottom, the
// methods that build on them in files above. On 2026-11-29 it found the
// same packages two-way as a second reader of the code's structure that
// reads names as text, and the same packages one-way.
//
// The packages are loaded with go/packages: their own files parsed and
// type-checked from source, what they import read from the export data
// in Go's build cache (go list -export), warm after a build or go vet:
// about half a CPU second for all of planner/ (2026-11-29).
//
// A package's state: go test ./internal/layering -run TestFilesUseOneWay -v
// logs every package's files, arrows and groups, each group's arrows
// one a line, listed or not (without -v, only the failures print).
func TestFilesUseOneWay(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool on PATH: go list is what the load reads")
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:  filepath.Join("..", ".."),
	}
	pkgs, err := packages.Load(cfg, oneWayRoots)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("loaded %d packages from %s; the load missed them", len(pkgs), oneWayRoots)
	}
	slices.SortFunc(pkgs, func(a, b *packages.Package) int { return strings.Compare(a.PkgPath, b.PkgPath) })
	mod := "github.com/placer/placer/"
	for _, p := range pkgs {
		name := strings.TrimPrefix(p.PkgPath, mod)
		if len(p.Errors) > 0 {
			t.Errorf("%s: %v", name, p.Errors[0])
			continue
		}
		g := fileUses(p.Fset, p.Types, p.TypesInfo)
		groups := fileGroups(g)
		var lines []string
		inGroups, inside := 0, 0
		for _, group := range groups {
			lines = append(lines, fmt.Sprintf("files that use each other: %s", strings.Join(group, " ")))
			arrows := groupArrows(g, group)
			for _, a := range arrows {
				lines = append(lines, "  "+a)
			}
			inGroups += len(group)
			inside += len(arrows)
		}
		arrows := 0
		for _, m := range g {
			arrows += len(m)
		}
		if testing.Verbose() {
			t.Logf("%s: %d files, %d arrows between them; groups of files that use each other: %d (%d files, %d arrows inside)%s", name, len(p.GoFiles), arrows, len(groups), inGroups, inside, indent(lines))
		}
		if len(groups) > 0 {
			t.Errorf("%s: files use each other (a -> b: the names a uses that b declares); move a name to the file of what it belongs with, the package's vocabulary to a file that uses none of the others, mutually recursive functions into one file:%s", name, indent(lines))
		}
	}
}

// indent is lines, each on a line of its own after a tab.
func indent(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("\n\t" + l)
	}
	return b.String()
}
