package hdp

import (
	"context"
	"math/rand/v2"

	"github.com/placer/placer/methods/internal/seq2seq"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/optimize"
)

// Defaults of HDP's knobs, rl17's (seq2seq's).
const (
	DefaultSamples      = seq2seq.DefaultSamples      // K (grouping, placement) samples per step
	DefaultLearningRate = seq2seq.DefaultLearningRate // Adam's step size
	DefaultDecay        = seq2seq.DefaultDecay        // the moving-average baseline's decay (HDP's bl_dec)
	DefaultFailReward   = seq2seq.DefaultFailReward   // the failing signal
	DefaultSteps        = seq2seq.DefaultSteps        // steps when the settings give no bound
)

// HDP is the hierarchical device placer (Mirhoseini et al., "A
// Hierarchical Model for Device Placement", ICLR 2018). A feed-forward
// grouper reads each op (its type, output sizes and adjacency) and samples
// one of a fixed number of groups for it; the groups' embeddings (their
// ops' type counts and output sizes, and the edges between groups) feed
// rl17's attentional LSTM sequence-to-sequence placer, which samples one
// device per group. Both are trained jointly by REINFORCE: one reward,
// R = -sqrt(step time / reference) (the failing signal for a placement
// that runs out of memory), an exponential moving-average baseline, and
// the gradient of the sum of the grouping's and the placement's
// log-probabilities. Each step draws K (grouping, placement) samples and
// evaluates them as one batch through the problem's evaluator.
//
// The grouper decides per unit, a co-location group of the graph or an op
// in none, so that co-located ops always share a device. As rl17, it
// decides placement only: priorities, transfers and fusion are the
// problem's Base (Problem.Start), with TensorFlow's default fusion where
// the problem's tasks include fusion and Base has none; the reference is
// the cost model's lower bound; the result is the best placement sampled.
// It implements optimize.Optimizer under the name "hdp".
type HDP struct {
	Config Config
	// Samples is K, the samples drawn and evaluated per step; 0 =
	// DefaultSamples.
	Samples int
	// LearningRate is Adam's step size; 0 = DefaultLearningRate.
	LearningRate float64
	// GroupLearningRate is Adam's step size for the grouper's parameters;
	// 0 = LearningRate (TensorFlow trains both networks at one rate).
	GroupLearningRate float64
	// Decay is the baseline's decay per step; 0 = DefaultDecay.
	Decay float64
	// FailReward is the reward of an invalid placement; 0 =
	// DefaultFailReward.
	FailReward float64
}

var _ optimize.Optimizer = (*HDP)(nil)

// Name implements optimize.Optimizer.
func (r *HDP) Name() string { return "hdp" }

// Settings are the knobs an HDP run records, defaults resolved.
type Settings struct {
	Samples           int     `json:"samples"`
	LearningRate      float64 `json:"learning_rate"`
	GroupLearningRate float64 `json:"group_learning_rate"`
	Units             int     `json:"units"` // the grouper's decisions: co-location groups and free ops
	Decay             float64 `json:"baseline_decay"`
	FailReward        float64 `json:"fail_reward"`
	Config            Config  `json:"controller"` // Groups resolved for a run's devices
}

// KnobsOf is Settings's name (optimize.Knobs).
func (Settings) KnobsOf() string { return "hdp" }

// Settings returns the knobs r runs with, defaults resolved for a problem
// with devices devices (Units is a run's).
func (r *HDP) Settings(devices int) Settings {
	k := r.knobs()
	s := Settings{Samples: k.Samples, LearningRate: k.LearningRate, GroupLearningRate: r.GroupLearningRate, Decay: k.Decay, FailReward: k.FailReward, Config: r.Config.filled(devices)}
	if s.GroupLearningRate <= 0 {
		s.GroupLearningRate = s.LearningRate
	}
	return s
}

// knobs are r's REINFORCE knobs, defaults resolved.
func (r *HDP) knobs() seq2seq.Knobs {
	return seq2seq.Knobs{Samples: r.Samples, LearningRate: r.LearningRate, Decay: r.Decay, FailReward: r.FailReward}.Resolved()
}

// Optimize implements optimize.Optimizer. Budget.Steps counts REINFORCE
// steps (K evaluations each); Budget.Evaluations, Budget.Time and
// Budget.CPU bound it too; with no bound at all it runs DefaultSteps
// steps. With one device, or when the problem's tasks leave out
// placement, there is nothing to learn: it returns the problem's Start.
func (r *HDP) Optimize(ctx context.Context, p *optimize.Problem, set *optimize.Settings) (*optimize.Result, error) {
	settings := r.Settings(p.Devices())
	e, res, done, err := seq2seq.Begin(ctx, r.Name(), p, set, settings, r.knobs())
	if done {
		return res, err
	}
	seed := e.Tracker.Seed()
	gd := newGraphData(p.Graph)
	if c := settings.Config; c.Locality > 0 {
		if err := gd.clusterBy(p.Graph, p.Cost.OpTimes(), c.Groups, seed); err != nil {
			return nil, err
		}
	}
	settings.Units = gd.units()
	e.Learning.Settings = settings
	m := newModel[float32](gd, p.Devices(), settings.Config, seed)
	pol := &policy{m: m, rng: rand.New(rand.NewPCG(seed, 0x5eed18))}
	return e.Train(ctx, settings.Samples, pol,
		seq2seq.ParamGroup{Params: m.grouperParams(), LearningRate: settings.GroupLearningRate},
		seq2seq.ParamGroup{Params: m.placerParams(), LearningRate: settings.LearningRate})
}

// policy is HDP's two networks as the episode trains them: a step's k
// groupings of the units, the groups' embeddings and one placement of the
// groups per grouping; each op goes to its unit's group's device.
type policy struct {
	m   *model[float32]
	rng *rand.Rand
	ar  nn.Arena[float32]
	// The last step's samples.
	nz        *noise // its logit noise (nil: none)
	x         []float32
	groupings [][]int32
	devs      [][]int
}

// Sample implements seq2seq.Policy.
func (p *policy) Sample(step, k int) ([][]int, float64) {
	m, gd := p.m, p.m.d
	groups := m.cfg.Groups
	p.ar.Reset()
	p.nz = nil
	if m.cfg.NoiseStd > 0 && step < m.cfg.NoiseSteps {
		p.nz = &noise{on: true, seed: p.rng.Uint64()}
	}
	groupings, _, gEntropy := m.group(&p.ar, p.rng, k, p.nz)
	x := p.ar.AllocRaw(groups * k * gd.embedDim(groups))
	embed(gd, groups, groupings, x)
	devs, _, pEntropy := m.sample(&p.ar, p.rng, x, k, p.nz)
	p.x, p.groupings, p.devs = x, groupings, devs
	ops := make([][]int, k)
	for s := range k {
		ops[s] = make([]int, gd.ops)
		for op, u := range gd.unitOf {
			ops[s][op] = devs[s][groupings[s][u]]
		}
	}
	// Entropy per decision, over the grouper's units and the placer's
	// groups.
	u := float64(gd.units())
	return ops, (u*gEntropy + float64(groups)*pEntropy) / (u + float64(groups))
}

// Reinforce implements seq2seq.Policy.
func (p *policy) Reinforce(w []float64) {
	m, gd, n := p.m, p.m.d, len(w)
	groups := m.cfg.Groups
	x := p.x
	if n < len(p.groupings) {
		// The budget cut the batch: the embeddings of the samples
		// evaluated, in the batch-n layout.
		x = p.ar.AllocRaw(groups * n * gd.embedDim(groups))
		embed(gd, groups, p.groupings[:n], x)
	}
	m.reinforce(&p.ar, x, p.groupings[:n], p.devs[:n], w, p.nz)
}
