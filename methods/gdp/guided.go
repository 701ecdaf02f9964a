package gdp

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/graphsage"
	"github.com/placer/placer/optimize"
)

// Guided is the GO policy as the proposal model of a local search, learning
// from single-move evaluations (the learned optimizer of issue 17's
// second design: "turn cheap evaluations into the learning signal").
//
// Each round runs one forward pass conditioned on the current decision
// (GO eq. 2's refinement input) and draws Batch proposals, each changing
// one unit's action in one task: the unit is drawn in proportion to how
// much the policy wants to change it (1 - the probability of its current
// action), the new action from the policy's distribution without the
// current one. The proposals are evaluated as one parallel batch and the
// best is taken if it is no worse than the current decision (sideways
// moves cross plateaus), as local search does. The network then learns
// from every proposal: a proposal differs from the current decision in one
// unit and task, so the gradient of log p(proposal) - log p(current) is
// that unit's alone, and REINFORCE with the proposals' normalized
// improvements as advantages makes moves that paid likelier, in the
// context of the decision they were made from. What is learned is per
// unit, from the unit's features and its decision's context, so it can
// carry to other graphs (pre-training, zero-shot).
//
// It starts from Reference (the best quick baseline), which is its first
// candidate: it never returns worse. It implements optimize.Optimizer
// under the name "go-guided"; with NoLearning ("go-guided-no-learning")
// the network is never updated, the ablation; with State
// ("go-guided-state") the network also sees the current decision's
// schedule.
type Guided struct {
	Policy    *policy.Policy // nil = a new one from Config and the seed
	Config    *policy.Config
	Reference decision.Decision // nil Device = the problem's Base
	RefTime   float64           // 0 = Reference's, evaluated
	// Batch is the number of proposals per round. 0 = DefaultGuidedBatch.
	Batch int
	// LearningRate is Adam's step size. 0 = 1e-3.
	LearningRate float64
	// NoLearning is the ablation: proposals from the unchanged network.
	NoLearning bool
	// LearnEvery is how often the network learns: every LearnEvery-th
	// round pays for a backward pass and an update, the others run the
	// cheaper forward pass of inference. 0 = DefaultLearnEvery.
	LearnEvery int
	// MaxUnits bounds the decision units (see Units). 0 = MaxUnits.
	MaxUnits int
	// State makes a new network read the state hints: the current
	// decision's schedule (float, critical path, device idle time, memory
	// headroom, bytes crossing devices; see NumStateHints), besides the
	// graph and the current decision's actions. Off by default: at 60 CPU
	// seconds on trxl4, gnmt4 and rnnlm4 it reached 0.924, 0.911 and 0.908
	// of the reference against 0.887, 0.911 and 0.865 without
	// (docs/search.md). A given Policy reads the state hints if its
	// HintDim is NumHints + NumStateHints, whatever State says.
	State bool
	// OnStep, if set, is called after every round.
	OnStep func(pt Point, refStep float64)
}

var _ optimize.Optimizer = (*Guided)(nil)

// DefaultGuidedBatch is the number of proposals per round of Guided and of
// guided pre-training. One forward pass serves them all: at 60 s on trxl4
// and gnmt4 (4 GPUs, learning every round), 128 proposals per pass reached
// 0.902 and 0.902 of the reference, 32 reached 0.912 and 0.926 (a busier
// machine then; docs/search.md).
const DefaultGuidedBatch = 128

// DefaultLearnEvery is Guided's LearnEvery. A learning round costs about
// 2.5 times an inference round (trxl4, 60 s: 16,641 evaluations learning
// every round, 43,393 never). Learning every 4th round, at 60 s on trxl4,
// gnmt4 and rnnlm4 (4 GPUs, seed 0), reached 0.881, 0.878 and 0.826 of
// the reference, against 0.902, 0.902 and 0.882 learning every round and
// 0.932, 0.853 and 0.849 never (docs/search.md).
const DefaultLearnEvery = 4

// Name returns "go-guided", with "-state" when State and "-no-learning"
// for the ablation.
func (g *Guided) Name() string {
	n := "go-guided"
	if g.State {
		n += "-state"
	}
	if g.NoLearning {
		n += "-no-learning"
	}
	return n
}

// GuidedSettings are the knobs a Guided run records.
type GuidedSettings struct {
	Batch        int            `json:"batch"`
	LearningRate float64        `json:"learning_rate"`
	Learning     bool           `json:"learning"`
	LearnEvery   int            `json:"learn_every,omitempty"` // rounds per update
	State        bool           `json:"state_hints"`           // the network reads the current decision's schedule
	MaxUnits     int            `json:"max_units"`
	Policy       *policy.Config `json:"policy,omitempty"`
}

// Optimize implements optimize.Optimizer. Budget.Steps counts rounds;
// with no bound at all it runs 100 rounds.
func (g *Guided) Optimize(ctx context.Context, p *optimize.Problem, set *optimize.Settings) (*optimize.Result, error) {
	pol := g.Policy
	if pol != nil && !g.NoLearning {
		// Learning changes the network: train a copy, so that g.Policy
		// (a pre-trained model shared by several runs) stays as it was.
		var err error
		if pol, err = pol.Clone(); err != nil {
			return nil, err
		}
	}
	s := &Search{Policy: pol, Config: g.Config, Reference: g.Reference, RefTime: g.RefTime, MaxUnits: g.MaxUnits, Warmup: -1, Moves: -1, stateHints: g.State}
	r, err := s.prepare(ctx, p, set, g.Name())
	if err != nil {
		return nil, err
	}
	batch, lr := g.Batch, g.LearningRate
	if batch <= 0 {
		batch = DefaultGuidedBatch
	}
	if lr <= 0 {
		lr = 1e-3
	}
	cfg := r.pol.Config()
	every := g.LearnEvery
	if every <= 0 {
		every = DefaultLearnEvery
	}
	st := GuidedSettings{Batch: batch, LearningRate: lr, Learning: !g.NoLearning, State: usesState(cfg.HintDim), MaxUnits: r.settings.MaxUnits, Policy: &cfg}
	if !g.NoLearning {
		st.LearnEvery = every
	}
	if ctx.Err() == nil {
		if err := g.rounds(ctx, r, batch, lr, every); err != nil {
			return nil, err
		}
	}
	res, err := r.tr.Result(ctx, r.ref)
	if err != nil {
		return nil, err
	}
	res.Learning = &optimize.Learning{RefStep: r.refStep, Curve: r.curve, Settings: st, Model: r.pol}
	return res, nil
}

// rounds runs the proposal rounds until the tracker says stop.
func (g *Guided) rounds(ctx context.Context, r *searchRun, batch int, lr float64, every int) error {
	tr := r.tr
	rng := rand.New(rand.NewPCG(r.seed, 0x2545f4914f6cdd1d))
	var l *learner
	if !g.NoLearning {
		l = &learner{opt: &nn.Adam{}, lr: lr}
	}
	w, err := newWalk(ctx, r.p, r.pol.Config(), r.in, r.tb, r.refStep, r.anchor, batch)
	if err != nil {
		return err
	}
	eval := func(ctx context.Context, ds []decision.Decision, res []evaluate.Result) (int, error) {
		return tr.EvaluateBatch(ctx, ds, res)
	}
	for i := 0; !tr.Done(ctx); i++ {
		li := l
		if i%every != 0 {
			li = nil
		}
		pt, err := w.round(ctx, r.pol, rng, li, eval)
		if errors.Is(err, optimize.ErrStopped) {
			break
		}
		if err != nil {
			return err
		}
		tr.Step()
		stats := tr.Stats()
		pt.Step, pt.Elapsed, pt.Evaluations, pt.BestStep, pt.Best = stats.Steps, stats.Elapsed.Seconds(), stats.Evaluations, stats.BestStep, stats.Best
		r.curve = append(r.curve, pt)
		if g.OnStep != nil {
			g.OnStep(pt, r.refStep)
		}
	}
	return nil
}

// learner is the network's optimizer in a guided walk; nil = no learning.
type learner struct {
	opt *nn.Adam
	lr  float64
}

// batchEval evaluates a batch of decisions and returns how many it
// evaluated; optimize.ErrStopped (or n = 0) when it was stopped first.
type batchEval func(ctx context.Context, ds []decision.Decision, res []evaluate.Result) (int, error)

// walk is a guided local search on one graph: the current decision, in
// the policy's action space (one action per unit), and its evaluation.
// Guided runs one walk; guided pre-training keeps one per graph.
type walk struct {
	p       *optimize.Problem
	in      *policy.Input // the graph's input, not conditioned on any decision
	tb      *tiebreak
	refStep float64
	tasks   []policy.Task
	start   decision.Decision // where the walk (re)starts, in unit form
	cur     decision.Decision
	curRes  evaluate.Result
	cands   []decision.Decision
	ds      []decision.Decision
	results []evaluate.Result
	rounds  int // since the last (re)start

	// With state hints (the policy's HintDim says so), curIn is in with
	// the hints of cur's schedule, set whenever cur changes; else in.
	state bool
	hints []float64 // Hints(p) with room for the state hints
	curIn *policy.Input
}

// newWalk starts a walk at start (in the policy's action space) with
// batch proposals per round, evaluating start.
func newWalk(ctx context.Context, p *optimize.Problem, cfg policy.Config, in *policy.Input, tb *tiebreak, refStep float64, start decision.Decision, batch int) (*walk, error) {
	w := &walk{p: p, in: in, tb: tb, refStep: refStep, tasks: activeTasks(cfg),
		start: unitForm(start, in.Nodes()),
		cands: make([]decision.Decision, batch), ds: make([]decision.Decision, batch), results: make([]evaluate.Result, batch),
		state: usesState(cfg.HintDim), curIn: in}
	if w.state {
		w.hints = hintsFor(p, cfg.HintDim)
	}
	return w, w.restart(ctx)
}

// moved updates what depends on the current decision after it changed:
// the input's state hints, from the schedule of the decision evaluated.
func (w *walk) moved(ctx context.Context) error {
	if !w.state {
		return nil
	}
	h, err := withStateHints(ctx, w.p, w.in.Nodes(), w.p.Complete(w.tb.apply(w.cur)), w.hints)
	if err != nil {
		return err
	}
	w.curIn, err = w.in.WithHints(h)
	return err
}

// restart puts the walk back at its start.
func (w *walk) restart(ctx context.Context) error {
	w.cur, w.rounds = w.start.Clone(), 0
	var err error
	w.curRes, err = w.p.Evaluator.Evaluate(context.WithoutCancel(ctx), w.p.Complete(w.tb.apply(w.cur)))
	if err != nil {
		return err
	}
	return w.moved(ctx)
}

// round is one round of the walk: one forward pass conditioned on the
// current decision, the proposals drawn from it and evaluated by eval,
// the network's update from them (unless l is nil), and the move to the
// best proposal if it is no worse than the current decision. The point's
// rewards are the proposals' gains over the current decision relative to
// the reference step. It returns optimize.ErrStopped when eval evaluated
// nothing.
func (w *walk) round(ctx context.Context, pol *policy.Policy, rng *rand.Rand, l *learner, eval batchEval) (Point, error) {
	nd := w.in.Nodes()
	in, err := w.curIn.WithInitial(&w.cur)
	if err != nil {
		return Point{}, err
	}
	var out *policy.Output
	if l == nil {
		out, err = pol.Infer(in)
	} else {
		out, err = pol.Forward(in)
	}
	if err != nil {
		return Point{}, err
	}
	defer out.Release()
	for i := range w.cands {
		w.cands[i] = propose(out, rng, nd, w.tasks, w.cur, w.p.Devices())
		w.ds[i] = w.p.Complete(w.tb.apply(w.cands[i]))
	}
	n, err := eval(ctx, w.ds, w.results)
	if err != nil || n == 0 {
		if err == nil {
			err = optimize.ErrStopped
		}
		return Point{}, err
	}
	results := w.results[:n]
	// Improvements over the current decision, relative to the reference
	// step; an invalid proposal counts as twice as bad as the worst valid
	// one.
	obj := w.p.Objective
	gain := make([]float64, n)
	worst := 0.0
	for i := range results {
		if obj.Valid(&results[i]) {
			gain[i] = (obj.Cost(&w.curRes) - obj.Of(&results[i])) / w.refStep
			worst = math.Min(worst, gain[i])
		}
	}
	for i := range results {
		if !obj.Valid(&results[i]) {
			gain[i] = 2*worst - 0.01
		}
	}
	pt := Point{BestReward: math.Inf(-1)}
	best := -1
	for i := range results {
		pt.MeanReward += gain[i] / float64(n)
		pt.BestReward = math.Max(pt.BestReward, gain[i])
		if obj.Valid(&results[i]) {
			pt.Valid += 1 / float64(n)
			if best < 0 || obj.Of(&results[i]) < obj.Of(&results[best]) {
				best = i
			}
		}
	}
	if l != nil {
		if err := learnFromProposals(out, w.cands[:n], w.cur, gain); err != nil {
			return Point{}, err
		}
		nn.ClipGradNorm(pol.Params(), 1)
		l.opt.Step(pol.Params(), l.lr)
	}
	if best >= 0 && !obj.Better(&w.curRes, &results[best]) {
		w.cur = w.cands[best].Clone()
		w.curRes = results[best].Clone()
		if err := w.moved(ctx); err != nil {
			return Point{}, err
		}
	}
	w.rounds++
	return pt, nil
}

// learnFromProposals adds REINFORCE's gradient for one round to out and
// propagates it: for each proposal, its normalized gain times the
// gradient of log p(proposal) - log p(current), which is the changed
// unit's alone.
func learnFromProposals(out *policy.Output, cands []decision.Decision, cur decision.Decision, gain []float64) error {
	n := float64(len(gain))
	mean := 0.0
	for _, x := range gain {
		mean += x / n
	}
	sd := 0.0
	for _, x := range gain {
		sd += (x - mean) * (x - mean) / n
	}
	sd = math.Sqrt(sd)
	if sd < 1e-12 {
		return nil // nothing to tell apart
	}
	sum := 0.0
	for i, x := range gain {
		a := (x - mean) / sd
		// The loss is -a log p(proposal): descending it raises the
		// probability of proposals that gained more than the round's mean.
		if err := out.AddLogProbGrad(cands[i], -a/n); err != nil {
			return err
		}
		sum += a / n
	}
	if err := out.AddLogProbGrad(cur, sum); err != nil {
		return err
	}
	return out.Backward()
}

// activeTasks lists the policy's tasks.
func activeTasks(c policy.Config) []policy.Task {
	ts := []policy.Task{policy.Placement}
	if !c.NoScheduling {
		ts = append(ts, policy.Scheduling)
	}
	if !c.NoFusion {
		ts = append(ts, policy.Fusion)
	}
	return ts
}

// unitForm returns d with every op's actions its unit's (its unit's first
// op's), the form samples have.
func unitForm(d decision.Decision, nd *graphsage.Nodes) decision.Decision {
	out := d.Clone()
	for v := 0; v < nd.N; v++ {
		ms := nd.Members(v)
		first := ms[0]
		for _, op := range ms[1:] {
			for _, f := range [][]int{out.Device, out.Priority, out.Fusion} {
				if f != nil {
					f[op] = f[first]
				}
			}
		}
	}
	return out
}

// propose draws one proposal: cur with one unit's action changed in one
// task, the unit drawn in proportion to 1 - p(its current action) (plus a
// little, so every unit can be drawn), the action from the policy's
// distribution without the current one.
func propose(out *policy.Output, rng *rand.Rand, nd *graphsage.Nodes, tasks []policy.Task, cur decision.Decision, devices int) decision.Decision {
	if devices < 2 && len(tasks) > 1 {
		tasks = tasks[1:] // no placement to change on one device
	}
	t := tasks[rng.IntN(len(tasks))]
	probs, stride := out.Probs(t)
	field, shift, cols := cur.Device, 0, devices
	switch t {
	case policy.Scheduling:
		field, cols = cur.Priority, stride
	case policy.Fusion:
		field, shift, cols = cur.Fusion, 1, stride
	}
	action := func(v int) int { return field[nd.Members(v)[0]] + shift }
	total := 0.0
	for v := 0; v < nd.N; v++ {
		total += 1 - float64(probs[v*stride+action(v)]) + 1e-3
	}
	x, v := rng.Float64()*total, 0
	for ; v < nd.N-1; v++ {
		x -= 1 - float64(probs[v*stride+action(v)]) + 1e-3
		if x < 0 {
			break
		}
	}
	a0 := action(v)
	mass := 0.0
	for a := 0; a < cols; a++ {
		if a != a0 {
			mass += float64(probs[v*stride+a])
		}
	}
	a := a0
	if mass < 1e-9 {
		a = (a0 + 1 + rng.IntN(cols-1)) % cols
	} else {
		y := rng.Float64() * mass
		for a = 0; a < cols; a++ {
			if a == a0 {
				continue
			}
			y -= float64(probs[v*stride+a])
			if y < 0 {
				break
			}
		}
		if a >= cols {
			a = cols - 1
			if a == a0 {
				a--
			}
		}
	}
	c := cur.Clone()
	f := c.Device
	switch t {
	case policy.Scheduling:
		f = c.Priority
	case policy.Fusion:
		f = c.Fusion
	}
	for _, op := range nd.Members(v) {
		f[op] = a - shift
	}
	return c
}
