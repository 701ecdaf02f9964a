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

// Scored is the learned optimizer of issue 17's third design: anchored
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
	// OnStep, if set, is called every 16 rounds.
	OnStep func(pt Point, refStep float64)

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

// Optimize implements optimize.Optimizer: the anchors, then the scored
// local search, until the budget is spent or ctx is cancelled.
func (s *Scored) Optimize(ctx context.Context, p *optimize.Problem, set *optimize.Settings) (*optimize.Result, error) {
	var seed uint64
	if set != nil {
		seed = set.Seed
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
	sc := &scorer{s: s, head: head, prior: prior, seed: seed, lr: lr, learn: !s.NoLearning, start: time.Now()}
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
	res.Learning = &optimize.Learning{RefStep: sc.refStep, Curve: sc.curve, Settings: st, Model: head}
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

// scorer is go-scored's classical.Guide.
type scorer struct {
	s    *Scored
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
	start     time.Time

	refStep float64
	nd      int
	// Per unit of the search: its row of standardized policy features
	// (fixed, from the anchor), its placement log probabilities (up to
	// nd), its time and its neighbours with the bytes between.
	pf       [][]float32
	place    [][]float32
	placeEnt []float32
	logTime  []float32
	nbrStart []int32
	nbr      []int32
	nbrBytes []float32
	unitByte []float32
	maxLoad  float64

	// What earlier moves gave, per unit and kind group (placement,
	// priority, fusion): the last target and when (accepted moves so far).
	last    []float32
	lastAt  []int32
	tried   []bool
	accepts int

	// Pick's rows for the pool, and the picked rows kept for Observe;
	// the first explored picks were drawn uniformly, the others by the
	// head.
	pass     headPass
	picked   []int
	explored int
	keep     []float32 // picked rows' features
	chosen   []bool    // Pick's: the pool's candidates drawn uniformly
	ranked   []scoredMove
	// A replay of recent examples.
	// The current decision's schedule, per unit and device (refreshState);
	// nil when the cost model reports no schedule.
	crit, slack, startAt, idle []float32
	stateAt                    int

	bufX      []float32
	bufY      []float32
	bufN      int
	bufAt     int
	train     headPass
	scale     float64 // running mean |gain| of valid moves that changed the step
	positives int     // examples that paid, seen so far

	rounds int
	evals  int
	best   float64
	curve  []Point
	ptSum  Point
	ptN    int
	// This point's picks by kind (uniform, head) and those that improved.
	ptPicks, ptHits [2]int
}

// replay is the number of examples the head trains on each round, drawn
// from the most recent replayCap.
const (
	// stateEvery is the fewest rounds between two reads of the current
	// decision's schedule (each costs about one evaluation and the float
	// computation); it is read again only after the step improved.
	stateEvery = 4

	// rampPositives is how many moves that paid a new head must have
	// learned from before it picks all the moves it picks when trained.
	rampPositives = 32

	replayCap   = 1024
	replayBatch = 64
)

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
	sc.best = v.Current().StepTime
	nu := len(v.Members())
	sc.last = make([]float32, 3*nu)
	sc.lastAt = make([]int32, 3*nu)
	sc.tried = make([]bool, 3*nu)
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
		sc.pf = make([][]float32, nu)
		sc.place = make([][]float32, nu)
		sc.placeEnt = make([]float32, nu)
		for u := range nu {
			sc.pf[u] = make([]float32, policyFeatures)
			sc.place[u] = make([]float32, sc.nd)
		}
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
	members := v.Members()
	nodeOf := in.Nodes().UnitOf
	sc.pf = make([][]float32, nu)
	sc.place = make([][]float32, nu)
	sc.placeEnt = make([]float32, nu)
	logp := func(logits []float32) []float32 {
		lp := make([]float32, len(logits))
		m := float32(math.Inf(-1))
		for _, x := range logits {
			m = max(m, x)
		}
		sum := 0.0
		for _, x := range logits {
			if !math.IsInf(float64(x), -1) {
				sum += math.Exp(float64(x - m))
			}
		}
		lse := float64(m) + math.Log(sum)
		for i, x := range logits {
			lp[i] = float32(math.Max(float64(x)-lse, -30))
		}
		return lp
	}
	resample := func(dst, src []float32) {
		for i := range dst {
			dst[i] = src[i*len(src)/len(dst)]
		}
	}
	pl, pcols := out.Logits(policy.Placement)
	pr, prCols := out.Logits(policy.Scheduling)
	fu, fuCols := out.Logits(policy.Fusion)
	for u, ms := range members {
		node := int(nodeOf[ms[0]])
		row := make([]float32, policyFeatures)
		if pr != nil {
			resample(row[0:16], logp(pr[node*prCols:(node+1)*prCols]))
		}
		if fu != nil {
			resample(row[16:32], logp(fu[node*fuCols:(node+1)*fuCols]))
		}
		sc.pf[u] = row
		lp := logp(pl[node*pcols : node*pcols+sc.nd])
		sc.place[u] = lp
		ent := 0.0
		for _, x := range lp {
			ent -= math.Exp(float64(x)) * float64(x)
		}
		sc.placeEnt[u] = float32(ent)
	}
	standardize(sc.pf, 0, 32)
	return sc.unitFeatures(ctx, v)
}

// unitFeatures computes the features that do not come from the network:
// unit times, neighbours and the bytes between; then reads the schedule.
func (sc *scorer) unitFeatures(ctx context.Context, v classical.SearchView) error {
	members := v.Members()
	nu := len(members)
	sc.logTime = make([]float32, nu)
	mean := 0.0
	for u := range members {
		mean += v.UnitTime(u) / float64(nu)
	}
	for u := range members {
		sc.logTime[u] = float32(math.Log((v.UnitTime(u) + 1e-9) / (mean + 1e-9)))
	}
	sc.buildNeighbours(v)
	sc.bufX = make([]float32, replayCap*MoveFeatures)
	sc.bufY = make([]float32, replayCap)
	return sc.refreshState(ctx, v)
}

// standardize makes columns [lo, hi) of rows zero-mean, unit-variance
// (clipped to +-4).
func standardize(rows [][]float32, lo, hi int) {
	n := float64(len(rows))
	if n == 0 {
		return
	}
	for c := lo; c < hi; c++ {
		m, s := 0.0, 0.0
		for _, r := range rows {
			m += float64(r[c]) / n
		}
		for _, r := range rows {
			d := float64(r[c]) - m
			s += d * d / n
		}
		sd := math.Sqrt(s)
		for _, r := range rows {
			x := 0.0
			if sd > 1e-9 {
				x = (float64(r[c]) - m) / sd
			}
			r[c] = float32(math.Max(-4, math.Min(4, x)))
		}
	}
}

// buildNeighbours lists each unit's neighbour units with the tensor bytes
// between them (a tensor counted once per consuming unit).
func (sc *scorer) buildNeighbours(v classical.SearchView) {
	g := v.Problem().Graph
	unitOf := v.UnitOf()
	nu := len(v.Members())
	type edge struct {
		a, b  int32
		bytes float64
	}
	var es []edge
	for t := 0; t < g.NumTensors(); t++ {
		ts := g.Tensor(t)
		pu := unitOf[ts.Producer]
		seen := int32(-1)
		for _, c := range ts.Consumers {
			cu := unitOf[c]
			if cu == pu || cu == seen {
				continue
			}
			seen = cu
			es = append(es, edge{pu, cu, float64(ts.Bytes)}, edge{cu, pu, float64(ts.Bytes)})
		}
	}
	sort.Slice(es, func(i, j int) bool {
		if es[i].a != es[j].a {
			return es[i].a < es[j].a
		}
		return es[i].b < es[j].b
	})
	sc.nbrStart = make([]int32, nu+1)
	sc.unitByte = make([]float32, nu)
	for i := 0; i < len(es); {
		j := i
		sum := 0.0
		for ; j < len(es) && es[j].a == es[i].a && es[j].b == es[i].b; j++ {
			sum += es[j].bytes
		}
		sc.nbr = append(sc.nbr, es[i].b)
		sc.nbrBytes = append(sc.nbrBytes, float32(sum))
		sc.nbrStart[es[i].a+1]++
		sc.unitByte[es[i].a] += float32(sum)
		i = j
	}
	for u := 0; u < nu; u++ {
		sc.nbrStart[u+1] += sc.nbrStart[u]
	}
}

// moveGroup is a move kind's group: placement, priority or fusion.
func moveGroup(k classical.MoveKind) int {
	switch k {
	case classical.MovePlace:
		return 0
	case classical.MovePrioLevel, classical.MovePrioFine:
		return 1
	}
	return 2
}

// features writes move m's row into x.
func (sc *scorer) features(v classical.SearchView, m classical.Move, x []float32) {
	clear(x)
	u := m.Unit
	copy(x[fPolicy:], sc.pf[u][:32])
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
	if m.Kind == classical.MovePlace {
		x[32] = sc.place[u][m.From] / 4
		x[33] = sc.place[u][m.To] / 4
		x[34] = sc.placeEnt[u]
		load := v.Load()
		ml := sc.maxLoad
		if ml <= 0 {
			ml = 1
		}
		t := v.UnitTime(u)
		x[fPlace] = float32(load[m.From] / ml)
		x[fPlace+1] = float32(load[m.To] / ml)
		x[fPlace+2] = float32(math.Min(t/ml*10, 4))
		x[fPlace+3] = float32(math.Min((load[m.To]+t-ml)/ml*10, 4))
		// The bytes the unit would stop sending (neighbours on To) less
		// those it would start sending (neighbours on From), over its
		// bytes: the partitioning gain of Kernighan-Lin and METIS.
		dev := v.Device()
		members := v.Members()
		gain := 0.0
		for i := sc.nbrStart[u]; i < sc.nbrStart[u+1]; i++ {
			d := dev[members[sc.nbr[i]][0]]
			switch d {
			case m.To:
				gain += float64(sc.nbrBytes[i])
			case m.From:
				gain -= float64(sc.nbrBytes[i])
			}
		}
		if b := float64(sc.unitByte[u]); b > 0 {
			x[fPlace+4] = float32(gain / b)
		}
	}
	x[fUnit] = sc.logTime[u] / 4
	gi := 3*u + moveGroup(m.Kind)
	if sc.tried[gi] {
		age := float64(sc.accepts - int(sc.lastAt[gi]))
		x[fUnit+1] = sc.last[gi] * float32(math.Exp(-age/16))
		x[fUnit+2] = float32(math.Exp(-age / 16))
	}
	best := float32(0)
	for k := 0; k < 3; k++ {
		if sc.tried[3*u+k] {
			best = max(best, sc.last[3*u+k])
		}
	}
	x[fUnit+3] = best
	x[fProgess] = float32(math.Min(4, (sc.refStep-v.Current().StepTime)/sc.refStep*20))
	if sc.crit != nil {
		x[fState] = sc.crit[u]
		x[fState+1] = sc.slack[u]
		x[fState+2] = sc.startAt[u]
		if m.Kind == classical.MovePlace {
			x[fState+3] = sc.idle[m.To]
			x[fState+4] = sc.idle[m.From]
		}
	}
}

// refreshState reads the current decision's schedule (when the cost model
// reports one): which units are on its critical path, their float and
// start, and each device's idle time, all relative to the step.
func (sc *scorer) refreshState(ctx context.Context, v classical.SearchView) error {
	p := v.Problem()
	sch, err := scheduler(p)
	if err != nil {
		return nil // no schedule to read: the state features stay zero
	}
	d := v.Decision()
	res, sched, err := sch.Schedule(context.WithoutCancel(ctx), d)
	if err != nil {
		return err
	}
	step := res.StepTime
	if step <= 0 || math.IsInf(step, 0) || math.IsNaN(step) {
		return nil
	}
	st := stateHints(p.Graph, nil, d.Device, &res, &sched)
	members := v.Members()
	if sc.crit == nil {
		sc.crit = make([]float32, len(members))
		sc.slack = make([]float32, len(members))
		sc.startAt = make([]float32, len(members))
		sc.idle = make([]float32, sc.nd)
	}
	const us = 1e6
	for u, ms := range members {
		crit, slack, start := 0.0, math.Inf(1), math.Inf(1)
		for _, o := range ms {
			row := st[int(o)*NumStateHints : (int(o)+1)*NumStateHints]
			if row[stateCritical] > 0 {
				crit++
			}
			slack = math.Min(slack, row[stateSlack]/us/step)
			start = math.Min(start, row[stateStart]/us/step)
		}
		sc.crit[u] = float32(crit / float64(len(ms)))
		sc.slack[u] = float32(math.Min(1, slack*10))
		sc.startAt[u] = float32(math.Min(1, start))
	}
	for d := range sc.idle {
		if d < len(res.DeviceBusy) {
			sc.idle[d] = float32(math.Max(0, step-res.DeviceBusy[d]) / step)
		}
	}
	sc.stateAt = sc.rounds
	return nil
}

func sign(x int) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func abs(x int) int { return max(x, -x) }

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
	if sc.learn && sc.prior == nil && sc.positives < rampPositives {
		explore = max(explore, k-(k-explore)*sc.positives/rampPositives)
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
	sc.evals += len(moves)
	if taken >= 0 {
		sc.accepts++
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
		gi := 3*moves[i].Unit + moveGroup(moves[i].Kind)
		sc.last[gi], sc.lastAt[gi], sc.tried[gi] = float32(y), int32(sc.accepts), true
		if i < len(sc.picked) && sc.learn {
			at := sc.bufAt % replayCap
			copy(sc.bufX[at*MoveFeatures:(at+1)*MoveFeatures], sc.keep[i*MoveFeatures:(i+1)*MoveFeatures])
			sc.bufY[at] = float32(y)
			if sc.prior != nil {
				sc.bufY[at] -= sc.priorKeep[i] // the residual
			}
			if y > 0 {
				sc.positives++
			}
			sc.bufAt++
			sc.bufN = min(sc.bufN+1, replayCap)
		}
		sc.ptSum.MeanReward += gains[i] / float64(len(res))
		sc.ptSum.BestReward = math.Max(sc.ptSum.BestReward, gains[i])
		if res[i].Valid() {
			sc.ptSum.Valid += 1 / float64(len(res))
		}
	}
	if taken >= 0 && res[taken].Valid() {
		sc.best = math.Min(sc.best, res[taken].StepTime)
	}
	for i := range res {
		kind := 1 // the head's
		if i < sc.explored {
			kind = 0
		}
		sc.ptPicks[kind]++
		if gains[i] > 0 {
			sc.ptHits[kind]++
		}
	}
	if sc.learn && sc.bufN >= 16 {
		sc.trainStep()
	}
	if !sc.uniform() && taken >= 0 && res[taken].StepTime < before.StepTime && sc.rounds-sc.stateAt >= stateEvery {
		if err := sc.refreshState(ctx, v); err != nil {
			return err
		}
	}
	sc.ptN++
	if sc.rounds%16 == 0 {
		pt := Point{Step: sc.rounds, Elapsed: time.Since(sc.start).Seconds(), Evaluations: sc.evals, BestStep: sc.best,
			MeanReward: sc.ptSum.MeanReward / float64(sc.ptN), BestReward: sc.ptSum.BestReward, Valid: sc.ptSum.Valid / float64(sc.ptN)}
		if sc.ptPicks[0] > 0 {
			pt.ExploreHit = float64(sc.ptHits[0]) / float64(sc.ptPicks[0])
		}
		if sc.ptPicks[1] > 0 {
			pt.HeadHit = float64(sc.ptHits[1]) / float64(sc.ptPicks[1])
		}
		sc.ptPicks, sc.ptHits = [2]int{}, [2]int{}
		sc.curve = append(sc.curve, pt)
		if sc.s.OnStep != nil {
			sc.s.OnStep(pt, sc.refStep)
		}
		sc.ptSum, sc.ptN = Point{}, 0
	}
	return nil
}

// trainStep is one Adam step of the head on replayBatch recent examples.
func (sc *scorer) trainStep() {
	n := min(replayBatch, sc.bufN)
	sc.train.resize(n)
	y := make([]float32, n)
	for j := 0; j < n; j++ {
		// The newest examples first, then random older ones.
		var i int
		if j < 8 {
			i = (sc.bufAt - 1 - j) % replayCap
			if i < 0 {
				i += replayCap
			}
		} else {
			i = sc.rng.IntN(sc.bufN)
		}
		copy(sc.train.x[j*MoveFeatures:(j+1)*MoveFeatures], sc.bufX[i*MoveFeatures:(i+1)*MoveFeatures])
		y[j] = sc.bufY[i]
	}
	sc.head.forward(&sc.train)
	sc.ar.Reset()
	dout := sc.ar.Alloc(n)
	headLoss(&sc.train, y, dout)
	sc.head.backward(&sc.ar, &sc.train, dout)
	sc.opt.Step(sc.head.Params(), sc.lr)
	sc.head.Updates++
}
