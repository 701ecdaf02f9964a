package opflags

import "github.com/spf13/pflag"

// BindTrain binds t's flags to f: the network (--policy) and PPO's
// knobs.
func BindTrain(f *pflag.FlagSet, t *Train) {
	f.StringVar(&t.Policy, "policy", "default", "network size: default, small, or a JSON `FILE` of policy.Config fields")
	BindPPO(f, &t.PPO)
}

// BindPPO binds p's flags to f, defaulting to the settings learn uses
// (DefaultPPO).
func BindPPO(f *pflag.FlagSet, p *PPO) {
	d := DefaultPPO()
	f.Float64Var(&p.LearningRate, "lr", d.LearningRate, "PPO: Adam learning rate")
	f.IntVar(&p.Epochs, "epochs", d.Epochs, "PPO: epochs over each rollout")
	f.IntVar(&p.Minibatches, "minibatches", d.Minibatches, "PPO: minibatches per epoch")
	f.Float64Var(&p.Clip, "clip", d.Clip, "PPO: clip range of the probability ratio (per node and task)")
	f.Float64Var(&p.Entropy, "entropy", d.Entropy, "PPO: entropy bonus weight (0 = none)")
	f.Float64Var(&p.ValueCoef, "value-coef", d.ValueCoef, "PPO: value-loss weight (0 = no value head; the rollout mean is the baseline)")
	f.Float64Var(&p.MaxGradNorm, "max-grad-norm", d.MaxGradNorm, "PPO: global gradient-norm clip (0 = none)")
	f.Float64Var(&p.TargetKL, "target-kl", d.TargetKL, "PPO: stop a rollout's epochs above this approximate KL (0 = never)")
}
