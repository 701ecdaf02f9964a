package rl17

import (
	"context"
	"math/rand/v2"

	"github.com/placer/placer/methods/internal/seq2seq"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/optimize"
)

// Defaults of RL17's knobs (those it shares with hdp are seq2seq's).
const (
	DefaultSamples      = seq2seq.DefaultSamples      // K placements per step
	DefaultLearningRate = seq2seq.DefaultLearningRate // Adam's step size (3e-3 collapsed the entropy on rnnlm2 in 25 steps)
	DefaultMaxGroups    = 256                         // the paper's graphs had 83 to 280 groups
	DefaultDecay        = seq2seq.DefaultDecay        // the moving-average baseline's decay
	DefaultFailReward   = seq2seq.DefaultFailReward   // the failing signal, as gdp.InvalidReward
	DefaultSteps        = seq2seq.DefaultSteps        // steps when the settings give no bound
)

// RL17 is the 2017 RL placer (Mirhoseini et al., "Device Placement
// Optimization with Reinforcement Learning", ICML 2017): the graph's ops
// are merged into co-location groups (Group), an attentional LSTM
// sequence-to-sequence controller reads the groups in topological order
// and outputs one device per group, and REINFORCE trains it on the reward
// R = -sqrt(step time / reference) with an exponential moving-average
// baseline; a placement that runs out of memory (or breaks co-location)
// gets the failing signal instead. Each step draws K placements and
// evaluates them as one batch through the problem's evaluator.
//
// It decides placement only: the rest of a decision (priorities,
// transfers, fusion) is the problem's Base (Problem.Start), with
// TensorFlow's default fusion (decision.TopologicalFusion) where the
// problem's tasks include fusion and Base has none. The reference
// that rewards are normalized by is the cost model's lower bound, so the
// reward is the paper's -sqrt(step time) up to a constant factor per
// graph. Unlike go, it has no anchor: the result is the best placement it
// sampled. It implements optimize.Optimizer under the name "rl17".
type RL17 struct {
	Config Config
	// Samples is K, the placements drawn and evaluated per step; 0 =
	// DefaultSamples.
	Samples int
	// LearningRate is Adam's step size; 0 = DefaultLearningRate.
	LearningRate float64
	// MaxGroups bounds the groups (see Group); 0 = DefaultMaxGroups,
	// negative = no bound.
	MaxGroups int
	// Decay is the baseline's decay per step; 0 = DefaultDecay.
	Decay float64
	// FailReward is the reward of an invalid placement; 0 =
	// DefaultFailReward.
	FailReward float64
}

var _ optimize.Optimizer = (*RL17)(nil)

// Name implements optimize.Optimizer.
func (r *RL17) Name() string { return "rl17" }

// Settings are the knobs an RL17 run records, defaults resolved.
type Settings struct {
	Samples      int     `json:"samples"`
	LearningRate float64 `json:"learning_rate"`
	MaxGroups    int     `json:"max_groups"` // -1 = no bound
	Groups       int     `json:"groups"`     // the groups placed
	Merged       int     `json:"merged"`     // the groups the paper's heuristic left
	Decay        float64 `json:"baseline_decay"`
	FailReward   float64 `json:"fail_reward"`
	Config       Config  `json:"controller"`
}

// KnobsOf is Settings's name (optimize.Knobs).
func (Settings) KnobsOf() string { return "rl17" }

// Settings returns the knobs r runs with, defaults resolved (Groups and
// Merged are a run's).
func (r *RL17) Settings() Settings {
	k := r.knobs()
	s := Settings{Samples: k.Samples, LearningRate: k.LearningRate, MaxGroups: r.MaxGroups, Decay: k.Decay, FailReward: k.FailReward, Config: r.Config.filled()}
	switch {
	case s.MaxGroups == 0:
		s.MaxGroups = DefaultMaxGroups
	case s.MaxGroups < 0:
		s.MaxGroups = -1
	}
	return s
}

// knobs are r's REINFORCE knobs, defaults resolved.
func (r *RL17) knobs() seq2seq.Knobs {
	return seq2seq.Knobs{Samples: r.Samples, LearningRate: r.LearningRate, Decay: r.Decay, FailReward: r.FailReward}.Resolved()
}

// Optimize implements optimize.Optimizer. Budget.Steps counts REINFORCE
// steps (K evaluations each); Budget.Evaluations and Budget.Time bound it
// too; with no bound at all it runs DefaultSteps steps. With one device,
// or when the problem's tasks leave out placement, there is nothing to
// learn: it returns the problem's Start.
func (r *RL17) Optimize(ctx context.Context, p *optimize.Problem, set *optimize.Settings) (*optimize.Result, error) {
	settings := r.Settings()
	e, res, done, err := seq2seq.Begin(ctx, r.Name(), p, set, settings, r.knobs())
	if done {
		return res, err
	}
	seed := e.Tracker.Seed()
	maxGroups := settings.MaxGroups
	if maxGroups < 0 {
		maxGroups = 0
	}
	gr, err := Group(p.Graph, p.Cost.OpTimes(), maxGroups, seed)
	if err != nil {
		return nil, err
	}
	settings.Groups, settings.Merged = gr.N(), gr.Merged
	e.Learning.Settings = settings
	m := newModel[float32](newFeatures(p.Graph, gr), p.Devices(), settings.Config, seed)
	pol := &policy{m: m, gr: gr, rng: rand.New(rand.NewPCG(seed, 0x5eed17))}
	return e.Train(ctx, settings.Samples, pol, seq2seq.ParamGroup{Params: m.params(), LearningRate: settings.LearningRate})
}

// policy is the controller as the episode trains it: a step's k
// placements of the groups, each op on its group's device.
type policy struct {
	m    *model[float32]
	gr   *Groups
	rng  *rand.Rand
	ar   nn.Arena[float32]
	devs [][]int // the last step's placements of the groups
}

// Sample implements seq2seq.Policy.
func (p *policy) Sample(_, k int) ([][]int, float64) {
	p.ar.Reset()
	devs, _, entropy := p.m.sample(&p.ar, p.rng, k)
	p.devs = devs
	ops := make([][]int, k)
	for s := range k {
		ops[s] = make([]int, len(p.gr.Of))
		for op, c := range p.gr.Of {
			ops[s][op] = devs[s][c]
		}
	}
	return ops, entropy
}

// Reinforce implements seq2seq.Policy.
func (p *policy) Reinforce(w []float64) { p.m.reinforce(&p.ar, p.devs[:len(w)], w) }
