package anchored

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/placer/placer/methods"
	"github.com/placer/placer/optimize"
)

var inf = math.Inf(1)

// DefaultMethod is the search a Search runs when none is named: the
// method that leads placer's own equal-CPU comparison on GO's 14 graphs
// (go-scored: anchored local search whose moves a learned head picks;
// docs/methods.md says how the methods were chosen and compared).
const DefaultMethod = "go-scored"

// Search is placer's search as one optimizer: the quick references, the
// strategies users run, the search method anchored on the best of them,
// the joint space of strategies and placements, and the rule that the
// answer is never worse than a row of the table (Run).
type Search struct {
	// Method is the search that runs after the references, one of
	// methods.Searches ("" = DefaultMethod).
	Method string
	// Options are the method's options (its network, PPO, samples,
	// warm-up); the search sets Reference.
	Options methods.Options
	// References are the methods run first (nil = methods.Quick, and then
	// the strategies users run join the table too, methods.Splitting).
	References []string
	// ReferenceBudget is the evaluation budget of the search methods among
	// References (0 = each one's default).
	ReferenceBudget int
	// Resize makes the problems of the fewer-GPU rows and of the joint
	// space's replicas; nil = neither.
	Resize Resizer
}

var _ optimize.Optimizer = (*Search)(nil)

// Name is the search method's name.
func (s *Search) Name() string { return cmp.Or(s.Method, DefaultMethod) }

// Optimize runs the search (Run) and returns its answer; when ctx is
// cancelled, the best found so far with status Cancelled, as every
// optimizer does.
func (s *Search) Optimize(ctx context.Context, p *optimize.Problem, set *optimize.Settings) (*optimize.Result, error) {
	out, err := s.Run(ctx, p, set)
	if out == nil || out.Result == nil {
		return nil, err
	}
	if Interrupted(ctx, err) {
		err = nil
	}
	return out.Result, err
}

// Outcome is everything a Search found: its table and its answer.
type Outcome struct {
	// Rows are the table's rows before the search's: the references
	// (with their compositions, fewer-GPU rows and fusion variants) and
	// the strategies users run.
	Rows []Row
	// Joint are the joint space's rows, one per refined point
	// ("METHOD STRATEGY").
	Joint []Row
	// Reference is the best valid single-replica row: the search's
	// anchor and its rewards' reference (Name "tf-defaults" and no
	// Result when no row is valid: the method then starts from the
	// problem's Base).
	Reference Row
	// RefStep is the step time the search's rewards were normalized by
	// (the reference's, 0 when none).
	RefStep float64
	// Own is the search method's own result, Result the answer: Own, or
	// the decision of the best row (Source names it) when Own did not
	// beat it.
	Own, Result *optimize.Result
	Source      string
	// Elapsed is the wall time of the search method (the search's row's
	// time, Own's Stats.Elapsed: its summary's), the joint space's rows
	// not included (each row has its own).
	Elapsed time.Duration
	// NotRun, for a run stopped by its context (a signal), are the rows
	// its table would have held and does not: the references and their
	// compositions with no row, the strategies users run, the joint
	// space (notRun); nil for a run that finished.
	NotRun []string
}

// Budget is the search's budget on a graph of ops ops: b, or the
// method's default for that size (methods.Entry.SearchBudgetFor) when b
// names none.
func (s *Search) Budget(b optimize.Budget, ops int) optimize.Budget {
	if b != (optimize.Budget{}) {
		return b
	}
	e, _ := methods.Lookup(s.Name())
	return e.SearchBudgetFor(ops)
}

// Run runs the search on p, whose Base must be TensorFlow's defaults
// (TFBase), with set's budget (none named: the method's default) and
// seed; set's recorder sees each row as it finishes and the search
// method's progress. When ctx is cancelled it still returns the best
// result found so far, with ctx's error.
func (s *Search) Run(ctx context.Context, p *optimize.Problem, set *optimize.Settings) (*Outcome, error) {
	if set == nil {
		set = &optimize.Settings{}
	}
	method := s.Name()
	if err := methods.CheckSearch(method); err != nil {
		return nil, err
	}
	e, _ := methods.Lookup(method)
	if err := e.Limits.Check(p); err != nil {
		return nil, fmt.Errorf("search: %s: %w", method, err)
	}
	if err := methods.Check(s.References); err != nil {
		return nil, err
	}
	seed, rec := set.Seed, set.Recorder
	out := &Outcome{}

	// 1. The quick references: the fast deterministic methods, their
	// orders on TensorFlow's placement, their best decision on fewer
	// GPUs and the best one's fusion variants. The best valid one is the
	// anchor.
	named := len(s.References) > 0
	list := s.References
	if !named {
		list = Realizable(p, methods.Quick())
	}
	rows, err := References(ctx, p, list, &optimize.Settings{Budget: optimize.Budget{Evaluations: s.ReferenceBudget}, Seed: seed}, s.Resize, rec)
	out.Rows = rows
	if err != nil && !Interrupted(ctx, err) {
		return nil, err
	}
	var strategies []string
	if p.Graph.Batch() > 0 && !named {
		strategies = methods.Splitting()
	}
	referencesCut := err != nil

	// 2. The strategies users run without placer (DDP, FSDP, pipelines)
	// join the table when the graph has a batch to split: the answer is
	// never worse than them. They are never the anchor.
	if err == nil && p.Graph.Batch() > 0 && !named {
		var srows []Row
		srows, err = Methods(ctx, p, methods.Splitting(), methods.Options{}, false, &optimize.Settings{Seed: seed}, rec)
		out.Rows = append(out.Rows, srows...)
		if err != nil && !Interrupted(ctx, err) {
			return nil, err
		}
	}
	// Stopped while the references ran: the search below, on a cancelled
	// context, still evaluates its anchor (the best row finished, else
	// TensorFlow's defaults) and returns it, so a result is written.

	// 3. The anchor, and the rewards' reference: the best valid
	// single-replica row. The quick methods ran once: an anchored search
	// with none valid starts from the least invalid of their results.
	mo := s.Options
	out.Reference = Row{Name: "tf-defaults"}
	if best, ok := Best(p.Objective, out.Rows, false); ok {
		out.Reference = best
		mo.Reference = best.Result
	} else {
		mo.Anchors = anchors(out.Rows)
	}

	// 4. The budget: the method's share of it, and the joint space's
	// (as much as the strategies' rows promise: JointShare).
	budget := s.Budget(set.Budget, p.Graph.NumOps())
	joint := JointApplies(p, method)
	main, jointShare := budget, JointShare(p.Objective, out.Rows)
	if joint {
		main = ScaleBudget(budget, 1-jointShare)
	}

	// 5. The search method, anchored on the reference.
	start := time.Now()
	opt, err := methods.New(method, mo)
	if err != nil {
		return nil, err
	}
	set.Record(optimize.Event{Kind: optimize.Share, Method: method, Budget: main})
	res, err := opt.Optimize(ctx, p, &optimize.Settings{Budget: main, Seed: seed, Recorder: rec})
	if err != nil {
		return nil, err
	}
	res.Decision = p.Realized(res.Decision)
	out.Own, out.Result = res, res
	// The search's row's time is the method's own, as its summary says
	// (Stats.Elapsed); the joint space's rows below carry theirs.
	out.Elapsed = res.Stats.Elapsed
	if out.Elapsed <= 0 {
		out.Elapsed = time.Since(start)
	}

	// 6. The joint space: strategies around searched placements, with
	// the rest of the budget.
	if joint && ctx.Err() == nil {
		out.Joint, err = Joint(ctx, p, method, Results(out.Rows), ScaleBudget(budget, jointShare), seed, s.Resize, rec)
		if err != nil && !Interrupted(ctx, err) {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		out.NotRun = notRun(out, list, referencesCut, strategies, joint)
	}
	if res.Learning != nil {
		out.RefStep = res.Learning.RefStep
	}
	if p.Objective != optimize.StepTime || out.RefStep == 0 {
		// The reference's step time (the reward's reference may be a
		// value of another objective).
		out.RefStep = 0
		if out.Reference.Result != nil {
			out.RefStep = out.Reference.Eval.StepTime
		}
	}

	// 7. Never worse than a row of the table (a strategy's and the joint
	// space's included): keep the best row's decision when the search
	// did not beat it.
	all := append(append([]Row(nil), out.Rows...), out.Joint...)
	if best, ok := Best(p.Objective, all, true); ok && (!p.Objective.Valid(&res.Eval) || p.Objective.Of(&best.Eval) < p.Objective.Of(&res.Eval)) {
		kept := *res
		kept.Decision, kept.Eval = best.Decision, best.Eval
		out.Result, out.Source = &kept, best.Name
	}
	return out, ctx.Err()
}

// anchors are the results an anchored search may start from: the
// single-replica rows' (a strategy's decision is never an anchor), in
// order.
func anchors(rows []Row) []*optimize.Result {
	var out []*optimize.Result
	for _, r := range rows {
		if r.Result != nil && r.Decision.Strategy.IsZero() {
			out = append(out, r.Result)
		}
	}
	return out
}

// Realizable is list less the methods whose row a realized problem's
// framework does not run (p.Realize set: a graph from PyTorch):
// TensorFlow's defaults (XLA-like fusion, FIFO), which realized are
// single's decision. The default lists of search and baselines go
// through it; a method a user names is run as named.
func Realizable(p *optimize.Problem, list []string) []string {
	if p.Realize == nil {
		return list
	}
	return slices.DeleteFunc(slices.Clone(list), func(m string) bool { return m == "tf-default" })
}

// notRun are the rows out's table, stopped by a signal, would have held
// and does not: each reference of list with no row; where the references
// were stopped, their compositions on TensorFlow's placement, rows on
// fewer GPUs and other fusion orders (which rows those make depends on
// the rows); each strategy users run with no row; the joint space where
// the search has one (or its rest).
func notRun(out *Outcome, list []string, referencesCut bool, strategies []string, joint bool) []string {
	has := map[string]bool{}
	for _, r := range out.Rows {
		has[r.Name] = true
	}
	var missing []string
	for _, name := range list {
		if !has[name] {
			missing = append(missing, name)
		}
	}
	if referencesCut {
		missing = append(missing, "the references' compositions, fewer-GPU rows and fusion orders")
	}
	for _, name := range strategies {
		if !has[name] {
			missing = append(missing, name)
		}
	}
	switch {
	case joint && len(out.Joint) == 0:
		missing = append(missing, "the joint space")
	case joint:
		missing = append(missing, "the rest of the joint space")
	}
	return missing
}
