package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"go/token"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/static"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

const (
	defaultFrom = `^cmd/placer\.newSearchCmd\$1$`
	defaultTo   = `^evaluate/(roofline|strategy|hw)\.(NewModel|NewEvaluator|Wrap)$|^\(\*?evaluate/[a-z/]+\.[A-Za-z]+\)\.(Evaluate|EvaluateBatch)$`
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "walk:", err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("walk", flag.ContinueOnError)
	dir := fs.String("dir", ".", "the module to read (its root directory)")
	from := fs.String("from", defaultFrom, "where the walk starts: a regexp on the function's name without the module path")
	to := fs.String("to", defaultTo, "where it ends: a regexp on function names (every match is an end)")
	algo := fs.String("callgraph", "vta", "the call graph: vta, cha or static")
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	steps := fs.Bool("steps", false, "also print the walk, one call or return a line")
	leaves := fs.Bool("leaves", true, "also enter the calls handed the options whose callee leads to no end (read as leaves)")
	ifaces := fs.Bool("interfaces", false, "follow interface method calls to every implementation")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	fromRE, err := regexp.Compile(*from)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	toRE, err := regexp.Compile(*to)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	g, err := load(*dir, *algo, *ifaces)
	if err != nil {
		return err
	}
	res, err := g.walk(fromRE, toRE, *leaves)
	if err != nil {
		return err
	}
	res.Callgraph = *algo
	if *jsonOut {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(res)
	}
	res.print(w, *steps)
	return nil
}

// graph is the call graph between the module's own functions: every
// function declared (or written as a literal) in a .go file of the module,
// with its calls in source order. Calls through synthetic functions
// (method wrappers, bound methods, thunks) go straight to what they call;
// calls out of the module are left out; an instance of a generic function
// is its generic origin.
type graph struct {
	root       string // the module's directory
	modPath    string
	interfaces bool // follow interface method calls
	fset       *token.FileSet
	calls      map[*ssa.Function][]call
	funcs      []*ssa.Function // every function of the module, in a stable order
}

type call struct {
	callee  *ssa.Function
	line    int                 // the call's line in the caller's file
	site    ssa.CallInstruction // the call
	arg     int                 // callee is the site's argument arg; -1: the site calls callee
	wrapped bool                // through a synthetic function
}

func load(dir, algo string, ifaces bool) (*graph, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	cfg := &packages.Config{Dir: root, Mode: packages.LoadSyntax | packages.NeedDeps | packages.NeedModule}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, err
	}
	if n := packages.PrintErrors(pkgs); n > 0 {
		return nil, fmt.Errorf("%d errors loading the packages of %s", n, root)
	}
	if len(pkgs) == 0 || pkgs[0].Module == nil {
		return nil, fmt.Errorf("no module at %s", root)
	}
	prog, _ := ssautil.Packages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	var cg *callgraph.Graph
	switch algo {
	case "cha":
		cg = cha.CallGraph(prog)
	case "vta":
		cg = vta.CallGraph(ssautil.AllFunctions(prog), nil)
	case "static":
		cg = static.CallGraph(prog)
	default:
		return nil, fmt.Errorf("--callgraph %q: want cha, vta or static", algo)
	}
	return newGraph(cg, prog.Fset, pkgs[0].Module.Dir, pkgs[0].Module.Path, ifaces), nil
}

func newGraph(cg *callgraph.Graph, fset *token.FileSet, root, modPath string, ifaces bool) *graph {
	g := &graph{root: root, modPath: modPath, fset: fset, interfaces: ifaces, calls: map[*ssa.Function][]call{}}
	for fn, n := range cg.Nodes {
		if fn == nil || !g.own(fn) {
			continue
		}
		k := key(fn)
		if _, ok := g.calls[k]; !ok {
			g.funcs = append(g.funcs, k)
		}
		g.calls[k] = append(g.calls[k], g.expand(n, nil, map[*callgraph.Node]bool{})...)
		// A function literal (or a function) handed to a call is read
		// where it is handed over, as if called there.
		for _, b := range fn.Blocks {
			for _, in := range b.Instrs {
				site, ok := in.(ssa.CallInstruction)
				if !ok {
					continue
				}
				for i, a := range site.Common().Args {
					var f *ssa.Function
					switch a := a.(type) {
					case *ssa.Function:
						f = a
					case *ssa.MakeClosure:
						f = a.Fn.(*ssa.Function)
					}
					if f != nil && g.own(f) {
						g.calls[k] = append(g.calls[k], call{callee: key(f), line: g.fset.Position(site.Pos()).Line, site: site, arg: i})
					}
				}
			}
		}
	}
	for k, cs := range g.calls {
		slices.SortFunc(cs, func(a, b call) int {
			return cmp.Or(cmp.Compare(a.line, b.line), strings.Compare(g.name(a.callee), g.name(b.callee)))
		})
		g.calls[k] = slices.CompactFunc(cs, func(a, b call) bool { return a.callee == b.callee && a.line == b.line })
	}
	slices.SortFunc(g.funcs, func(a, b *ssa.Function) int { return strings.Compare(g.name(a), g.name(b)) })
	return g
}

// expand lists n's calls to the module's functions, looking through
// synthetic ones; a call found through a synthetic function is at site
// (the caller's call of the synthetic one). A call of a function value
// that is a parameter is left out: the function handed over is read where
// it is handed over.
func (g *graph) expand(n *callgraph.Node, site ssa.CallInstruction, seen map[*callgraph.Node]bool) []call {
	var out []call
	for _, e := range n.Out {
		s := site
		if s == nil {
			s = e.Site
			if c := s.Common(); c.IsInvoke() && !g.interfaces {
				continue
			} else if _, ok := c.Value.(*ssa.Parameter); ok && !c.IsInvoke() {
				continue
			}
		}
		switch c := e.Callee; {
		case g.own(c.Func):
			out = append(out, call{callee: key(c.Func), line: g.fset.Position(s.Pos()).Line, site: s, arg: -1, wrapped: site != nil})
		case synthetic(c.Func) && !seen[c]:
			seen[c] = true
			out = append(out, g.expand(c, s, seen)...)
		}
	}
	return out
}

// key is fn's generic origin when fn is an instance, else fn.
func key(fn *ssa.Function) *ssa.Function {
	if o := fn.Origin(); o != nil {
		return o
	}
	return fn
}

// synthetic: a wrapper, thunk or bound method with no source of its own.
func synthetic(fn *ssa.Function) bool {
	return fn.Synthetic != "" && fn.Origin() == nil && fn.Syntax() == nil
}

// own: written in a .go file of the module.
func (g *graph) own(fn *ssa.Function) bool {
	if fn == nil || synthetic(fn) {
		return false
	}
	f := g.file(key(fn))
	return f != "" && !strings.HasPrefix(f, "..") && !filepath.IsAbs(f)
}

// file is fn's file relative to the module's root ("" when it has none).
func (g *graph) file(fn *ssa.Function) string {
	p := g.fset.Position(fn.Pos())
	if p.Filename == "" {
		return ""
	}
	rel, err := filepath.Rel(g.root, p.Filename)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(rel)
}

// name is fn as go/ssa writes it, less the module's path.
func (g *graph) name(fn *ssa.Function) string {
	s := strings.ReplaceAll(fn.String(), g.modPath+"/", "")
	return strings.ReplaceAll(s, g.modPath+".", "main.")
}

func (g *graph) match(re *regexp.Regexp) []*ssa.Function {
	var out []*ssa.Function
	for _, fn := range g.funcs {
		if re.MatchString(g.name(fn)) {
			out = append(out, fn)
		}
	}
	return out
}

// Step is one move of the walk: a call down into Func or a return up to it.
type Step struct {
	Up   bool   `json:"up,omitempty"`
	Func string `json:"func"`
	File string `json:"file"`
	Line int    `json:"line,omitempty"` // the call's line in the caller (calls only)
}

// Count is how often a file (or folder) is entered.
type Count struct {
	Name    string `json:"name"`
	Entered int    `json:"entered"`
}

// Walk is what the tool prints.
type Walk struct {
	Callgraph string   `json:"callgraph"`
	From      string   `json:"from"`
	To        []string `json:"to"` // the ends the walk reaches
	Shortest  []Step   `json:"shortest"`
	Funcs     int      `json:"funcs"` // functions read, the start included
	Folders   []Count  `json:"folders"`
	Files     []Count  `json:"files"`
	Entries   int      `json:"entries"` // file entries, the first opening included
	Climbs    int      `json:"climbs"`
	Steps     []Step   `json:"steps"`
}

func (g *graph) walk(fromRE, toRE *regexp.Regexp, leaves bool) (*Walk, error) {
	starts := g.match(fromRE)
	if len(starts) != 1 {
		return nil, fmt.Errorf("--from %q matches %d functions, want 1: %s", fromRE, len(starts), g.names(starts))
	}
	start := starts[0]
	isEnd := map[*ssa.Function]bool{}
	for _, fn := range g.match(toRE) {
		isEnd[fn] = true
	}
	if len(isEnd) == 0 {
		return nil, fmt.Errorf("--to %q matches no function", toRE)
	}
	// leads: the functions from which some end can be reached (the ends
	// included), the calls out of an end left out.
	callers := map[*ssa.Function][]*ssa.Function{}
	for fn, cs := range g.calls {
		if isEnd[fn] {
			continue
		}
		for _, c := range cs {
			callers[c.callee] = append(callers[c.callee], fn)
		}
	}
	leads := map[*ssa.Function]bool{}
	var queue []*ssa.Function
	for _, fn := range g.funcs {
		if isEnd[fn] {
			leads[fn] = true
			queue = append(queue, fn)
		}
	}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		for _, c := range callers[fn] {
			if !leads[c] {
				leads[c] = true
				queue = append(queue, c)
			}
		}
	}
	if !leads[start] {
		return nil, fmt.Errorf("no call path from %s to %s", g.name(start), toRE)
	}
	res := &Walk{From: g.name(start), Shortest: g.shortest(start, isEnd)}

	// The reading order: depth first from the start, each call in source
	// order; a call is followed when it hands over (part of) the options
	// and its callee is not read yet. The callee's own calls are read when
	// it leads to an end (and is not one); else it is read as a leaf.
	read := map[*ssa.Function]bool{start: true}
	res.Steps = []Step{{Func: g.name(start), File: g.file(start)}}
	var visit func(fn *ssa.Function, inputs map[ssa.Value]bool)
	visit = func(fn *ssa.Function, inputs map[ssa.Value]bool) {
		carried := flow(fn, inputs)
		for _, c := range g.calls[fn] {
			if read[c.callee] || !c.carries(carried) || !leaves && !leads[c.callee] {
				continue
			}
			read[c.callee] = true
			res.Steps = append(res.Steps, Step{Func: g.name(c.callee), File: g.file(c.callee), Line: c.line})
			if isEnd[c.callee] {
				res.To = append(res.To, g.name(c.callee))
			} else if leads[c.callee] {
				visit(c.callee, c.inputs(carried))
			}
			res.Steps = append(res.Steps, Step{Up: true, Func: g.name(fn), File: g.file(fn)})
		}
	}
	all := map[ssa.Value]bool{}
	for _, p := range start.Params {
		all[p] = true
	}
	for _, v := range start.FreeVars {
		all[v] = true
	}
	visit(start, all)
	if len(res.To) == 0 {
		return nil, fmt.Errorf("following the options from %s reaches no end", res.From)
	}
	res.Funcs = len(read)
	res.Folders, res.Files, res.Entries, res.Climbs = tally(res.Steps)
	return res, nil
}

// flow is the values of fn that carry the options, given its inputs
// (parameters and free variables) that do: every value computed from
// one, and whatever a carried value is stored into.
func flow(fn *ssa.Function, inputs map[ssa.Value]bool) map[ssa.Value]bool {
	carried := maps.Clone(inputs)
	for changed := true; changed; {
		changed = false
		mark := func(v ssa.Value) {
			if v != nil && !carried[v] {
				carried[v], changed = true, true
			}
		}
		for _, b := range fn.Blocks {
			for _, in := range b.Instrs {
				var ops []*ssa.Value
				from := false
				for _, op := range in.Operands(ops) {
					from = from || (*op != nil && carried[*op])
				}
				if !from {
					continue
				}
				switch in := in.(type) {
				case *ssa.Store:
					if carried[in.Val] {
						for a := in.Addr; a != nil; {
							mark(a)
							switch x := a.(type) {
							case *ssa.FieldAddr:
								a = x.X
							case *ssa.IndexAddr:
								a = x.X
							default:
								a = nil
							}
						}
					}
				case *ssa.MapUpdate:
					mark(in.Map)
				case *ssa.Call:
					// what a call returns is something new, not the options
				case ssa.Value:
					mark(in)
				}
			}
		}
	}
	return carried
}

// carries: c hands over some of the carried values (an argument, the
// receiver, the function value called, a closure's bound variables).
func (c call) carries(carried map[ssa.Value]bool) bool {
	if c.site.Parent() == nil || carried == nil {
		return true
	}
	var ops []*ssa.Value
	for _, op := range c.site.Operands(ops) {
		if *op != nil && carried[*op] {
			return true
		}
	}
	return false
}

// inputs is which of c.callee's parameters and free variables carry the
// options, given the caller's carried values.
func (c call) inputs(carried map[ssa.Value]bool) map[ssa.Value]bool {
	in := map[ssa.Value]bool{}
	cc := c.site.Common()
	args := cc.Args
	if cc.IsInvoke() {
		args = append([]ssa.Value{cc.Value}, args...)
	}
	known := c.arg < 0 && !c.wrapped && len(args) == len(c.callee.Params)
	for i, p := range c.callee.Params {
		in[p] = !known || carried[args[i]]
	}
	var mc *ssa.MakeClosure
	if c.arg >= 0 {
		mc, _ = cc.Args[c.arg].(*ssa.MakeClosure)
	} else {
		mc, _ = cc.Value.(*ssa.MakeClosure)
	}
	for i, v := range c.callee.FreeVars {
		in[v] = mc == nil || carried[mc.Bindings[i]]
	}
	return in
}

// shortest is a path from start to an end with the fewest calls (of those,
// the first in source order).
func (g *graph) shortest(start *ssa.Function, isEnd map[*ssa.Function]bool) []Step {
	prev := map[*ssa.Function]call{}
	from := map[*ssa.Function]*ssa.Function{start: nil}
	queue := []*ssa.Function{start}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		if isEnd[fn] {
			var path []Step
			for f := fn; f != nil; f = from[f] {
				path = append(path, Step{Func: g.name(f), File: g.file(f), Line: prev[f].line})
			}
			slices.Reverse(path)
			return path
		}
		for _, c := range g.calls[fn] {
			if _, ok := from[c.callee]; !ok {
				from[c.callee], prev[c.callee] = fn, c
				queue = append(queue, c.callee)
			}
		}
	}
	return nil
}

// tally counts, over the walk's steps, the entries into each file and each
// folder (a call into a file, or folder, other than the one the walk is in;
// the first step opens the start's file and folder) and the climbs (returns
// into another file: the reader climbing back up, counted apart from the
// entries, as the issue that asked for the walk counts them).
func tally(steps []Step) (folders, files []Count, entries, climbs int) {
	fileN, dirN := map[string]int{}, map[string]int{}
	cur, curDir := "", ""
	for _, s := range steps {
		if s.File != cur {
			if s.Up {
				climbs++
			} else {
				fileN[s.File]++
				entries++
			}
		}
		if d := filepath.ToSlash(filepath.Dir(s.File)); d != curDir {
			dirN[d]++
			curDir = d
		}
		cur = s.File
	}
	return counts(dirN), counts(fileN), entries, climbs
}

func counts(m map[string]int) []Count {
	var out []Count
	for k, n := range m {
		out = append(out, Count{k, n})
	}
	slices.SortFunc(out, func(a, b Count) int {
		return cmp.Or(cmp.Compare(b.Entered, a.Entered), strings.Compare(a.Name, b.Name))
	})
	return out
}

func (g *graph) names(fns []*ssa.Function) string {
	var s []string
	for _, fn := range fns {
		s = append(s, g.name(fn))
	}
	return strings.Join(s, ", ")
}

func (r *Walk) print(w io.Writer, steps bool) {
	fmt.Fprintf(w, "walk from %s (call graph: %s)\nto %s\n\n", r.From, r.Callgraph, strings.Join(r.To, ", "))
	fmt.Fprintf(w, "shortest path: %d calls\n", len(r.Shortest)-1)
	for _, s := range r.Shortest {
		fmt.Fprintf(w, "  %-40s %s\n", s.File, s.Func)
	}
	if steps {
		fmt.Fprintf(w, "\nreading order:\n")
		depth := 0
		for i, s := range r.Steps {
			arrow := "->"
			switch {
			case s.Up:
				depth--
				arrow = "<-"
			case i > 0:
				depth++
			}
			fmt.Fprintf(w, "  %s%s %s  %s\n", strings.Repeat("  ", depth), arrow, s.Func, s.File)
		}
	}
	fmt.Fprintf(w, "\nfolders visited (%d):\n", len(r.Folders))
	for _, c := range r.Folders {
		fmt.Fprintf(w, "  %3d  %s\n", c.Entered, c.Name)
	}
	fmt.Fprintf(w, "files entered (%d):\n", len(r.Files))
	for _, c := range r.Files {
		fmt.Fprintf(w, "  %3d  %s\n", c.Entered, c.Name)
	}
	fmt.Fprintf(w, "\ntotal: %d functions read, %d folders, %d files, %d file entries, %d climbs back up\n",
		r.Funcs, len(r.Folders), len(r.Files), r.Entries, r.Climbs)
}
