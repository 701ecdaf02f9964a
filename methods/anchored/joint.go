package anchored

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/evaluate/strategy"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/methods"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/optimize"
)

// JointSearches is how many points of the strategy space the joint
// search refines with the search method (the best of its screening, of
// distinct shapes).
const JointSearches = 3

// jointStart is a point of the strategy space: a strategy and one
// replica's decision (its placement on GPUs / R devices), scored on the
// whole cluster.
type jointStart struct {
	from string // where it came from: a row of the table, or how it was built
	s    decision.Strategy
	d    decision.Decision
	eval *optimize.Result
}

// shape is what makes two starts different enough to refine both: the
// replicas and whether the replica is a pipeline of micro-batches.
func (j jointStart) shape() string {
	return fmt.Sprintf("%d/%d/%s", j.s.R(), min(j.s.M(), 2), j.s.Shard)
}

// JointApplies says whether a search with method also searches the
// joint space of strategies and placements on p (Joint): the graph has
// a batch to split, the placement is the search's to choose and there
// are at least two GPUs. Every search method moves in it: an anchored
// one (go-scored, local-search-anchored, sa-anchored) from each point's
// decision, the others (brkga, local-search, sa, the GO policy) from
// their own start, every decision scored with the point's strategy.
func JointApplies(p *optimize.Problem, method string) bool {
	return slices.Contains(methods.Searches(), method) && p.Graph.Batch() > 0 && p.EffectiveTasks().Placement && p.Devices() >= 2
}

// JointShare is the share of the search's budget the joint space gets,
// from the table's rows so far: nine tenths when the best valid strategy
// row (a decision with a strategy) is at least 1.25x better than the best
// valid single-replica row (the single-replica search has little to win),
// three quarters when it is better, a quarter when it is not (the
// placement is where the step is won: GO's graphs at their GPU counts).
func JointShare(o optimize.Objective, rows []Row) float64 {
	plain, split := inf, inf
	for _, r := range rows {
		switch {
		case r.Result == nil || !o.Valid(&r.Eval):
		case r.Decision.Strategy.IsZero():
			plain = min(plain, o.Of(&r.Eval))
		default:
			split = min(split, o.Of(&r.Eval))
		}
	}
	switch {
	case 1.25*split <= plain:
		return 0.9
	case split < plain:
		return 0.75
	}
	return 0.25
}

// Joint searches the joint space of strategy and placement on p (whose
// evaluator must cost strategies: evaluate/strategy; else it does
// nothing). It screens the strategy space's starting points (the
// strategies' rows of the table given in rows; for every replica count R
// dividing the GPUs, 1 < R < N: screenReplicas), refines the best
// JointSearches of distinct shapes with the search method (refine: one
// replica's placement, order and fusion searched with the strategy around
// it, strategy.Fixed, then the strategy's own knobs, tuneStrategy), each
// on an equal share of half the budget, and the best of them again on
// the other half. One row per refined point: "METHOD STRATEGY".
func Joint(ctx context.Context, p *optimize.Problem, method string, rows map[string]*optimize.Result, budget optimize.Budget, seed uint64, resize Resizer, rec optimize.Recorder) ([]Row, error) {
	se, ok := evaluate.Unwrap(p.Evaluator).(*strategy.Evaluator)
	g := p.Graph
	if !ok || g.Batch() == 0 || !p.EffectiveTasks().Placement || resize == nil {
		return nil, nil
	}
	start := time.Now()
	n := p.Devices()
	var starts []jointStart
	evals := 0
	try := func(from string, s decision.Strategy, d decision.Decision) error {
		d = d.Clone()
		d.Transfer = nil
		d.Strategy = s
		r, err := p.Evaluator.Evaluate(ctx, d)
		evals++
		if err != nil {
			return err
		}
		if p.Objective.Valid(&r) {
			starts = append(starts, jointStart{from: from, s: s, d: d, eval: &optimize.Result{Decision: d, Eval: r}})
		}
		return nil
	}
	// The strategies' rows (ddp, fsdp, gpipe, 1f1b, pipedream), in a fixed
	// order.
	for _, name := range slices.Sorted(maps.Keys(rows)) {
		if r := rows[name]; r != nil && !r.Decision.Strategy.IsZero() && p.Objective.Valid(&r.Eval) {
			starts = append(starts, jointStart{from: name, s: r.Decision.Strategy, d: r.Decision, eval: r})
		}
	}
	// R = 1 (one replica on every GPU) is the main search's and the
	// pipelines' rows; R = N (one GPU each) ddp's, fsdp's and zero2's.
	for R := 2; R < n; R++ {
		if n%R != 0 || R > g.Batch() {
			continue
		}
		if err := screenReplicas(ctx, p, R, seed, resize, try); err != nil {
			return nil, err
		}
	}
	screened := time.Since(start)
	slices.SortStableFunc(starts, func(a, b jointStart) int {
		return cmp.Compare(p.Objective.Of(&a.eval.Eval), p.Objective.Of(&b.eval.Eval))
	})
	var chosen []jointStart
	for _, st := range starts {
		if len(chosen) < JointSearches && !slices.ContainsFunc(chosen, func(c jointStart) bool { return c.shape() == st.shape() }) {
			chosen = append(chosen, st)
		}
	}
	if len(chosen) == 0 {
		return nil, nil
	}
	// Half the budget refines each chosen point, the other half the best
	// of them again, from where its refinement ended.
	type refined struct {
		d     decision.Decision
		eval  evaluate.Result
		evals int
		took  time.Duration
	}
	var done []refined
	share := ScaleBudget(budget, 0.5/float64(len(chosen)))
	for _, st := range chosen {
		t0 := time.Now()
		d, used, err := refine(ctx, p, se, method, st.d, st.s, share, seed, resize)
		if err != nil {
			return nil, err
		}
		r, err := p.Evaluator.Evaluate(ctx, d)
		if err != nil {
			return nil, err
		}
		done = append(done, refined{d, r, used + 1, time.Since(t0)})
	}
	best := 0
	for i := range done {
		if p.Objective.Better(&done[i].eval, &done[best].eval) {
			best = i
		}
	}
	if ctx.Err() == nil {
		t0 := time.Now()
		b := &done[best]
		d, used, err := refine(ctx, p, se, method, b.d, b.d.Strategy, ScaleBudget(budget, 0.5), seed+1, resize)
		if err != nil {
			return nil, err
		}
		r, err := p.Evaluator.Evaluate(ctx, d)
		if err != nil {
			return nil, err
		}
		b.evals += used + 1
		b.took += time.Since(t0)
		if p.Objective.Better(&r, &b.eval) {
			b.d, b.eval = d, r
		}
	}
	var out []Row
	for _, c := range done {
		name := method + " " + c.d.Strategy.String()
		if slices.ContainsFunc(out, func(r Row) bool { return r.Name == name }) {
			continue
		}
		row, err := Evaluate(ctx, p, name, c.d, &optimize.Settings{Seed: seed})
		if err != nil {
			return out, err
		}
		row.Stats.Evaluations += c.evals
		row.Elapsed = c.took
		// The screening's evaluations and time count toward the first
		// row.
		if len(out) == 0 {
			row.Stats.Evaluations += evals
			row.Elapsed += screened
		}
		out = append(out, row)
		record(rec, row)
	}
	return out, nil
}

// refine searches one replica's placement, order and fusion on N/R GPUs
// with strategy s around it (strategy.Fixed), anchored on d, with the
// method and budget, then tunes the strategy's knobs (tuneStrategy). It
// returns the decision (with its strategy) and the evaluations spent.
func refine(ctx context.Context, p *optimize.Problem, se *strategy.Evaluator, method string, d decision.Decision, s decision.Strategy, budget optimize.Budget, seed uint64, resize Resizer) (decision.Decision, int, error) {
	q, closer, err := replicaProblem(p, s.R(), resize)
	if err != nil {
		return d, 0, err
	}
	defer closer()
	fixed, err := strategy.NewFixed(se, s)
	if err != nil {
		return d, 0, err
	}
	if q.Devices() < 2 && q.EffectiveTasks() == (optimize.Tasks{Placement: true}) {
		// One GPU a replica and only its placement to decide: nothing
		// to search (go refuses it), only the strategy's knobs.
		d = d.Clone()
		d.Transfer = nil
		d.Strategy = s
		d, more, err := tuneStrategy(ctx, p, d)
		return d, more, err
	}
	q.Evaluator = fixed
	if p.Realize != nil {
		// What runs: one replica's placement realized with s around it.
		q.Evaluator = evaluate.Realizing(fixed, func(d decision.Decision) (decision.Decision, error) {
			d.Strategy = s
			return p.Realize(d)
		})
	}
	a := d.Clone()
	a.Strategy = decision.Strategy{}
	ar, err := q.Evaluator.Evaluate(ctx, a)
	if err != nil {
		return d, 1, err
	}
	used := 1
	opt, err := methods.New(method, methods.Options{Reference: &optimize.Result{Decision: a, Eval: ar}})
	if err != nil {
		return d, used, err
	}
	res, err := opt.Optimize(ctx, q, &optimize.Settings{Budget: budget, Seed: seed})
	if err != nil && !Interrupted(ctx, err) {
		return d, used, err
	}
	if res != nil {
		d = res.Decision.Clone()
		used += res.Stats.Evaluations
	}
	d.Transfer = nil
	d.Strategy = s
	d, more, err := tuneStrategy(ctx, p, d)
	return d, used + more, err
}

// screenReplicas offers try the points of R replicas on N/R GPUs each:
// the best quick placement of one replica without sharding, with FSDP's
// and with ZeRO-2's, and a pipeline of N/R stages balanced by time at
// every micro-batch count (2 to 32, at most the replica's batch) under
// both schedules.
func screenReplicas(ctx context.Context, p *optimize.Problem, R int, seed uint64, resize Resizer, try func(string, decision.Strategy, decision.Decision) error) error {
	q, closer, err := replicaProblem(p, R, resize)
	if err != nil {
		return err
	}
	defer closer()
	qrows, err := Methods(ctx, q, methods.Quick(), methods.Options{}, true, &optimize.Settings{Seed: seed}, nil)
	if err != nil {
		return err
	}
	if anchor, ok := Best(q.Objective, qrows, false); ok {
		for _, sh := range []decision.Shard{decision.NoShard, decision.FullShard, decision.GradShard} {
			if err := try(anchor.Name+"@replica", decision.Strategy{Replicas: R, Shard: sh}, anchor.Decision); err != nil {
				return err
			}
		}
	}
	d := q.Start()
	d.Device = classical.PipelineStages(q.Graph, q.Cost.OpTime, p.Devices()/R)
	d = q.Complete(d)
	for M := 2; M <= min(32, p.Graph.Batch()/R); M *= 2 {
		for _, sched := range []decision.Schedule{decision.GPipe, decision.OneFOneB} {
			if err := try("stages", decision.Strategy{Replicas: R, MicroBatches: M, Schedule: sched}, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// tuneStrategy tries the strategy's own knobs around d, one at a time
// from the best so far: micro-batches halved and doubled (a pipeline's;
// M = 1 drops the schedule), the other schedule, and with replicas and
// buckets (DDP's, ZeRO-2's) the bucket at 1, 4, 16, 64 and 256 MiB. The
// sharding is the point's shape, chosen by the screening. It returns the
// best and the evaluations it spent.
func tuneStrategy(ctx context.Context, p *optimize.Problem, d decision.Decision) (decision.Decision, int, error) {
	best, err := p.Evaluator.Evaluate(ctx, d)
	if err != nil {
		return d, 1, err
	}
	evals := 1
	B := p.Graph.Batch()
	try := func(s decision.Strategy) error {
		if s.Equal(d.Strategy) || s.CheckFor(B, p.Devices()/s.R(), p.Devices()) != nil {
			return nil
		}
		c := d
		c.Strategy = s
		r, err := p.Evaluator.Evaluate(ctx, c)
		evals++
		if err != nil {
			return err
		}
		if p.Objective.Better(&r, &best) {
			d, best = c, r
		}
		return nil
	}
	s := d.Strategy
	if s.M() > 1 {
		for _, M := range []int{s.M() / 2, s.M() * 2} {
			t := s
			t.MicroBatches = M
			if M <= 1 {
				t.MicroBatches, t.Schedule = 0, ""
			}
			if err := try(t); err != nil {
				return d, evals, err
			}
		}
		t := d.Strategy
		t.Schedule = decision.OneFOneB
		if d.Strategy.Sched() == decision.OneFOneB {
			t.Schedule = ""
		}
		if err := try(t); err != nil {
			return d, evals, err
		}
	}
	if d.Strategy.R() > 1 && d.Strategy.Shard != decision.FullShard {
		base := d.Strategy
		for _, mib := range []int64{1, 4, 16, 64, 256} {
			t := base
			t.BucketBytes = mib << 20
			if t.BucketBytes == decision.DefaultBucketBytes {
				t.BucketBytes = 0
			}
			if err := try(t); err != nil {
				return d, evals, err
			}
		}
	}
	return d, evals, nil
}

// replicaProblem is one replica's problem for R replicas on p's cluster:
// the graph at ceil(B / R) examples on N / R GPUs of the same hardware
// and topology (the cost model's, for the searches' heuristics), with
// the problem's tasks, objective and TensorFlow's base.
func replicaProblem(p *optimize.Problem, R int, resize Resizer) (*optimize.Problem, func() error, error) {
	g := p.Graph
	gb := g
	if R > 1 {
		var err error
		if gb, err = graph.AtBatch(g, (g.Batch()+R-1)/R); err != nil {
			return nil, nil, err
		}
	}
	return resized(p, gb, p.Devices()/R, resize)
}

// ScaleBudget is b with its evaluations, steps and times times f (each
// at least one when it was set).
func ScaleBudget(b optimize.Budget, f float64) optimize.Budget {
	sc := func(v int) int {
		if v == 0 {
			return 0
		}
		return max(1, int(float64(v)*f))
	}
	return optimize.Budget{Evaluations: sc(b.Evaluations), Steps: sc(b.Steps),
		Time: time.Duration(float64(b.Time) * f), CPU: time.Duration(float64(b.CPU) * f)}
}
