// Package ppo trains the policy with Proximal Policy Optimization
// (Schulman et al. 2017), as GDP does (seeds/gdp-generalized-device-
// placement.md §3 and table 4): a clipped surrogate objective, an entropy
// bonus, a value head or a per-rollout baseline, advantage normalization,
// gradient clipping by global norm, Adam, and several epochs of
// minibatches over each rollout.
package ppo

import (
	"fmt"
	"math"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/nn"
)

// Settings are PPO's knobs. The zero value of a field means its default.
type Settings struct {
	LearningRate float64 `json:"learning_rate"` // Adam step size; 0 = 3e-3
	Epochs       int     `json:"epochs"`        // passes over each rollout; 0 = 3 (GDP: 5)
	Minibatches  int     `json:"minibatches"`   // minibatches per epoch; 0 = 1 (the whole rollout)
	ClipEps      float64 `json:"clip_eps"`      // ratio clip; 0 = 0.2 (GDP)
	EntropyCoef  float64 `json:"entropy_coef"`  // entropy bonus per node; 0 = 0.01 (GDP: 0.05); negative = none
	ValueCoef    float64 `json:"value_coef"`    // value-loss weight; 0 = 0.5; negative = no value head training
	MaxGradNorm  float64 `json:"max_grad_norm"` // global gradient norm clip; 0 = 1.0; negative = no clipping
	// TargetKL stops the epochs of a rollout early when the approximate KL
	// divergence from the sampling policy exceeds it; 0 = 0.05; negative =
	// never.
	TargetKL float64 `json:"target_kl"`
}

// Filled is s with every zero field replaced by its default: the settings
// Update runs with.
func (s Settings) Filled() Settings { return s.filled() }

func (s Settings) filled() Settings {
	def := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
	}
	def(&s.LearningRate, 3e-3)
	def(&s.ClipEps, 0.2)
	def(&s.EntropyCoef, 0.01)
	def(&s.ValueCoef, 0.5)
	def(&s.MaxGradNorm, 1.0)
	def(&s.TargetKL, 0.05)
	if s.Epochs == 0 {
		s.Epochs = 3
	}
	if s.Minibatches == 0 {
		s.Minibatches = 1
	}
	return s
}

// Advantages turns rewards into normalized advantages: reward minus the
// baseline, divided by the rewards' standard deviation (if it is not
// tiny). A NaN baseline means the rollout's own mean.
func Advantages(rewards []float64, baseline float64) []float64 {
	n := float64(len(rewards))
	mean := 0.0
	for _, r := range rewards {
		mean += r
	}
	mean /= n
	if math.IsNaN(baseline) {
		baseline = mean
	}
	varsum := 0.0
	for _, r := range rewards {
		varsum += (r - mean) * (r - mean)
	}
	std := math.Sqrt(varsum / n)
	adv := make([]float64, len(rewards))
	for i, r := range rewards {
		adv[i] = r - baseline
		if std > 1e-8 {
			adv[i] /= std
		}
	}
	return adv
}

// Rollout is one batch of decisions sampled from one forward pass on one
// graph, with their rewards.
type Rollout struct {
	Input       *policy.Input
	Decisions   []decision.Decision
	OldLogProbs []float64
	// OldNodeLogProbs, if set, holds every node's action log-probability
	// per decision (policy.Output.NodeLogProbs): the ratio is then clipped
	// per node, which is what lets PPO learn on graphs of thousands of
	// nodes (the joint ratio leaves the clip range after any update).
	OldNodeLogProbs [][]float32
	Rewards         []float64
	Baseline        float64 // NaN = the rollout's mean reward
}

// Stats summarize one update.
type Stats struct {
	Loss, Surrogate, Entropy, ValueLoss, ClipFrac, ApproxKL, GradNorm float64
	Epochs                                                            int // epochs run (fewer when TargetKL stopped them)
}

// Update runs PPO's epochs over rollout ro on policy p with optimizer opt.
// first, if not nil, is the forward pass the rollout was sampled from; it
// serves the first minibatch step (where the ratio is exactly 1) and is
// released here.
func Update(p *policy.Policy, opt *nn.Adam, ro Rollout, first *policy.Output, s Settings) (Stats, error) {
	s = s.filled()
	k := len(ro.Decisions)
	if k == 0 || len(ro.Rewards) != k || len(ro.OldLogProbs) != k {
		return Stats{}, fmt.Errorf("ppo: rollout has %d decisions, %d rewards, %d log-probabilities", k, len(ro.Rewards), len(ro.OldLogProbs))
	}
	adv := Advantages(ro.Rewards, ro.Baseline)
	entCoef, valCoef := max(s.EntropyCoef, 0), max(s.ValueCoef, 0)
	var st Stats
	mb := min(s.Minibatches, k)
	params := p.Params()
	for epoch := 0; epoch < s.Epochs; epoch++ {
		for b := 0; b < mb; b++ {
			lo, hi := b*k/mb, (b+1)*k/mb
			out := first
			first = nil
			if out == nil {
				var err error
				if out, err = p.Forward(ro.Input); err != nil {
					return st, err
				}
			}
			batch := policy.PPOBatch{
				Decisions: ro.Decisions[lo:hi], Advantages: adv[lo:hi], OldLogProbs: ro.OldLogProbs[lo:hi],
				ClipEps: s.ClipEps, EntropyCoef: entCoef,
			}
			if ro.OldNodeLogProbs != nil {
				batch.OldNodeLogProbs = ro.OldNodeLogProbs[lo:hi]
			}
			if valCoef > 0 {
				batch.Returns, batch.ValueCoef = ro.Rewards[lo:hi], valCoef
			}
			r, err := policy.PPOLoss(out, batch)
			out.Release()
			if err != nil {
				return st, err
			}
			st.GradNorm = nn.ClipGradNorm(params, s.MaxGradNorm)
			opt.Step(params, s.LearningRate)
			st.Loss, st.Surrogate, st.Entropy, st.ValueLoss, st.ClipFrac, st.ApproxKL = r.Loss, r.Surrogate, r.Entropy, r.ValueLoss, r.ClipFrac, r.ApproxKL
		}
		st.Epochs = epoch + 1
		if s.TargetKL > 0 && st.ApproxKL > s.TargetKL {
			break
		}
	}
	if first != nil {
		first.Release()
	}
	return st, nil
}
