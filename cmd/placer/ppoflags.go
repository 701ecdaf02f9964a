package main

import (
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/nn/ppo"
	"github.com/spf13/cobra"
)

// trainFlags are what a command that trains a new policy reads: its
// network (--policy) and PPO's knobs.
type trainFlags struct {
	policy string
	ppo    ppoFlags
}

// addTrainFlags binds t's flags to cmd.
func addTrainFlags(cmd *cobra.Command, t *trainFlags) {
	cmd.Flags().StringVar(&t.policy, "policy", "default", "network size: default, small, or a JSON `FILE` of policy.Config fields")
	addPPOFlags(cmd, &t.ppo)
}

// parse returns the network's configuration (nil = defaults) and the PPO
// settings, or a usage error.
func (t *trainFlags) parse() (*policy.Config, ppo.Settings, error) {
	cfg, err := policyConfig(t.policy)
	if err != nil {
		return nil, ppo.Settings{}, err
	}
	set, err := t.ppo.settings()
	return cfg, set, err
}

// ppoFlags are PPO's knobs (ppo.Settings) as flags, defaulting to the
// settings learn uses (gdp.DefaultPPO), where 0 means "none" for the
// optional terms instead of ppo's own defaults.
type ppoFlags struct {
	lr, clip, entropy, value, gradNorm, kl float64
	epochs, minibatches                    int
}

// addPPOFlags binds p's flags to cmd.
func addPPOFlags(cmd *cobra.Command, p *ppoFlags) {
	d := gdp.DefaultPPO
	none := func(x float64) float64 { return max(x, 0) }
	f := cmd.Flags()
	f.Float64Var(&p.lr, "lr", d.LearningRate, "PPO: Adam learning rate")
	f.IntVar(&p.epochs, "epochs", d.Epochs, "PPO: epochs over each rollout")
	f.IntVar(&p.minibatches, "minibatches", max(d.Minibatches, 1), "PPO: minibatches per epoch")
	f.Float64Var(&p.clip, "clip", max(d.ClipEps, 0.2), "PPO: clip range of the probability ratio (per node and task)")
	f.Float64Var(&p.entropy, "entropy", none(d.EntropyCoef), "PPO: entropy bonus weight (0 = none)")
	f.Float64Var(&p.value, "value-coef", none(d.ValueCoef), "PPO: value-loss weight (0 = no value head; the rollout mean is the baseline)")
	f.Float64Var(&p.gradNorm, "max-grad-norm", max(d.MaxGradNorm, 1), "PPO: global gradient-norm clip (0 = none)")
	f.Float64Var(&p.kl, "target-kl", max(d.TargetKL, 0.05), "PPO: stop a rollout's epochs above this approximate KL (0 = never)")
}

// settings are the flags' ppo.Settings, or a usage error naming the flag
// out of range.
func (p *ppoFlags) settings() (ppo.Settings, error) {
	switch {
	case !(p.lr > 0):
		return ppo.Settings{}, usagef("--lr must be positive, not %g", p.lr)
	case p.epochs < 1:
		return ppo.Settings{}, usagef("--epochs must be at least 1, not %d", p.epochs)
	case p.minibatches < 1:
		return ppo.Settings{}, usagef("--minibatches must be at least 1, not %d", p.minibatches)
	case !(p.clip > 0):
		return ppo.Settings{}, usagef("--clip must be positive, not %g", p.clip)
	case !(p.entropy >= 0), !(p.value >= 0), !(p.gradNorm >= 0), !(p.kl >= 0):
		return ppo.Settings{}, usagef("--entropy, --value-coef, --max-grad-norm and --target-kl must not be negative")
	}
	orNone := func(x float64) float64 {
		if x == 0 {
			return -1 // ppo.Settings: negative = none, zero = ppo's default
		}
		return x
	}
	return ppo.Settings{
		LearningRate: p.lr, Epochs: p.epochs, Minibatches: p.minibatches, ClipEps: p.clip,
		EntropyCoef: orNone(p.entropy), ValueCoef: orNone(p.value), MaxGradNorm: orNone(p.gradNorm), TargetKL: orNone(p.kl),
	}, nil
}
