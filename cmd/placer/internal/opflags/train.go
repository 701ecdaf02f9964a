package opflags

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/nn/ppo"
)

// SmallPolicy is --policy small: about a tenth of the default network,
// for quick pre-training on a CPU (and the default model).
var SmallPolicy = policy.Config{SageLayers: 2, SageDim: 32, DModel: 32, Heads: 2, HeadDim: 16, Inner: 64, CondDim: 32, HeadHidden: 32}

// ParsePolicy reads --policy: "default" (or "": nil, the defaults), "small"
// (SmallPolicy) or a JSON file of policy.Config fields, checked first.
func ParsePolicy(s string) (*policy.Config, error) {
	switch s {
	case "", "default":
		return nil, nil
	case "small":
		c := SmallPolicy
		return &c, nil
	}
	data, err := bounded.ReadFile(s, bounded.Config, "a policy configuration")
	if err != nil {
		if os.IsNotExist(err) && !strings.ContainsAny(s, "./") {
			return nil, fail.Usagef("--policy %q: neither default, small nor a file", s)
		}
		return nil, fmt.Errorf("--policy: %w", err)
	}
	var c policy.Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("--policy: %w", graph.JSONError(s, data, err))
	}
	if err := graph.CheckEnd(s, data, dec); err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	// The configuration is checked before any network is built.
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("--policy: %s: %w", s, err)
	}
	return &c, nil
}

// PPO are PPO's knobs as the CLI's flags give them (--lr, --epochs,
// --minibatches, --clip, --entropy, --value-coef, --max-grad-norm,
// --target-kl), where 0 means "none" for the optional terms instead of
// ppo's own defaults.
type PPO struct {
	LearningRate, Clip, Entropy, ValueCoef, MaxGradNorm, TargetKL float64
	Epochs, Minibatches                                           int
}

// DefaultPPO are the flags' defaults: the settings the learned
// methods use when none are given (gdp.DefaultPPO), in the flags' terms.
func DefaultPPO() PPO {
	d := gdp.DefaultPPO
	none := func(x float64) float64 { return max(x, 0) }
	return PPO{
		LearningRate: d.LearningRate,
		Epochs:       d.Epochs,
		Minibatches:  max(d.Minibatches, 1),
		Clip:         max(d.ClipEps, 0.2),
		Entropy:      none(d.EntropyCoef),
		ValueCoef:    none(d.ValueCoef),
		MaxGradNorm:  max(d.MaxGradNorm, 1),
		TargetKL:     max(d.TargetKL, 0.05),
	}
}

// Settings are the flags' ppo.Settings, or a usage error naming the flag
// out of range.
func (p PPO) Settings() (ppo.Settings, error) {
	switch {
	case !(p.LearningRate > 0):
		return ppo.Settings{}, fail.Usagef("--lr must be positive, not %g", p.LearningRate)
	case p.Epochs < 1:
		return ppo.Settings{}, fail.Usagef("--epochs must be at least 1, not %d", p.Epochs)
	case p.Minibatches < 1:
		return ppo.Settings{}, fail.Usagef("--minibatches must be at least 1, not %d", p.Minibatches)
	case !(p.Clip > 0):
		return ppo.Settings{}, fail.Usagef("--clip must be positive, not %g", p.Clip)
	case !(p.Entropy >= 0), !(p.ValueCoef >= 0), !(p.MaxGradNorm >= 0), !(p.TargetKL >= 0):
		return ppo.Settings{}, fail.Usagef("--entropy, --value-coef, --max-grad-norm and --target-kl must not be negative")
	}
	orNone := func(x float64) float64 {
		if x == 0 {
			return -1 // ppo.Settings: negative = none, zero = ppo's default
		}
		return x
	}
	return ppo.Settings{
		LearningRate: p.LearningRate, Epochs: p.Epochs, Minibatches: p.Minibatches, ClipEps: p.Clip,
		EntropyCoef: orNone(p.Entropy), ValueCoef: orNone(p.ValueCoef), MaxGradNorm: orNone(p.MaxGradNorm), TargetKL: orNone(p.TargetKL),
	}, nil
}

// Train are what a command that trains a new policy reads: its
// network (--policy) and PPO's knobs.
type Train struct {
	Policy string
	PPO    PPO
}

// Parse returns the network's configuration (nil = defaults) and the PPO
// settings, or a usage error.
func (t Train) Parse() (*policy.Config, ppo.Settings, error) {
	cfg, err := ParsePolicy(t.Policy)
	if err != nil {
		return nil, ppo.Settings{}, err
	}
	set, err := t.PPO.Settings()
	return cfg, set, err
}
