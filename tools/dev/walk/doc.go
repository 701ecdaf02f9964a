// Command walk measures the walk a maintainer takes to follow a command's
// options from where the command runs to the evaluator, with a call graph
// of the module's code, so that the count (the project's bound: walking
// placer search's options from cmd to the evaluator crosses at most 4
// folders and enters no file more than twice) is one anyone can rerun:
//
//	go run ./tools/dev/walk              # placer search: cmd/placer to the evaluator
//	go run ./tools/dev/walk --steps      # and the walk itself, a call or return a line
//	go run ./tools/dev/walk --json
//	go run ./tools/dev/walk --dir /path/to/another/checkout
//
// The call graph. The module's packages are loaded with go/packages and
// built as SSA; the calls between them come from VTA (go/callgraph/vta:
// variable type analysis), the default, or from --callgraph cha or
// static. Calls through synthetic functions (wrappers, thunks, bound
// methods) go to what they call, calls out of the module are left out, and
// a generic function's instances are the function. VTA because a walk from
// a cobra RunE closure crosses calls of function values (the Backend that
// builds the evaluator): static's graph has neither the closure nor those
// calls, and CHA resolves a function value to every function of its
// signature (a claim's goroutine calling cmd/placer.main). Interface
// method calls fan out to every implementation and are left out unless
// --interfaces: the walk follows the calls a reader sees the callee of. A
// call of a function value that is a parameter is left out too; instead a
// function, or function literal, handed to a call is read there, at that
// call, as a reader reads it.
//
// The walk. It starts at the one function --from names (default: the RunE
// closure of newSearchCmd in cmd/placer/search.go) and ends at the
// functions --to names (default: the evaluator's constructors,
// roofline.NewModel, roofline.NewEvaluator, strategy.NewEvaluator,
// strategy.Wrap and hw.NewEvaluator, and the evaluate.Evaluator
// implementations' Evaluate and EvaluateBatch); both are regular
// expressions on names as go/ssa writes them, less the module's path
// ("jobs.Search", "(*evaluate/roofline.Evaluator).Evaluate"). It follows
// the options: the start's parameters and free variables carry them, and
// in each function read so far a value carries them when it is computed
// from one that does (a field, a conversion, a composite literal built
// from one, whatever one is stored into) but not what a call returns. It
// is depth first, each function's calls in source order: a call that
// hands over a carried value (argument, receiver, closure's variables) to
// a function not read yet is followed. When the callee leads to an end
// (some chain of calls reaches one) and is not an end, its own calls are
// read in turn; else it is read as a leaf, entered and left (--leaves=false
// leaves those out). Each function is read once.
//
// The counts, over the walk's moves (each call down, each return up): a
// file is entered when a move goes into it from another file (the start's
// file is entered once to begin with), a climb is a return into another
// file, and a folder (a package's directory) is visited when a file in it
// is. walk prints the shortest path (fewest calls) from the start to an
// end, the folders and the files with how often each is entered (highest
// first), and the totals.
//
// May import: no other placer package
package main
