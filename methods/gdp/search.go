package gdp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/ppo"
	"github.com/placer/placer/optimize"
)

// InvalidReward is the reward of a decision that runs out of memory or
// breaks co-location (GDP §3).
const InvalidReward = -10

// Reward is GDP's reward for a result under objective o: -sqrt(v / ref)
// with v = o.Of(r) (the step time, or the largest per-device peak
// memory), or InvalidReward when the decision is invalid under o.
func Reward(o optimize.Objective, r *evaluate.Result, ref float64) float64 {
	v := o.Of(r)
	if !o.Valid(r) || v <= 0 || math.IsNaN(v) {
		return InvalidReward
	}
	return -math.Sqrt(v / ref)
}

// DefaultPPO are the PPO settings a Search uses when its PPO field is
// zero: measured on the two-branch test graph from scratch (seeds 1-10,
// 100 steps), Adam at 1e-3 with 4 epochs and no entropy bonus converged
// most often; anchoring provides the exploration.
//
// The value loss is off: the advantages use the rollout's own mean as
// baseline, and with the surrogate averaged over nodes a value loss's
// gradient dominates the clipped global norm and retrains the shared
// trunk instead of the policy (measured on trxl2: a KL of hundreds of
// nats per node after one update).
//
// One epoch per rollout (four before 2026-11-23): the clip never bound
// (approximate KL 1e-4 to 1e-3 per node), while epochs 2-4 cost 22% of a
// step in re-forward passes and three quarters of its backward time. A
// gnmt8 step went from 8.2 to 3.5 s (BenchmarkSearchStepGNMT8OneEpoch),
// and 60-second searches (seed 1, warm-up included) reached 0.929 of the
// reference on trxl4 (0.943 with four epochs) and 0.9835 on rnnlm4
// (0.9837).
var DefaultPPO = ppo.Settings{LearningRate: 3e-4, Epochs: 1, EntropyCoef: -1, ValueCoef: -1}

// DefaultMoves is Search.Moves's default: about as many changes per
// sample and task as the imitation's old stopping point (-0.005 nats
// per node) gave on trxl2's 3,020 nodes.
const DefaultMoves = 8

// keepFor returns the anchor's keep probability for n nodes (see
// Search.Moves); 0 = no bonus.
func keepFor(moves float64, n int) float64 {
	if moves == 0 {
		moves = DefaultMoves
	}
	if moves < 0 || n <= 0 {
		return 0
	}
	return max(1-moves/float64(n), 0)
}

// ImitationRate is the Adam step size of the warm-up: on trxl2, 1e-3
// reached 98.8% agreement with gp-dfs in 100 steps; 3e-3 diverged.
const ImitationRate = 1e-3

// Point is one step of a search's learning curve.
type Point = optimize.CurvePoint

// Search is GO-one (GDP-one): the policy trained with PPO on a single
// graph. It implements optimize.Optimizer under the name "go".
type Search struct {
	// Policy to train; nil = a new one from Config and the run's seed.
	Policy *policy.Policy
	Config *policy.Config // used when Policy is nil; nil = defaults
	PPO    ppo.Settings
	// Samples is the rollout size K: decisions drawn from one forward pass
	// and evaluated in parallel. 0 = 16.
	Samples int
	// Reference is the decision the reward is normalized by (and the
	// policy imitates during warm-up), typically the best baseline's.
	// nil Device = the problem's Base decision.
	Reference decision.Decision
	// RefTime is the reference step time; 0 = Reference's, evaluated.
	RefTime float64
	// Warmup bounds the imitation steps on Reference before PPO starts
	// (behaviour cloning of the heuristic, so that PPO refines a sensible
	// decision instead of a random one); imitation stops early once the
	// policy keeps Reference's actions about as often as Moves asks (99.5%
	// per node and task with no Moves bonus). 0 = 200; negative = none.
	Warmup int
	// Refine is the number of refinement passes per step (GO eq. 2): each
	// pass conditions on the decision sampled from the pass before it, and
	// the rollout is drawn from the last. 0 = 1 = no refinement: the
	// rollout is drawn from the pass anchored on the best decision, as in
	// pre-training and zero-shot inference.
	Refine int
	// NoAnchor conditions every step's refinement on nothing instead of
	// on the best decision so far. Anchoring (the default) lets the policy
	// learn which changes to the incumbent pay; on a symmetric two-branch
	// graph searched from scratch it raised the share of seeds reaching
	// the optimum within 100 steps from 0/10 to 5/10.
	NoAnchor bool
	// NoLearning is the ablation: the policy is never updated (no backward
	// pass, no PPO); each step samples around the best decision so far
	// from the unchanged network, with low-memory forward passes.
	NoLearning bool
	// Moves is how far samples stray from the anchor: each node's anchor
	// action gets a fixed logit bonus (policy.Input.WithKeep) such that,
	// before the network has learned anything, a sample changes about
	// Moves nodes per task (keep = 1 - Moves/nodes). The network learns
	// which changes pay instead of first having to learn to copy the
	// anchor. 0 = DefaultMoves; negative = no bonus.
	Moves float64
	// MaxUnits bounds the policy's decision units (see Units): 0 =
	// MaxUnits; negative = one unit per co-location group.
	MaxUnits int
}

var _ optimize.Optimizer = (*Search)(nil)

// SearchSettings are the knobs a Search runs with, its defaults resolved;
// the result files of placer search and finetune record them.
type SearchSettings struct {
	Samples  int            `json:"samples"`          // rollout size K
	Warmup   int            `json:"warmup_max_steps"` // imitation steps at most; -1 = none
	Moves    float64        `json:"anchor_moves"`     // changes per task a sample starts from; -1 = no anchor bonus
	MaxUnits int            `json:"max_units"`        // decision units at most; -1 = one per co-location group
	Refine   int            `json:"refine_passes"`    // refinement passes per step
	Anchored bool           `json:"anchored"`         // refinement conditioned on the incumbent
	Learning bool           `json:"learning"`         // false: the ablation, the network is never updated
	PPO      ppo.Settings   `json:"ppo"`              // with ppo's defaults filled in
	Policy   *policy.Config `json:"policy,omitempty"` // the network (nil before Optimize made one)
}

// KnobsOf is SearchSettings's name (optimize.Knobs).
func (SearchSettings) KnobsOf() string { return "go" }

// Settings returns the knobs s runs with, defaults resolved (the policy's
// configuration only when s has a Policy; a run's result records the one
// it trained).
func (s *Search) Settings() SearchSettings {
	st := SearchSettings{Samples: s.samples(), Warmup: s.warmup(), Moves: s.Moves, MaxUnits: s.MaxUnits,
		Refine: max(s.Refine, 1), Anchored: !s.NoAnchor, Learning: !s.NoLearning, PPO: s.ppoSettings().Filled()}
	if s.NoLearning {
		st.Warmup = -1
	}
	if st.Moves == 0 {
		st.Moves = DefaultMoves
	}
	if st.Moves < 0 {
		st.Moves = -1
	}
	switch {
	case st.MaxUnits == 0:
		st.MaxUnits = MaxUnits
	case st.MaxUnits < 0:
		st.MaxUnits = -1
	}
	if s.Policy != nil {
		c := s.Policy.Config()
		st.Policy = &c
	}
	return st
}

// samples is the rollout size K.
func (s *Search) samples() int {
	if s.Samples <= 0 {
		return 16
	}
	return s.Samples
}

// warmup is the most imitation steps, or -1 for none.
func (s *Search) warmup() int {
	switch {
	case s.Warmup == 0:
		return 200
	case s.Warmup < 0:
		return -1
	}
	return s.Warmup
}

// ppoSettings are the PPO settings (DefaultPPO when none are set).
func (s *Search) ppoSettings() ppo.Settings {
	if s.PPO == (ppo.Settings{}) {
		return DefaultPPO
	}
	return s.PPO
}

// Name implements optimize.Optimizer.
func (s *Search) Name() string { return "go" }

// NewPolicy returns a new, untrained policy for a problem's tasks: the
// network of base (nil = defaults) with the heads for tasks, one decision
// per co-location group, and the hints Hints gives. Search and Pretrain
// make their policies so.
func NewPolicy(base *policy.Config, t optimize.Tasks, seed uint64) (*policy.Policy, error) {
	c := configFor(base, t)
	return policy.New(&c, seed)
}

// configFor returns the policy configuration for the problem's tasks.
func configFor(base *policy.Config, t optimize.Tasks) policy.Config {
	var c policy.Config
	if base != nil {
		c = *base
	}
	c.NoScheduling = !t.Scheduling
	c.NoFusion = !t.Fusion
	// One decision per co-location group (the 2017 placer's grouping):
	// co-location then holds by construction, and big graphs shrink.
	c.Coarsen = true
	c.HintDim = NumHints
	if c.MaxDevices == 0 {
		c.MaxDevices = 8
	}
	return c
}

// NumHints is the number of per-op hints Hints gives the policy.
const NumHints = 1

// Hints are the per-op hints the policy sees: each op's roofline time on
// one device of the problem's cluster, in microseconds. (The policy's own
// features add the op's position in the graph.)
func Hints(p *optimize.Problem) []float64 {
	h := p.Cost.OpTimes()
	for i := range h {
		h[i] *= 1e6
	}
	return h
}

// Optimize implements optimize.Optimizer. Budget.Steps counts PPO steps
// (rollouts); Budget.Evaluations and Budget.Time bound it too; with no
// bound at all it runs 100 steps. The result's Learning holds the curve,
// the reference step time, the settings and the trained policy; s itself
// is not changed (a new policy is made for each run when s.Policy is nil).
//
// A run has four phases: prepare (the policy, the reference, the
// decision units and the reference's step time), warmUp (imitation of the
// reference), train (PPO steps until the budget is spent) and offerArgmax
// (the policy's most likely decision as a last candidate).
func (s *Search) Optimize(ctx context.Context, p *optimize.Problem, set *optimize.Settings) (*optimize.Result, error) {
	r, err := s.prepare(ctx, p, set, s.Name())
	if err != nil {
		return nil, err
	}
	if ctx.Err() == nil {
		if err := r.warmUp(ctx); err != nil {
			return nil, err
		}
		if err := r.train(ctx); err != nil {
			return nil, err
		}
		if err := r.offerArgmax(ctx); err != nil {
			return nil, err
		}
	}
	return r.result(ctx)
}

// searchRun is the state of one Search.Optimize call.
type searchRun struct {
	s        *Search
	p        *optimize.Problem
	pol      *policy.Policy
	ref      decision.Decision // the reference, completed
	in       *policy.Input
	tr       *optimize.Tracker
	refStep  float64
	seed     uint64
	keep     float64 // the anchor's keep probability per node
	settings SearchSettings
	curve    []Point
	tb       *tiebreak
	// anchor is the decision refinement starts from, in the policy's
	// action space: the reference until a valid sample beats it, then the
	// best valid sample.
	anchor     decision.Decision
	anchorStep float64
	// onePass is the step time of the policy's most likely decision.
	onePass      float64
	onePassValid bool
}

// prepare makes the run's policy (or checks s.Policy against the
// problem's tasks), completes the reference, builds the decision units
// and the policy's input, starts the tracker and evaluates the reference
// unless its step time is given.
// name is the method's name, for its result and its errors.
func (s *Search) prepare(ctx context.Context, p *optimize.Problem, set *optimize.Settings, name string) (*searchRun, error) {
	var st optimize.Settings
	if set != nil {
		st = *set
	}
	if st.Budget == (optimize.Budget{}) {
		st.Budget.Steps = 100
	}
	tasks := p.EffectiveTasks()
	if p.Devices() < 2 && tasks == (optimize.Tasks{Placement: true}) {
		return nil, errors.New(name + ": one device leaves no placement to learn")
	}
	pol := s.Policy
	if pol == nil {
		cfg := configFor(s.Config, tasks)
		var err error
		if pol, err = policy.New(&cfg, st.Seed); err != nil {
			return nil, err
		}
	} else if c := pol.Config(); c.NoScheduling == tasks.Scheduling || c.NoFusion == tasks.Fusion {
		return nil, fmt.Errorf("%s: the policy decides %s, the problem asks for %s", name, policyTasks(c), tasks)
	}
	ref := s.Reference
	if ref.Device == nil {
		ref = p.Complete(decision.Decision{})
	}
	ref = p.Complete(ref)
	var units []int32 // nil: one unit per co-location group
	if s.MaxUnits >= 0 {
		var err error
		if units, err = Units(p, ref, s.MaxUnits, st.Seed); err != nil {
			return nil, err
		}
	}
	in, err := pol.PrepareUnits(p.Graph, p.Devices(), hintsFor(p, pol.Config().HintDim), units)
	if err != nil {
		return nil, err
	}
	r := &searchRun{s: s, p: p, pol: pol, ref: ref, in: in, seed: st.Seed, refStep: s.RefTime}
	r.tr = optimize.NewTracker(name, p, &st, 0)
	// The reference is the first candidate (one evaluation): the search
	// never returns worse than its anchor.
	e, err := p.Evaluator.Evaluate(context.WithoutCancel(ctx), ref)
	if err != nil {
		return nil, fmt.Errorf("%s: reference decision: %w", name, err)
	}
	r.tr.Record(ref, &e)
	if r.refStep <= 0 || p.Objective != optimize.StepTime {
		// RefTime is a step time; another objective normalizes by the
		// reference's own value.
		r.refStep = p.Objective.Of(&e)
	}
	if r.refStep <= 0 {
		return nil, errors.New(name + ": reference step time is zero")
	}
	r.settings = s.Settings()
	c := pol.Config()
	r.settings.Policy = &c
	r.keep = keepFor(s.Moves, in.NumNodes())
	r.tb = newTiebreak(ref, policyTarget(pol.Config(), ref), in.Nodes())
	r.anchor, r.anchorStep = policyTarget(pol.Config(), ref), r.refStep
	return r, nil
}

// warmUp imitates the reference (see Search.Warmup), conditioned on it as
// its anchor unless NoAnchor: copying the anchor is then an identity map
// from input to output.
func (r *searchRun) warmUp(ctx context.Context) error {
	if r.s.NoLearning {
		return nil
	}
	warmIn := r.in
	if !r.s.NoAnchor {
		tgt := policyTarget(r.pol.Config(), r.ref)
		var err error
		if warmIn, err = anchored(r.in, &tgt, r.keep); err != nil {
			return err
		}
	}
	return r.s.imitate(ctx, r.pol, warmIn, &nn.Adam{}, r.ref, r.s.warmup(), r.keep)
}

// anchorInput is the input a step's refinement starts from: the policy's
// input conditioned on anchor (unless NoAnchor).
func (r *searchRun) anchorInput(anchor *decision.Decision) (*policy.Input, error) {
	if r.s.NoAnchor {
		return r.in, nil
	}
	return anchored(r.in, anchor, r.keep)
}

// train runs PPO steps until the tracker says stop: each step refines from
// the best decision so far (GO eq. 2 conditions each pass on the previous
// one's decision, so the policy learns which changes to the incumbent
// pay), samples a rollout from one forward pass, evaluates it as a batch,
// and updates the policy. Only the search's own samples count as its
// result.
func (r *searchRun) train(ctx context.Context) error {
	s, p, pol, tr := r.s, r.p, r.pol, r.tr
	k := s.samples()
	rng := rand.New(rand.NewPCG(r.seed, 0x9e3779b97f4a7c15))
	// PPO gets a fresh optimizer: after imitation converges the second
	// moments are tiny, and PPO's first gradients would take huge steps.
	opt := &nn.Adam{}
	settings := s.ppoSettings()
	results := make([]evaluate.Result, k)
	refine := max(s.Refine, 1)
	for !tr.Done(ctx) {
		start, err := r.anchorInput(&r.anchor)
		if err != nil {
			return err
		}
		var out *policy.Output
		if s.NoLearning && refine == 1 {
			out, err = pol.Infer(start)
		} else {
			out, err = pol.Refine(start, rng, refine)
		}
		if err != nil {
			return err
		}
		raw := out.Sample(rng, k)
		var logps []float64
		var nodeLogps [][]float32
		if !s.NoLearning {
			if logps, nodeLogps, err = sampleLogProbs(out, raw); err != nil {
				out.Release()
				return err
			}
		}
		ds := make([]decision.Decision, len(raw))
		for i := range raw {
			ds[i] = p.Complete(r.tb.apply(raw[i]))
		}
		n, err := tr.EvaluateBatch(ctx, ds, results)
		if errors.Is(err, optimize.ErrStopped) || n == 0 {
			out.Release()
			break
		}
		if err != nil {
			out.Release()
			return err
		}
		if !s.NoLearning {
			logps, nodeLogps = logps[:n], nodeLogps[:n]
		}
		rewards := make([]float64, n)
		pt := Point{BestReward: math.Inf(-1)}
		for i := 0; i < n; i++ {
			rewards[i] = Reward(r.p.Objective, &results[i], r.refStep)
			pt.MeanReward += rewards[i] / float64(n)
			pt.BestReward = max(pt.BestReward, rewards[i])
			if r.p.Objective.Valid(&results[i]) {
				pt.Valid += 1 / float64(n)
			}
		}
		for i := 0; i < n; i++ {
			if v := r.p.Objective.Of(&results[i]); r.p.Objective.Valid(&results[i]) && v < r.anchorStep {
				r.anchor, r.anchorStep = raw[i], v
			}
		}
		var ps ppo.Stats
		if s.NoLearning {
			out.Release()
		} else {
			model := policy.PPOModel{Policy: pol, Input: out.Input(), Decisions: raw[:n]}
			ro := ppo.Rollout{OldLogProbs: logps, OldNodeLogProbs: nodeLogps, Rewards: rewards, Baseline: math.NaN()}
			if ps, err = ppo.Update(model, opt, ro, model.Pass(out), settings); err != nil {
				return err
			}
		}
		tr.Step()
		stats := tr.Stats()
		pt.Step, pt.Elapsed, pt.Evaluations, pt.BestStep, pt.Best, pt.Entropy = stats.Steps, stats.Elapsed.Seconds(), stats.Evaluations, stats.BestStep, stats.Best, ps.Entropy
		pt.Epochs, pt.ClipFrac, pt.ApproxKL = ps.Epochs, ps.ClipFrac, ps.ApproxKL
		r.curve = append(r.curve, pt)
		tr.Point(pt, r.refStep)
	}
	return nil
}

// offerArgmax offers the policy's most likely decision, anchored like the
// rollouts, as one more candidate (not
// counted against the budget). A failure to evaluate it is not an error.
func (r *searchRun) offerArgmax(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil
	}
	final, err := r.anchorInput(&r.anchor)
	if err != nil {
		return err
	}
	if out, err := r.pol.Forward(final); err == nil {
		d := r.p.Complete(r.tb.apply(out.Argmax()))
		out.Release()
		if e, err := r.p.Evaluator.Evaluate(ctx, d); err == nil {
			r.tr.Offer(d, &e)
			r.onePass, r.onePassValid = e.StepTime, e.Valid()
		}
	}
	return nil
}

// result assembles the run's answer with its Learning output.
func (r *searchRun) result(ctx context.Context) (*optimize.Result, error) {
	res, err := r.tr.Result(ctx, r.ref)
	if err != nil {
		return nil, err
	}
	res.Learning = &optimize.Learning{RefStep: r.refStep, Curve: r.curve, Settings: r.settings, Model: r.pol, OnePass: r.onePass, OnePassValid: r.onePassValid}
	return res, nil
}

// anchored returns in conditioned on anchor, leaning towards it with
// probability keep (0 = no lean).
func anchored(in *policy.Input, anchor *decision.Decision, keep float64) (*policy.Input, error) {
	a, err := in.WithInitial(anchor)
	if err != nil || keep == 0 {
		return a, err
	}
	return a.WithKeep(keep)
}

// imitate runs steps of behaviour cloning: gradient ascent on the
// log-probability of ref, per node. It stops once the policy copies ref
// at least with probability keep per node and task (0 = 99.5%).
func (s *Search) imitate(ctx context.Context, pol *policy.Policy, in *policy.Input, opt *nn.Adam, ref decision.Decision, steps int, keep float64) error {
	if steps <= 0 {
		return nil
	}
	c := pol.Config()
	target := policyTarget(c, ref)
	lr := ImitationRate
	w := -1 / float64(in.NumNodes())
	if keep == 0 {
		keep = 0.995
	}
	stop := math.Log(keep)
	for i := 0; i < steps && ctx.Err() == nil; i++ {
		out, err := pol.Forward(in)
		if err != nil {
			return err
		}
		// Stop once the policy copies the reference about as often as
		// keep: each sample then changes a few choices, a local move
		// around the anchor, and PPO learns which moves pay.
		if lp, err := out.LogProb(target); err == nil && lp/float64(in.NumNodes()*numTasks(c)) > stop {
			out.Release()
			break
		}
		if err := out.AddLogProbGrad(target, w); err != nil {
			out.Release()
			return fmt.Errorf("go: warm-up: %w", err)
		}
		out.Backward()
		out.Release()
		nn.ClipGradNorm(pol.Params(), 1)
		opt.Step(pol.Params(), lr)
	}
	return nil
}

// sampleLogProbs returns, for each decision drawn from out, the
// log-probability of every node's action (what per-node PPO clips) and
// their sum, the decision's joint log-probability.
func sampleLogProbs(out *policy.Output, ds []decision.Decision) ([]float64, [][]float32, error) {
	logps := make([]float64, len(ds))
	nodeLogps := make([][]float32, len(ds))
	for i := range ds {
		lp, err := out.NodeLogProbs(ds[i])
		if err != nil {
			return nil, nil, err
		}
		nodeLogps[i] = lp
		for _, v := range lp {
			logps[i] += float64(v)
		}
	}
	return logps, nodeLogps, nil
}

// policyTarget maps a decision onto the policy's action space: its
// priorities and fusion priorities onto the policy's levels, and the
// fields of tasks the policy does not decide dropped.
func policyTarget(c policy.Config, ref decision.Decision) decision.Decision {
	target := ref.Clone()
	if c.NoScheduling {
		target.Priority = nil
	} else if target.Priority == nil {
		target.Priority = make([]int, len(target.Device)) // FIFO = all at the lowest level
	}
	if c.NoFusion {
		target.Fusion = nil
	} else if target.Fusion == nil {
		target.Fusion = make([]int, len(target.Device))
		for i := range target.Fusion {
			target.Fusion[i] = -1 // no fusion: level 0
		}
	} else {
		target.Fusion = fusionLevels(target.Fusion, c.FusionLevels)
	}
	if target.Priority != nil {
		target.Priority = levels(target.Priority, c.PriorityLevels)
	}
	return target
}

// levels maps arbitrary priorities onto the policy's levels by rank:
// the lowest priority gets level 0 (fusion: -1, never) and the highest
// levels-1, keeping their order.
func levels(prio []int, n int) []int {
	lo, hi := math.MaxInt, math.MinInt
	for _, v := range prio {
		lo, hi = min(lo, v), max(hi, v)
	}
	out := make([]int, len(prio))
	if hi <= lo {
		return out
	}
	for i, v := range prio {
		out[i] = int(float64(v-lo) / float64(hi-lo) * float64(n-1))
	}
	return out
}

// fusionLevels maps fusion priorities onto the policy's fusion field:
// Decision.Fusion = level - 1, level 0 meaning "never initiates a fusion".
// Negative priorities (never) stay -1; the others keep their order on
// levels 1..n-1, so that every op that fused before still fuses. nil (no
// fusion) maps to every op at level 0.
func fusionLevels(fusion []int, n int) []int {
	if fusion == nil {
		return nil
	}
	var pos []int
	for _, f := range fusion {
		if f >= 0 {
			pos = append(pos, f)
		}
	}
	lv := levels(pos, n-1)
	out := make([]int, len(fusion))
	k := 0
	for i, f := range fusion {
		if f < 0 {
			out[i] = -1
			continue
		}
		out[i] = lv[k] // level lv+1, minus one
		k++
	}
	return out
}

func numTasks(c policy.Config) int {
	n := 1
	if !c.NoScheduling {
		n++
	}
	if !c.NoFusion {
		n++
	}
	return n
}

func policyTasks(c policy.Config) optimize.Tasks {
	return optimize.Tasks{Placement: true, Scheduling: !c.NoScheduling, Fusion: !c.NoFusion}
}
