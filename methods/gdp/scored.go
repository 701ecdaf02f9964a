package gdp

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/optimize"
)

// Scored is go-scored, the learned optimizer of docs/search.md: anchored
// local search (classical.AnchoredLocalSearch, the classical bar, with the
// same units, move set, delta filter and acceptance) whose moves are
// picked by a learned scoring model instead of at random. Each round draws
// Pool candidate moves as local search draws them, the head (MoveHead)
// scores each from the GO network's outputs for the unit it changes and
// from the current state (device loads, the bytes the move would stop or
// start sending, what earlier moves of the unit gave), and the Batch best
// (a quarter of them drawn uniformly, to keep exploring) are evaluated as
// one parallel batch. Every evaluated move is a labelled example (its
// gain), and the head learns from each round's by regression: cheap labels
// in place of REINFORCE over whole decisions.
//
// The head's output layer starts at zero, so an untrained head picks
// uniformly: go-scored-no-learning is exactly anchored local search run
// with the same pool (the ablation), and go-scored minus it is what
// learning buys at equal time. A pre-trained head (Head, placer pretrain
// --scored) carries what it learned to graphs it never saw.
//
// It implements optimize.Optimizer under the name "go-scored" (with
// "-no-learning" for the ablation).
type Scored struct {
	// Policy is the GO network whose outputs for the anchor are the units'
	// features; nil = GO's network from Config, untrained: a fixed random
	// network (ScoredNetworkSeed), the same for every run and graph, so
	// that a pre-trained head reads the network it was trained with.
	// Measured, its outputs are better features than the pre-trained
	// default model's (docs/search.md).
	Policy *policy.Policy
	// NoNetwork leaves the network out: the features it gives are zero
	// and no forward pass is run (the control that says what the
	// network's features add).
	NoNetwork bool
	Config    *policy.Config
	// Head is a pre-trained move head (not changed: a run trains a copy);
	// nil = a new one.
	Head *MoveHead
	// Anchor is where the search starts (the best quick baseline).
	Anchor classical.Anchor
	// NoLearning is the ablation: the head is never updated.
	NoLearning bool
	// Prior keeps Head frozen, as a prior: a new head learns online what
	// the prior gets wrong on this graph (the gain less the prior's
	// prediction), and a move's score is the two heads' sum. Without it
	// a run fine-tunes a copy of Head.
	Prior bool
	// Batch is the moves evaluated per round (0 = DefaultScoredBatch);
	// Pool the candidates they are picked from (0 = ScoredPoolFactor x
	// Batch).
	Batch, Pool int
	// LearningRate is Adam's step size for the head. 0 = 3e-3.
	LearningRate float64
	// MaxUnits bounds the decision units (see Units). 0 = MaxUnits.
	MaxUnits int
	// Label, if set, is the name the run reports under.
	Label string

	head *MoveHead // ScoredPretrain's head, trained in place
}

var _ optimize.Optimizer = (*Scored)(nil)

// ScoredNetworkSeed seeds go-scored's untrained feature network
// (Scored.Policy nil).
const ScoredNetworkSeed = 0

// DefaultScoredBatch is the moves go-scored evaluates per round, anchored
// local search's batch.
const DefaultScoredBatch = 8

// ScoredPoolFactor is go-scored's default pool over its batch: each round
// the head picks Batch of ScoredPoolFactor x Batch candidates. Measured at
// 60 CPU s on four graphs and two seeds (docs/search.md), a pool of 256
// (this factor) was 2.4% ahead of 64 in geometric mean, 512 level with
// 256 and 1,024 behind 64: a larger pool gives the head more to choose
// from until its features cost more evaluations than its picks win back.
const ScoredPoolFactor = 32

// Name returns "go-scored", or Label.
func (s *Scored) Name() string {
	if s.Label != "" {
		return s.Label
	}
	if s.NoLearning {
		return "go-scored-no-learning"
	}
	return "go-scored"
}

// ScoredSettings are the knobs a Scored run records.
type ScoredSettings struct {
	Batch        int            `json:"batch"`
	Pool         int            `json:"pool"`
	LearningRate float64        `json:"learning_rate"`
	Learning     bool           `json:"learning"`
	Pretrained   bool           `json:"pretrained_head"`
	Prior        bool           `json:"prior_head,omitempty"` // the pre-trained head is a frozen prior
	Updates      int            `json:"head_updates"`
	Policy       *policy.Config `json:"policy,omitempty"`
}

// KnobsOf is ScoredSettings's name (optimize.Knobs).
func (ScoredSettings) KnobsOf() string { return "go-scored" }

// Optimize implements optimize.Optimizer: the anchors, then the scored
// local search, until the budget is spent or ctx is cancelled.
func (s *Scored) Optimize(ctx context.Context, p *optimize.Problem, set *optimize.Settings) (*optimize.Result, error) {
	var seed uint64
	var rec optimize.Recorder
	if set != nil {
		seed, rec = set.Seed, set.Recorder
	}
	batch := s.Batch
	if batch <= 0 {
		batch = DefaultScoredBatch
	}
	pool := s.Pool
	if pool <= 0 {
		pool = ScoredPoolFactor * batch
	}
	lr := s.LearningRate
	if lr <= 0 {
		lr = 3e-3
	}
	head := s.head
	var prior *MoveHead
	switch {
	case head != nil: // pre-training: the head learns in place
	case s.Head != nil && s.Prior && !s.NoLearning:
		prior, head = s.Head, NewMoveHead(seed)
	case s.Head != nil:
		head = s.Head.Clone()
	default:
		head = NewMoveHead(seed)
	}
	sc := &scorer{s: s, head: head, prior: prior, seed: seed, lr: lr, learn: !s.NoLearning, curve: scoredCurve{start: time.Now()}, rec: rec}
	ls := classical.AnchoredLocalSearch{Batch: batch, Pool: pool, MaxUnits: s.MaxUnits, Anchor: s.Anchor, Guide: sc, Method: s.Name()}
	res, err := ls.Optimize(ctx, p, set)
	if err != nil {
		return nil, err
	}
	st := ScoredSettings{Batch: batch, Pool: pool, LearningRate: lr, Learning: sc.learn, Pretrained: s.Head != nil, Prior: prior != nil, Updates: head.Updates}
	if sc.pol != nil {
		c := sc.pol.Config()
		st.Policy = &c
	}
	res.Learning = &optimize.Learning{RefStep: sc.refStep, Curve: sc.curve.curve, Settings: st, Model: head}
	return res, nil
}

// policyFeatures is the number of move features read off the GO network's
// outputs: the unit's priority and fusion distributions (16 each, as log
// probabilities standardized over the graph's units), and for placement
// the log probability of its device, of the move's destination and the
// distribution's entropy.
const policyFeatures = 16 + 16 + 3

// Feature blocks of a move's row (see moveFeatures).
const (
	fPolicy  = 0
	fKind    = policyFeatures
	fDelta   = fKind + classical.NumMoveKinds
	fPlace   = fDelta + 2
	fUnit    = fPlace + 5
	fProgess = fUnit + 4
	fState   = fProgess + 1
)

// scorer is go-scored's classical.Guide: the head and how it picks, and
// its parts, each in its own file: the units' features (scoredfeatures.go:
// with what earlier moves gave), the schedule's (scoredschedule.go), the
// replay the head learns from (scoredreplay.go) and the learning curve
// (scoredcurve.go).
type scorer struct {
	s    *Scored
	rec  optimize.Recorder // sees a point of the curve every 16 rounds (nil = none)
	head *MoveHead
	// prior is Scored.Head with Scored.Prior: frozen, its scores added to
	// head's, which learns the residual (nil = none).
	prior *MoveHead
	// priorPass is prior's pass over the pool; priorKeep its outputs
	// for the picked moves.
	priorPass headPass
	priorKeep []float32
	pol       *policy.Policy
	seed      uint64
	lr        float64
	learn     bool
	rng       *rand.Rand
	opt       nn.Adam
	ar        nn.Arena[float32]

	refStep float64
	nd      int
	maxLoad float64 // the most loaded device's time, this round

	units   unitFeatures
	history moveHistory
	sched   scheduleState
	replay  replayBuffer
	curve   scoredCurve
	rounds  int
	scale   float64 // running mean |gain| of valid moves that changed the step

	// Pick's rows for the pool, and the picked rows kept for Observe;
	// the first explored picks were drawn uniformly, the others by the
	// head.
	pass     headPass
	picked   []int
	explored int
	keep     []float32 // picked rows' features
	chosen   []bool    // Pick's: the pool's candidates drawn uniformly
	ranked   []scoredMove
}

// rampPositives is how many moves that paid a new head must have learned
// from before it picks all the moves it picks when trained.
const rampPositives = 32

// Begin builds the units' features: one forward pass of the GO network
// conditioned on the anchor.
func (sc *scorer) Begin(ctx context.Context, v classical.SearchView) error {
	p := v.Problem()
	sc.rng = rand.New(rand.NewPCG(sc.seed, 0x5c0ed5c0ed))
	sc.nd = v.Devices()
	anchor := v.Anchor()
	sc.refStep = v.Current().StepTime
	if sc.refStep <= 0 || math.IsInf(sc.refStep, 0) || math.IsNaN(sc.refStep) {
		sc.refStep = 1
	}
	sc.curve.best = v.Current().StepTime
	nu := len(v.Members())
	sc.history = newMoveHistory(nu)
	if sc.uniform() {
		return nil // the features are never read
	}
	pol := sc.s.Policy
	tasks := p.EffectiveTasks()
	if pol == nil {
		cfg := configFor(sc.s.Config, tasks)
		var err error
		if pol, err = policy.New(&cfg, ScoredNetworkSeed); err != nil {
			return err
		}
	}
	sc.pol = pol
	cfg := pol.Config()
	units, err := Units(p, anchor, sc.s.MaxUnits, sc.seed)
	if err != nil {
		return err
	}
	if sc.s.NoNetwork {
		sc.units.zero(nu, sc.nd)
		return sc.unitFeatures(ctx, v)
	}
	in, err := pol.PrepareUnits(p.Graph, p.Devices(), hintsFor(p, cfg.HintDim), units)
	if err != nil {
		return err
	}
	tgt := policyTarget(cfg, anchor)
	cin, err := in.WithInitial(&tgt)
	if err != nil {
		return err
	}
	out, err := pol.Infer(cin)
	if err != nil {
		return err
	}
	defer out.Release()
	sc.units.fromNetwork(out, v.Members(), in.Nodes().UnitOf, sc.nd)
	return sc.unitFeatures(ctx, v)
}

// unitFeatures computes the features that do not come from the network
// (unit times, neighbours and the bytes between), makes room for the
// replay, then reads the schedule.
func (sc *scorer) unitFeatures(ctx context.Context, v classical.SearchView) error {
	sc.units.build(v)
	sc.replay.init()
	return sc.sched.refresh(ctx, v, sc.nd, sc.rounds)
}

// features writes move m's row into x.
func (sc *scorer) features(v classical.SearchView, m classical.Move, x []float32) {
	clear(x)
	x[fKind+int(m.Kind)] = 1
	switch m.Kind {
	case classical.MovePrioFine, classical.MoveFuseFine:
		x[fDelta] = float32(sign(m.Delta))
		x[fDelta+1] = float32(min(abs(m.Delta), 32)) / 32
	case classical.MovePrioLevel, classical.MoveFuseLevel:
		x[fDelta] = float32(sign(m.Delta))
		x[fDelta+1] = 1
	case classical.MoveFuseToggle:
		x[fDelta] = 1
		if m.Off {
			x[fDelta] = -1
		}
	}
	sc.units.write(v, m, sc.maxLoad, x)
	sc.history.write(m, x)
	x[fProgess] = float32(math.Min(4, (sc.refStep-v.Current().StepTime)/sc.refStep*20))
	sc.sched.write(m, x)
}

// Pick scores the pool and picks k: a quarter uniformly, the rest the
// best by score plus Gumbel noise (so equal scores pick uniformly).
func (sc *scorer) Pick(ctx context.Context, v classical.SearchView, cands []classical.Move, k int, pick []int) ([]int, error) {
	sc.maxLoad = 0
	for _, l := range v.Load() {
		sc.maxLoad = max(sc.maxLoad, l)
	}
	n := len(cands)
	if sc.uniform() {
		// An untrained head that never learns scores every move alike:
		// pick uniformly without computing features (the ablation costs
		// what anchored local search costs).
		for _, i := range sc.rng.Perm(n)[:k] {
			pick = append(pick, i)
		}
		sc.picked = append(sc.picked[:0], pick...)
		sc.explored = k
		return pick, nil
	}
	sc.pass.resize(n)
	for i, m := range cands {
		sc.features(v, m, sc.pass.x[i*MoveFeatures:(i+1)*MoveFeatures])
	}
	sc.head.forward(&sc.pass)
	if sc.prior != nil {
		// The prior reads the same rows: its pass shares pass's features.
		sc.priorPass.rows, sc.priorPass.x = n, sc.pass.x
		sc.priorPass.hid = grow(sc.priorPass.hid, n*moveHidden)
		sc.priorPass.out = grow(sc.priorPass.out, n)
		sc.prior.forward(&sc.priorPass)
		for i := range n {
			sc.pass.out[i] += sc.priorPass.out[i]
		}
	}
	// Until the head has seen rampPositives moves that paid it knows
	// little: most picks stay uniform, and the head's share grows with
	// what it has seen, to all but a quarter (at least one).
	explore := max(1, k/4)
	if sc.learn && sc.prior == nil && sc.replay.positives < rampPositives {
		explore = max(explore, k-(k-explore)*sc.replay.positives/rampPositives)
	}
	sc.explored = explore
	// The pool's buffers are kept across rounds (256 candidates a round).
	sc.chosen = append(sc.chosen[:0], make([]bool, n)...)
	chosen := sc.chosen
	for len(pick) < explore {
		i := sc.rng.IntN(n)
		if !chosen[i] {
			chosen[i] = true
			pick = append(pick, i)
		}
	}
	ss := sc.ranked[:0]
	for i := 0; i < n; i++ {
		if !chosen[i] {
			g := -math.Log(-math.Log(sc.rng.Float64()*(1-1e-12) + 1e-12))
			ss = append(ss, scoredMove{i, float64(sc.pass.out[i]) + 1e-6*g})
		}
	}
	sort.Slice(ss, func(a, b int) bool { return ss[a].s > ss[b].s })
	sc.ranked = ss
	for _, x := range ss[:k-explore] {
		pick = append(pick, x.i)
	}
	sc.picked = append(sc.picked[:0], pick...)
	sc.keep = grow(sc.keep, len(pick)*MoveFeatures)
	sc.priorKeep = grow(sc.priorKeep, len(pick))
	for j, i := range pick {
		copy(sc.keep[j*MoveFeatures:(j+1)*MoveFeatures], sc.pass.x[i*MoveFeatures:(i+1)*MoveFeatures])
		if sc.prior != nil {
			sc.priorKeep[j] = sc.priorPass.out[i]
		}
	}
	return pick, nil
}

// scoredMove is a pool candidate (its index) and its score, for Pick's
// ranking.
type scoredMove struct {
	i int
	s float64
}

// uniform reports whether the head scores every move alike for the whole
// run: untrained, and never updated.
func (sc *scorer) uniform() bool { return !sc.learn && sc.head.Updates == 0 }

// Observe turns the round's evaluated moves into examples and trains the
// head on a minibatch of recent ones.
func (sc *scorer) Observe(ctx context.Context, v classical.SearchView, moves []classical.Move, res []evaluate.Result, before *evaluate.Result, taken int) error {
	sc.rounds++
	sc.curve.evals += len(moves)
	if taken >= 0 {
		sc.history.accepts++
	}
	// The gains, relative to the reference step, and their scale.
	gains := make([]float64, len(moves))
	moved, sum := 0, 0.0
	for i := range res {
		if res[i].Valid() && before.Valid() {
			gains[i] = (before.StepTime - res[i].StepTime) / sc.refStep
			if gains[i] != 0 {
				moved++
				sum += math.Abs(gains[i])
			}
		}
	}
	if moved > 0 {
		m := sum / float64(moved)
		if sc.scale == 0 {
			sc.scale = m
		} else {
			sc.scale = 0.95*sc.scale + 0.05*m
		}
	}
	scale := sc.scale
	if scale <= 0 {
		scale = 1e-3
	}
	for i := range res {
		// A round keeps its best move and drops the others, so what a
		// move is worth is what it gains, or nothing: the head predicts
		// the upside, not the mean (which ranks the moves that change
		// nothing first).
		y := math.Max(0, math.Min(3, gains[i]/scale))
		if !res[i].Valid() {
			y = 0
		}
		sc.history.record(moves[i].Unit, moves[i].Kind, float32(y))
		if i < len(sc.picked) && sc.learn {
			target := float32(y)
			if sc.prior != nil {
				target -= sc.priorKeep[i] // the residual
			}
			sc.replay.add(sc.keep[i*MoveFeatures:(i+1)*MoveFeatures], target, y > 0)
		}
	}
	sc.curve.observe(res, gains, sc.explored, taken)
	if sc.learn && sc.replay.n >= 16 {
		sc.trainStep()
	}
	if !sc.uniform() && taken >= 0 && res[taken].StepTime < before.StepTime && sc.rounds-sc.sched.at >= stateEvery {
		if err := sc.sched.refresh(ctx, v, sc.nd, sc.rounds); err != nil {
			return err
		}
	}
	if sc.rounds%16 == 0 {
		pt := sc.curve.point(sc.rounds)
		if sc.rec != nil {
			sc.rec.Record(optimize.Event{Kind: optimize.Point, Method: sc.s.Name(), Point: &pt, RefStep: sc.refStep})
		}
	}
	return nil
}

// trainStep is one Adam step of the head on a minibatch of the replay.
func (sc *scorer) trainStep() {
	train, y := sc.replay.batch(sc.rng)
	sc.head.forward(train)
	sc.ar.Reset()
	dout := sc.ar.Alloc(len(y))
	headLoss(train, y, dout)
	sc.head.backward(&sc.ar, train, dout)
	sc.opt.Step(sc.head.Params(), sc.lr)
	sc.head.Updates++
}
