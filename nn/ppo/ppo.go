package ppo

import (
	"fmt"
	"math"

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

// Model is what PPO trains: a network's parameters, and forward passes
// over the one input a rollout's samples were drawn from. The GO policy
// implements it (policy.PPOModel); PPO knows nothing else of the network.
type Model interface {
	// Params are the trained parameters; their gradients are what Pass.Loss
	// accumulates.
	Params() []*nn.Param[float32]
	// Forward runs the network on the rollout's input.
	Forward() (Pass, error)
}

// Pass is one forward pass of a Model, kept for one loss evaluation.
type Pass interface {
	// Loss adds to the model's gradients the gradient of PPO's loss over
	// the rollout's samples b.Lo to b.Hi (exclusive) and returns the loss
	// and its parts.
	Loss(b Batch) (Loss, error)
	// Release returns the pass's memory; the pass is unusable after.
	Release()
}

// Batch is a minibatch of a rollout's samples, with what PPO's clipped
// surrogate needs (GDP §6.1). Its slices hold the minibatch's samples
// only.
type Batch struct {
	Lo, Hi      int       // the samples, as indices into the rollout
	Advantages  []float64 // one per sample
	OldLogProbs []float64 // log-probability of each sample when it was drawn
	// OldNodeLogProbs, if set, holds per sample the log-probability of
	// every node's action when it was drawn: the ratio is then clipped per
	// node.
	OldNodeLogProbs [][]float32
	// Returns are the value head's targets, one per sample; nil means no
	// value loss.
	Returns     []float64
	ClipEps     float64 // ratio clip epsilon
	EntropyCoef float64 // weight of the entropy bonus; 0 means none
	ValueCoef   float64 // weight of the value loss; 0 means none
}

// Loss is one loss evaluation and its parts.
type Loss struct {
	Loss, Surrogate, Entropy, ValueLoss, ClipFrac, ApproxKL float64
}

// Rollout is one batch of samples drawn from one forward pass on one
// input, with their rewards. The samples themselves (decisions) stay with
// the Model; PPO reads their log-probabilities and rewards.
type Rollout struct {
	OldLogProbs []float64
	// OldNodeLogProbs, if set, holds every node's action log-probability
	// per sample (policy.Output.NodeLogProbs): the ratio is then clipped
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

// Update runs PPO's epochs over rollout ro on model m with optimizer opt.
// first, if not nil, is the forward pass the rollout was sampled from; it
// serves the first minibatch step (where the ratio is exactly 1) and is
// released here.
func Update(m Model, opt *nn.Adam, ro Rollout, first Pass, s Settings) (Stats, error) {
	s = s.filled()
	k := len(ro.OldLogProbs)
	if k == 0 || len(ro.Rewards) != k {
		return Stats{}, fmt.Errorf("ppo: rollout has %d rewards, %d log-probabilities", len(ro.Rewards), k)
	}
	adv := Advantages(ro.Rewards, ro.Baseline)
	entCoef, valCoef := max(s.EntropyCoef, 0), max(s.ValueCoef, 0)
	var st Stats
	mb := min(s.Minibatches, k)
	params := m.Params()
	for epoch := 0; epoch < s.Epochs; epoch++ {
		for b := 0; b < mb; b++ {
			lo, hi := b*k/mb, (b+1)*k/mb
			pass := first
			first = nil
			if pass == nil {
				var err error
				if pass, err = m.Forward(); err != nil {
					return st, err
				}
			}
			batch := Batch{
				Lo: lo, Hi: hi, Advantages: adv[lo:hi], OldLogProbs: ro.OldLogProbs[lo:hi],
				ClipEps: s.ClipEps, EntropyCoef: entCoef,
			}
			if ro.OldNodeLogProbs != nil {
				batch.OldNodeLogProbs = ro.OldNodeLogProbs[lo:hi]
			}
			if valCoef > 0 {
				batch.Returns, batch.ValueCoef = ro.Rewards[lo:hi], valCoef
			}
			r, err := pass.Loss(batch)
			pass.Release()
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
