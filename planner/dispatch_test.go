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
// framework asks it by that rule: hookUp resolves a First point with
// cost.First and the others with cost.Each; a Pricing point's plug-ins
// are asked only through pricingOf, an EachPricing point's only in a
// loop that asks pricing, and a First or Each point's never through
// the record (pricingOf, pricing), each point resolved once.
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

	// The framework's side: which variable holds each point's plug-ins
	// (hookUp), and how each variable is asked.
	vars := map[string]string{} // variable -> point
	resolved := map[string]int{}
	asked := map[string][]string{} // variable -> how: "pricingOf", "pricing", "loop+pricing", "plain"
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var parsed []*ast.File
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		ast.Inspect(f, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != 1 {
				return true
			}
			v, ok := as.Lhs[0].(*ast.Ident)
			if !ok {
				return true
			}
			ast.Inspect(as.Rhs[0], func(n ast.Node) bool {
				ix, ok := n.(*ast.IndexExpr)
				if !ok {
					return true
				}
				fn, ok1 := ix.X.(*ast.SelectorExpr)
				pt, ok2 := ix.Index.(*ast.SelectorExpr)
				if !ok1 || !ok2 || (fn.Sel.Name != "First" && fn.Sel.Name != "Each") {
					return true
				}
				point := pt.Sel.Name
				vars[v.Name] = point
				resolved[point]++
				rule := cost.Rules[point]
				if (fn.Sel.Name == "First") != (rule == cost.RuleFirst) {
					t.Errorf("%s (rule %s) resolved by cost.%s into %s", point, rule, fn.Sel.Name, v.Name)
				}
				return true
			})
			return true
		})
	}
	for name := range cost.Rules {
		if resolved[name] == 0 {
			t.Errorf("%s: no hookUp resolves it", name)
		}
	}
	for _, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if fn, ok := n.Fun.(*ast.Ident); ok && (fn.Name == "pricingOf" || fn.Name == "pricing") {
					if a, ok := n.Args[len(n.Args)-1].(*ast.Ident); ok && fn.Name == "pricing" {
						asked[a.Name] = append(asked[a.Name], "pricing")
					}
					if a, ok := n.Args[0].(*ast.Ident); ok && fn.Name == "pricingOf" {
						asked[a.Name] = append(asked[a.Name], "pricingOf")
					}
				}
			case *ast.RangeStmt:
				x, ok := n.X.(*ast.Ident)
				if !ok {
					return true
				}
				how := "loop"
				ast.Inspect(n.Body, func(b ast.Node) bool {
					if c, ok := b.(*ast.CallExpr); ok {
						if fn, ok := c.Fun.(*ast.Ident); ok && fn.Name == "pricing" {
							how = "loop+pricing"
						}
					}
					return true
				})
				asked[x.Name] = append(asked[x.Name], how)
			}
			return true
		})
	}
	for v, point := range vars {
		rule := cost.Rules[point]
		for _, how := range asked[v] {
			ok := true
			switch rule {
			case cost.RulePricing:
				ok = how == "pricingOf"
			case cost.RuleEachPricing:
				ok = how == "loop+pricing" || how == "pricing"
			default:
				ok = how != "pricingOf" && how != "pricing" && how != "loop+pricing"
			}
			if !ok {
				t.Errorf("%s (rule %s, variable %s) asked as %s", point, rule, v, how)
			}
		}
		if (rule == cost.RulePricing || rule == cost.RuleEachPricing) && len(asked[v]) == 0 {
			t.Errorf("%s (rule %s, variable %s): never asked by the record", point, rule, v)
		}
	}
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
// `var _ cost.X = T{}` assertions): plug-ins share facts of the plan as
// functions, and the framework composes them (cost.Rules).
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
				return true
			})
		}
	}
}
