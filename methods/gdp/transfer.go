package gdp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/nn/ppo"
	"github.com/placer/placer/optimize"
)

// TrainGraph is one graph of a pre-training set: its problem (graph,
// cluster, roofline evaluator, tasks) and the decision its reward is
// normalized by, typically the best quick baseline's.
type TrainGraph struct {
	Name    string
	Problem *optimize.Problem
	// Reference is the anchor of every rollout on this graph and the
	// target of the warm-up; nil Device = the problem's Base decision.
	Reference decision.Decision
	// RefTime is the reference's step time; 0 = Reference's, evaluated.
	RefTime float64
}

// PretrainPoint is one step of a pre-training run.
type PretrainPoint struct {
	Step       int     `json:"step"` // 1-based, counting the warm-up steps
	Graph      string  `json:"graph"`
	Phase      string  `json:"phase"` // "imitate" or "ppo"
	Elapsed    float64 `json:"elapsed_s"`
	MeanReward float64 `json:"mean_reward"`  // PPO steps
	BestReward float64 `json:"best_reward"`  // PPO steps
	Valid      float64 `json:"valid"`        // fraction of the rollout that was valid
	Entropy    float64 `json:"entropy"`      // per node
	LogProb    float64 `json:"ref_log_prob"` // imitation: log-likelihood of the reference per node and task
	ClipFrac   float64 `json:"clip_fraction"`
	ApproxKL   float64 `json:"approx_kl"`
}

// Pretrain is batch pre-training of one policy over several graphs (GDP
// §4.3): every step picks one graph, draws a rollout of Samples decisions
// from one forward pass anchored on that graph's reference decision,
// evaluates them in parallel with the graph's own evaluator, rewards each
// with -sqrt(step / reference step) and runs a per-node PPO update. One
// Adam optimizer serves every graph. The first Warmup steps imitate the
// graphs' references instead (behaviour cloning, as Search's warm-up).
//
// Runs are deterministic: the randomness of step i depends only on Seed
// and i, so a run resumed from a checkpoint draws the same graphs and
// samples as one that never stopped (the Adam moments restart, though).
type Pretrain struct {
	Graphs []TrainGraph
	// Policy to train; nil = a new one from Config and Seed (or the
	// checkpoint's, with Resume).
	Policy *policy.Policy
	Config *policy.Config // used for a new policy; nil = defaults
	PPO    ppo.Settings   // zero = DefaultPPO
	Seed   uint64
	// Samples is the rollout size K; 0 = 16.
	Samples int
	// Refine is the number of forward passes per rollout (GO eq. 2); 0 = 1:
	// the rollout is drawn from the pass conditioned on the reference,
	// which is the pass that Infer runs.
	Refine int
	// Warmup is the number of imitation steps at the start (cycling over
	// the graphs); 0 = 30 per graph; negative = none.
	Warmup int
	// Random picks each step's graph at random (seeded) instead of in
	// turn.
	Random bool
	// MaxUnits bounds each graph's decision units (see Units): 0 =
	// MaxUnits; negative = one unit per co-location group.
	MaxUnits int
	// Moves sizes the anchor bonus as in Search (0 = DefaultMoves;
	// negative = none); ZeroShot and fine-tuning should use the same.
	Moves float64
	// Steps is the total number of steps, warm-up included, counted
	// across resumed runs; Time bounds this run's wall time. Both zero =
	// 200 steps.
	Steps int
	Time  time.Duration
	// Checkpoint is the policy file checkpoints go to (with its state
	// file CheckpointState(Checkpoint)) every CheckpointEvery steps, on
	// cancellation and at the end; "" = none.
	Checkpoint      string
	CheckpointEvery int
	// Resume is a checkpoint to continue from: its policy, step count,
	// seed and elapsed time replace Policy, Seed and the start.
	Resume string
	// OnStep, if set, is called after every step.
	OnStep func(PretrainPoint)
	// Rounds, if set, runs the steps in synchronous rounds shared by
	// worker processes (pretrainrounds.go); nil = one process, in turn.
	Rounds *Rounds
}

// PretrainResult is what a pre-training run produced.
type PretrainResult struct {
	// Policy is the trained policy (also in the last checkpoint, when
	// Pretrain.Checkpoint is set).
	Policy *policy.Policy
	// Seed is the run's seed (the checkpoint's, when resumed).
	Seed uint64
	// Step is the number of steps done in total, resumed runs included.
	Step int
	// Elapsed is the total training time, resumed runs included.
	Elapsed time.Duration
	// Curve holds this run's steps.
	Curve []PretrainPoint
	// Status says why the run stopped.
	Status optimize.Status
}

// CheckpointFormat and CheckpointVersion identify a checkpoint's state
// file.
const (
	CheckpointFormat  = "placer-pretrain-checkpoint"
	CheckpointVersion = 1
)

// Checkpoint is the state file beside a checkpoint's policy file.
type Checkpoint struct {
	Format  string   `json:"format"`
	Version int      `json:"version"`
	Step    int      `json:"step"`
	Seed    uint64   `json:"seed"`
	Graphs  []string `json:"graphs"`
	Elapsed float64  `json:"elapsed_s"`
	Warmup  int      `json:"warmup"`
	// PolicySHA256 is the hash of the policy file the state belongs to.
	PolicySHA256 string `json:"policy_sha256"`
	// Policy is the policy file itself (base64 in the JSON), so that the
	// state file alone is the checkpoint: written in one rename, it can
	// never name a policy that is not there. Absent in checkpoints written
	// before it was added, which still load from the policy file.
	Policy []byte `json:"policy,omitempty"`
}

// CheckpointState is the path of the state file of the checkpoint whose
// policy file is path.
func CheckpointState(path string) string { return path + ".state.json" }

// SaveCheckpoint writes the checkpoint as one atomic unit: the state file
// CheckpointState(path), holding c and the policy itself, in one rename;
// then the policy alone to path (what infer and finetune read). A kill at
// any moment leaves either the previous checkpoint or this one whole in
// the state file (the policy file may then lag one checkpoint behind;
// LoadCheckpoint reads the state's own copy). Temporary files a killed
// writer left beside the two files are removed.
func SaveCheckpoint(path string, pol *policy.Policy, c Checkpoint) error {
	var buf bytes.Buffer
	if _, err := pol.WriteTo(&buf); err != nil {
		return err
	}
	sum := sha256.Sum256(buf.Bytes())
	c.Format, c.Version, c.PolicySHA256 = CheckpointFormat, CheckpointVersion, hex.EncodeToString(sum[:])
	c.Policy = buf.Bytes()
	js, err := json.Marshal(&c)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(CheckpointState(path), append(js, '\n')); err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(path, buf.Bytes()); err != nil {
		return err
	}
	atomicfile.RemoveStale(path)
	atomicfile.RemoveStale(CheckpointState(path))
	return nil
}

// LoadCheckpoint reads a checkpoint written by SaveCheckpoint. A missing,
// truncated, corrupt or mismatched policy or state file is a one-line
// error.
func LoadCheckpoint(path string) (*policy.Policy, Checkpoint, error) {
	var c Checkpoint
	sp := CheckpointState(path)
	js, err := bounded.ReadFile(sp, bounded.Model, "a checkpoint's state file")
	if err != nil {
		return nil, c, fmt.Errorf("checkpoint: %w (a checkpoint is a policy file and its state file)", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, c, fmt.Errorf("checkpoint: %s is not a checkpoint state file: %v", sp, graph.JSONError("state", js, err))
	}
	if c.Format != CheckpointFormat {
		return nil, c, fmt.Errorf("checkpoint: %s is not a checkpoint state file (format %q)", sp, c.Format)
	}
	if c.Version != CheckpointVersion {
		return nil, c, fmt.Errorf("checkpoint: %s has version %d; this placer reads version %d", sp, c.Version, CheckpointVersion)
	}
	data, from := c.Policy, sp
	if data == nil { // a checkpoint from before the state held the policy
		if data, err = bounded.ReadFile(path, bounded.Model, "a checkpoint"); err != nil {
			return nil, c, fmt.Errorf("checkpoint: %w", err)
		}
		from = path
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != c.PolicySHA256 {
		return nil, c, fmt.Errorf("checkpoint: %s does not belong to %s (policy hash mismatch)", sp, from)
	}
	if c.Step < 0 || c.Elapsed < 0 || math.IsNaN(c.Elapsed) || math.IsInf(c.Elapsed, 0) {
		return nil, c, fmt.Errorf("checkpoint: %s has a negative step or a bad elapsed time", sp)
	}
	pol, err := policy.Decode(data, from)
	if err != nil {
		return nil, c, err
	}
	c.Policy = nil
	return pol, c, nil
}

// prepared is a graph ready for training.
type prepared struct {
	g      *TrainGraph
	in     *policy.Input // conditioned on the reference
	target decision.Decision
	ref    decision.Decision // completed
	refT   float64
	tb     *tiebreak // the reference's priority order
}

// Run pre-trains until Steps, Time or ctx stops it, then writes the last
// checkpoint (when Checkpoint is set). A cancelled ctx is not an error:
// the result's Status says Cancelled. pt itself is not changed.
//
// A run has three phases: start (check the graphs, resume from a
// checkpoint or make the policy), prepareGraph for each graph (reference,
// decision units, the policy's input), then the training loop (imitation
// steps, then PPO steps, with checkpoints).
func (pt *Pretrain) Run(ctx context.Context) (*PretrainResult, error) {
	if pt.Rounds != nil {
		return pt.runRounds(ctx)
	}
	r, names, warm, err := pt.start()
	if err != nil {
		return nil, err
	}
	gs := make([]prepared, len(pt.Graphs))
	for i := range pt.Graphs {
		if gs[i], err = pt.prepareGraph(ctx, r.Policy, &pt.Graphs[i], r.Seed); err != nil {
			return nil, err
		}
	}
	save := func() error {
		if pt.Checkpoint == "" {
			return nil
		}
		return SaveCheckpoint(pt.Checkpoint, r.Policy, Checkpoint{Step: r.Step, Seed: r.Seed, Graphs: names, Elapsed: r.Elapsed.Seconds(), Warmup: warm})
	}
	if err := pt.loop(ctx, r, gs, warm, save); err != nil {
		return nil, err
	}
	return r, save()
}

// start checks that the graphs ask for the same tasks, resumes from
// pt.Resume or makes the policy, and returns the run's result so far, the
// graphs' names and the number of warm-up steps.
func (pt *Pretrain) start() (r *PretrainResult, names []string, warm int, err error) {
	if len(pt.Graphs) == 0 {
		return nil, nil, 0, errors.New("pretrain: no graphs")
	}
	names = make([]string, len(pt.Graphs))
	tasks := pt.Graphs[0].Problem.EffectiveTasks()
	for i := range pt.Graphs {
		g := &pt.Graphs[i]
		names[i] = g.Name
		if t := g.Problem.EffectiveTasks(); t != tasks {
			return nil, nil, 0, fmt.Errorf("pretrain: graph %s asks for %s, graph %s for %s; one policy needs the same tasks", g.Name, t, pt.Graphs[0].Name, tasks)
		}
		if g.Problem.Devices() < 2 && tasks == (optimize.Tasks{Placement: true}) {
			return nil, nil, 0, fmt.Errorf("pretrain: graph %s: one device leaves no placement to learn", g.Name)
		}
	}
	warm = pt.Warmup
	if warm == 0 {
		warm = 30 * len(pt.Graphs)
	}
	warm = max(warm, 0)
	r = &PretrainResult{Policy: pt.Policy, Seed: pt.Seed}
	if pt.Resume != "" {
		pol, c, err := LoadCheckpoint(pt.Resume)
		if err != nil {
			return nil, nil, 0, err
		}
		if !slices.Equal(c.Graphs, names) {
			return nil, nil, 0, fmt.Errorf("pretrain: checkpoint %s was trained on %d graphs (%s...), this run has %d (%s...); resume with the same graphs", pt.Resume, len(c.Graphs), first(c.Graphs), len(names), first(names))
		}
		r.Policy, r.Seed, r.Step, r.Elapsed, warm = pol, c.Seed, c.Step, time.Duration(c.Elapsed*float64(time.Second)), c.Warmup
	}
	if r.Policy == nil {
		cfg := configFor(pt.Config, tasks)
		if r.Policy, err = policy.New(&cfg, r.Seed); err != nil {
			return nil, nil, 0, err
		}
	} else if c := r.Policy.Config(); c.NoScheduling == tasks.Scheduling || c.NoFusion == tasks.Fusion {
		return nil, nil, 0, fmt.Errorf("pretrain: the policy decides %s, the graphs ask for %s", policyTasks(c), tasks)
	}
	return r, names, warm, nil
}

// prepareGraph completes g's reference, builds its decision units and the
// policy's input conditioned on the reference, and evaluates the
// reference unless its step time is given.
func (pt *Pretrain) prepareGraph(ctx context.Context, pol *policy.Policy, g *TrainGraph, seed uint64) (prepared, error) {
	cfg := pol.Config()
	p := g.Problem
	ref := g.Reference
	if ref.Device == nil {
		ref = p.Base
	}
	ref = p.Complete(ref)
	units, err := Units(p, ref, pt.MaxUnits, seed)
	if err != nil {
		return prepared{}, fmt.Errorf("pretrain: graph %s: %w", g.Name, err)
	}
	in, err := pol.PrepareUnits(p.Graph, p.Devices(), hintsFor(p, pol.Config().HintDim), units)
	if err != nil {
		return prepared{}, fmt.Errorf("pretrain: graph %s: %w", g.Name, err)
	}
	refT := g.RefTime
	if refT <= 0 {
		r, err := p.Evaluator.Evaluate(context.WithoutCancel(ctx), ref)
		if err != nil {
			return prepared{}, fmt.Errorf("pretrain: graph %s: reference decision: %w", g.Name, err)
		}
		refT = r.StepTime
	}
	if refT <= 0 || math.IsNaN(refT) {
		return prepared{}, fmt.Errorf("pretrain: graph %s: reference step time is zero", g.Name)
	}
	target := policyTarget(cfg, ref)
	if in, err = anchored(in, &target, keepFor(pt.Moves, in.NumNodes())); err != nil {
		return prepared{}, fmt.Errorf("pretrain: graph %s: %w", g.Name, err)
	}
	return prepared{g: g, in: in, target: target, ref: ref, refT: refT, tb: newTiebreak(ref, target, in.Nodes())}, nil
}

// loop trains until the step budget, the time limit or ctx stops it:
// imitation steps first (warm of them, counted across resumed runs), then
// PPO steps, one graph per step, with a checkpoint (save) every
// CheckpointEvery steps. r's Step, Elapsed, Curve and Status follow.
func (pt *Pretrain) loop(ctx context.Context, r *PretrainResult, gs []prepared, warm int, save func() error) error {
	pol := r.Policy
	steps := pt.Steps
	if steps == 0 && pt.Time == 0 {
		steps = 200
	}
	kn := pt.knobs()
	start, base := time.Now(), r.Elapsed
	opt := &nn.Adam{}
	r.Status = optimize.BudgetReached
	for {
		r.Elapsed = base + time.Since(start)
		switch {
		case ctx.Err() != nil:
			r.Status = optimize.Cancelled
		case steps > 0 && r.Step >= steps:
			r.Status = optimize.BudgetReached
		case pt.Time > 0 && time.Since(start) >= pt.Time:
			r.Status = optimize.TimeUp
		default:
			var pp PretrainPoint
			var err error
			var gi int
			pp, gi, opt, err = pt.stepAt(ctx, r.Step, r.Seed, warm, pol, opt, gs, kn)
			if errors.Is(err, optimize.ErrStopped) {
				continue // ctx is cancelled: the next pass stops
			}
			if err != nil {
				return err
			}
			r.Step++
			r.Elapsed = base + time.Since(start)
			pp.Step, pp.Graph, pp.Elapsed = r.Step, gs[gi].g.Name, r.Elapsed.Seconds()
			r.Curve = append(r.Curve, pp)
			if pt.OnStep != nil {
				pt.OnStep(pp)
			}
			if pt.CheckpointEvery > 0 && r.Step%pt.CheckpointEvery == 0 {
				if err := save(); err != nil {
					return err
				}
			}
			continue
		}
		return nil
	}
}

// stepKnobs are a run's per-step settings, defaults filled in, and its
// buffer of results.
type stepKnobs struct {
	k, refine int
	settings  ppo.Settings
	results   []evaluate.Result
}

func (pt *Pretrain) knobs() stepKnobs {
	kn := stepKnobs{k: pt.Samples, refine: max(pt.Refine, 1), settings: pt.PPO}
	if kn.k <= 0 {
		kn.k = 16
	}
	if kn.settings == (ppo.Settings{}) {
		kn.settings = DefaultPPO
	}
	kn.results = make([]evaluate.Result, kn.k)
	return kn
}

// stepAt runs step i (0-based) of a run with seed: an imitation step
// below warm, a PPO step after, on the graph of gs the step draws (its
// index returned), updating pol with opt. It returns the optimizer the
// next step uses: PPO gets a fresh one after the last imitation step
// (see Search).
func (pt *Pretrain) stepAt(ctx context.Context, i int, seed uint64, warm int, pol *policy.Policy, opt *nn.Adam, gs []prepared, kn stepKnobs) (PretrainPoint, int, *nn.Adam, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5851f42d4c957f2d^uint64(i)))
	gi := i % len(gs)
	if pt.Random {
		gi = rng.IntN(len(gs))
	}
	if i < warm {
		pp, err := imitateStep(pol, opt, &gs[gi])
		if i == warm-1 {
			opt = &nn.Adam{}
		}
		return pp, gi, opt, err
	}
	pp, err := pt.ppoStep(ctx, pol, opt, &gs[gi], rng, kn.k, kn.refine, kn.settings, kn.results)
	return pp, gi, opt, err
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// imitateStep is one step of behaviour cloning of g's reference.
func imitateStep(pol *policy.Policy, opt *nn.Adam, g *prepared) (PretrainPoint, error) {
	pp := PretrainPoint{Phase: "imitate"}
	out, err := pol.Forward(g.in)
	if err != nil {
		return pp, err
	}
	defer out.Release()
	n := g.in.NumNodes()
	if lp, err := out.LogProb(g.target); err == nil {
		pp.LogProb = lp / float64(n*numTasks(pol.Config()))
	}
	pp.Entropy = out.Entropy() / float64(n)
	if err := out.AddLogProbGrad(g.target, -1/float64(n)); err != nil {
		return pp, fmt.Errorf("pretrain: warm-up on %s: %w", g.g.Name, err)
	}
	if err := out.Backward(); err != nil {
		return pp, err
	}
	nn.ClipGradNorm(pol.Params(), 1)
	opt.Step(pol.Params(), ImitationRate)
	return pp, nil
}

// ppoStep is one rollout on g and its PPO update. It returns
// optimize.ErrStopped when ctx was cancelled before the rollout was
// evaluated (the policy is then unchanged).
func (pt *Pretrain) ppoStep(ctx context.Context, pol *policy.Policy, opt *nn.Adam, g *prepared, rng *rand.Rand, k, refine int, settings ppo.Settings, results []evaluate.Result) (PretrainPoint, error) {
	pp := PretrainPoint{Phase: "ppo", BestReward: math.Inf(-1)}
	p := g.g.Problem
	out, err := pol.Refine(g.in, rng, refine)
	if err != nil {
		return pp, err
	}
	raw := out.Sample(rng, k)
	logps, nodeLogps, err := sampleLogProbs(out, raw)
	if err != nil {
		out.Release()
		return pp, err
	}
	ds := make([]decision.Decision, k)
	for i := range raw {
		ds[i] = p.Complete(g.tb.apply(raw[i]))
	}
	if err := p.Evaluator.EvaluateBatch(ctx, ds, results[:k]); err != nil {
		out.Release()
		if ctx.Err() != nil {
			return pp, optimize.ErrStopped
		}
		return pp, fmt.Errorf("pretrain: graph %s: %w", g.g.Name, err)
	}
	rewards := make([]float64, k)
	for i := range rewards {
		rewards[i] = Reward(optimize.StepTime, &results[i], g.refT) // pre-training learns step time
		pp.MeanReward += rewards[i] / float64(k)
		pp.BestReward = max(pp.BestReward, rewards[i])
		if results[i].Valid() {
			pp.Valid += 1 / float64(k)
		}
	}
	model := policy.PPOModel{Policy: pol, Input: out.Input(), Decisions: raw}
	ro := ppo.Rollout{OldLogProbs: logps, OldNodeLogProbs: nodeLogps, Rewards: rewards, Baseline: math.NaN()}
	st, err := ppo.Update(model, opt, ro, model.Pass(out), settings)
	if err != nil {
		return pp, err
	}
	pp.Entropy, pp.ClipFrac, pp.ApproxKL = st.Entropy, st.ClipFrac, st.ApproxKL
	return pp, nil
}

// ZeroShot places a graph with a trained policy and no training (GDP
// §4.3's zero-shot inference): Refine low-memory forward passes
// (policy.Infer), the first conditioned on the reference decision unless
// NoAnchor, each later one on a sample of the pass before; then Samples
// decisions drawn from the last pass plus its most likely decision are
// evaluated in parallel and the best is kept. It implements
// optimize.Optimizer under the name "go-zero-shot" (not registered: it
// needs a trained policy).
type ZeroShot struct {
	Policy *policy.Policy
	// Reference anchors the first pass; nil Device = the problem's Base.
	Reference decision.Decision
	Samples   int  // 0 = 16; negative = the argmax only
	Refine    int  // forward passes; 0 = 1
	NoAnchor  bool // condition the first pass on nothing
	MaxUnits  int  // bound on decision units (see Units): 0 = MaxUnits; negative = none
	// Moves sizes the anchor bonus as in Search and Pretrain: 0 =
	// DefaultMoves; negative = none.
	Moves float64
}

var _ optimize.Optimizer = (*ZeroShot)(nil)

// Name implements optimize.Optimizer.
func (z *ZeroShot) Name() string { return "go-zero-shot" }

// Optimize implements optimize.Optimizer; the budget is ignored (it
// evaluates Samples+1 decisions).
func (z *ZeroShot) Optimize(ctx context.Context, p *optimize.Problem, set *optimize.Settings) (*optimize.Result, error) {
	var st optimize.Settings
	if set != nil {
		st = *set
	}
	st.Budget = optimize.Budget{}
	pol := z.Policy
	if pol == nil {
		return nil, errors.New("go-zero-shot: no policy")
	}
	tasks := p.EffectiveTasks()
	if c := pol.Config(); c.NoScheduling == tasks.Scheduling || c.NoFusion == tasks.Fusion {
		return nil, fmt.Errorf("go-zero-shot: the policy decides %s, the problem asks for %s", policyTasks(c), tasks)
	}
	ref := z.Reference
	if ref.Device == nil {
		ref = p.Base
	}
	ref = p.Complete(ref)
	units, err := Units(p, ref, z.MaxUnits, st.Seed)
	if err != nil {
		return nil, err
	}
	in, err := pol.PrepareUnits(p.Graph, p.Devices(), hintsFor(p, pol.Config().HintDim), units)
	if err != nil {
		return nil, err
	}
	tr := optimize.NewTracker(z.Name(), p, &st, 0)
	if !z.NoAnchor {
		target := policyTarget(pol.Config(), ref)
		if in, err = anchored(in, &target, keepFor(z.Moves, in.NumNodes())); err != nil {
			return nil, err
		}
	}
	rng := rand.New(rand.NewPCG(st.Seed, 0x9e3779b97f4a7c15))
	cur := in
	for range max(z.Refine, 1) - 1 {
		out, err := pol.Infer(cur)
		if err != nil {
			return nil, err
		}
		d := out.Sample(rng, 1)[0]
		out.Release()
		if cur, err = in.WithInitial(&d); err != nil {
			return nil, err
		}
	}
	out, err := pol.Infer(cur)
	if err != nil {
		return nil, err
	}
	k := z.Samples
	if k == 0 {
		k = 16
	}
	ds := []decision.Decision{out.Argmax()}
	if k > 0 {
		ds = append(ds, out.Sample(rng, k)...)
	}
	out.Release()
	tb := newTiebreak(ref, policyTarget(pol.Config(), ref), in.Nodes())
	if z.NoAnchor {
		tb = nil
	}
	for i := range ds {
		ds[i] = p.Complete(tb.apply(ds[i]))
	}
	results := make([]evaluate.Result, len(ds))
	if _, err := tr.EvaluateBatch(ctx, ds, results); err != nil && !errors.Is(err, optimize.ErrStopped) {
		return nil, err
	}
	tr.Step()
	res, err := tr.Result(ctx, ds[0])
	if err != nil {
		return nil, err
	}
	res.Learning = &optimize.Learning{Model: pol}
	if len(results) > 0 && results[0].StepTime > 0 {
		// ds[0] is the most likely decision, evaluated first.
		res.Learning.OnePass, res.Learning.OnePassValid = results[0].StepTime, results[0].Valid()
	}
	return res, nil
}
