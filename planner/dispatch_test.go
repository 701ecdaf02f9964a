package planner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/families"
	"github.com/placer/placer/planner/mechanisms"
)

// TestDispatchRules: every extension point of planner/cost (an
// interface that embeds cost.Plugin) has one dispatch rule
// (cost.Rules), its doc says it ("Dispatch: <rule>."), and the
// framework asks it by that rule: cost.Resolve resolves each point once
// into the field of cost.Points named after it, of its rule's type (a
// First point the interface, an Each point a slice of it, a Pricing or
// EachPricing point cost.Pricing or cost.EachPricing of it, which give
// their plug-ins only by a shard's record: Of, On), and the framework
// lists no point's plug-ins past the record.
func TestDispatchRules(t *testing.T) {
	fset := token.NewFileSet()
	docRule := regexp.MustCompile(`Dispatch: (\w+)[ .]`)
	points := map[string]bool{}
	costFiles, err := filepath.Glob(filepath.Join("cost", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range costFiles {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, sp := range g.Specs {
				ts := sp.(*ast.TypeSpec)
				it, ok := ts.Type.(*ast.InterfaceType)
				if !ok || !embedsPlugin(it) {
					continue
				}
				name := ts.Name.Name
				if name == "CodeBase" {
					// A code base is a plug-in of a registry of its own,
					// chosen by its declaration (cost.Registry.CodeBase),
					// not an extension point of a layer or the step.
					continue
				}
				points[name] = true
				doc := ts.Doc
				if doc == nil {
					doc = g.Doc
				}
				rule, ok := cost.Rules[name]
				if !ok {
					t.Errorf("%s: extension point without a rule in cost.Rules", name)
					continue
				}
				var said []string
				if doc != nil {
					for _, m := range docRule.FindAllStringSubmatch(doc.Text(), -1) {
						said = append(said, m[1])
					}
				}
				if len(said) != 1 || said[0] != string(rule) {
					t.Errorf("%s: its doc says dispatch %v, want exactly %q (cost.Rules)", name, said, rule)
				}
			}
		}
	}
	for name := range cost.Rules {
		if !points[name] {
			t.Errorf("cost.Rules names %s, no extension point of planner/cost", name)
		}
	}

	// The framework's side: each point is resolved once into one field
	// of cost.Points (cost.Resolve) whose type is its rule's: a First
	// point the interface itself, an Each point a slice of it, a Pricing
	// point cost.Pricing of it and an EachPricing point cost.EachPricing
	// of it (asked only by a shard's record: Of, On).
	fields := map[string]int{}
	pt := reflect.TypeFor[cost.Points]()
	for i := range pt.NumField() {
		f := pt.Field(i)
		if !f.IsExported() || f.Type == reflect.TypeFor[*cost.Registry]() {
			continue
		}
		point, how := f.Type.Name(), cost.RuleFirst
		switch {
		case f.Type.Kind() == reflect.Slice:
			point, how = f.Type.Elem().Name(), cost.RuleEach
		case strings.HasPrefix(point, "EachPricing["):
			point, how = genericArg(point), cost.RuleEachPricing
		case strings.HasPrefix(point, "Pricing["):
			point, how = genericArg(point), cost.RulePricing
		case f.Type.Kind() != reflect.Interface:
			t.Errorf("cost.Points.%s: %v is no extension point's", f.Name, f.Type)
			continue
		}
		fields[point]++
		if f.Name != point {
			t.Errorf("cost.Points.%s holds %s: want it named after its point", f.Name, point)
		}
		if rule, ok := cost.Rules[point]; !ok {
			t.Errorf("cost.Points.%s: %s has no rule in cost.Rules", f.Name, point)
		} else if rule != how {
			t.Errorf("cost.Points.%s: %s (rule %s) resolved as %s", f.Name, point, rule, how)
		}
	}
	for name := range cost.Rules {
		if fields[name] != 1 {
			t.Errorf("%s: resolved into %d fields of cost.Points, want 1", name, fields[name])
		}
	}
	// The framework lists no Pricing or EachPricing point's plug-ins
	// past the record (Plugins is for listing them in tests).
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Plugins" {
				t.Errorf("%s: %s asks a point's plug-ins past the record (Plugins)", path, fset.Position(sel.Pos()))
			}
			return true
		})
	}
}

// genericArg is the type argument of generic type name n ("Pricing[...cost.FSDP]": FSDP).
func genericArg(n string) string {
	a := strings.TrimSuffix(n[strings.Index(n, "[")+1:], "]")
	return a[strings.LastIndex(a, ".")+1:]
}

// embedsPlugin is whether interface it embeds Plugin.
func embedsPlugin(it *ast.InterfaceType) bool {
	for _, f := range it.Methods.List {
		if id, ok := f.Type.(*ast.Ident); ok && len(f.Names) == 0 && id.Name == "Plugin" {
			return true
		}
	}
	return false
}

// TestNoPluginAsksAnother: no registered plug-in's code makes another
// registered plug-in to ask it (a family's, mechanism's or code base's
// composite literal outside its package's registration lines and the
// `var _ cost.X = T{}` assertions), nor reads resolved points
// (cost.Points: the shard a plug-in is given carries none, the framework
// holds them): plug-ins share facts of the plan as functions, and the
// framework composes them (cost.Rules).
func TestNoPluginAsksAnother(t *testing.T) {
	types := map[string]bool{}
	for _, r := range []*cost.Registry{families.Registered, mechanisms.Registered} {
		for _, p := range cost.Each[cost.Plugin](r) {
			types[reflect.TypeOf(p).Name()] = true
		}
	}
	if !types["LAMB"] || !types["RandomRouting"] {
		t.Fatalf("registered types %v: LAMB and RandomRouting missing", types)
	}
	fset := token.NewFileSet()
	for _, dir := range []string{"families", "mechanisms"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") || filepath.Base(path) == "registry.go" {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if g, ok := n.(*ast.GenDecl); ok && g.Tok == token.VAR {
					for _, sp := range g.Specs {
						if vs := sp.(*ast.ValueSpec); len(vs.Names) == 1 && vs.Names[0].Name == "_" {
							return false
						}
					}
				}
				if cl, ok := n.(*ast.CompositeLit); ok {
					if id, ok := cl.Type.(*ast.Ident); ok && types[id.Name] {
						t.Errorf("%s: makes plug-in %s{} (a plug-in asks no other)", fset.Position(cl.Pos()), id.Name)
					}
				}
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Points" {
					t.Errorf("%s: reads the shard's resolved points (a plug-in asks no other: the framework does)", fset.Position(sel.Pos()))
				}
				return true
			})
		}
	}
}
