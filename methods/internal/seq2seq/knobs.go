package seq2seq

// Defaults of the REINFORCE knobs that rl17 and hdp share.
const (
	DefaultSamples      = 16    // K samples per step
	DefaultLearningRate = 3e-4  // Adam's step size (3e-3 collapsed rl17's entropy on rnnlm2 in 25 steps)
	DefaultDecay        = 0.9   // the moving-average baseline's decay (HDP's bl_dec)
	DefaultFailReward   = -10.0 // the failing signal, as gdp.InvalidReward
	DefaultSteps        = 200   // steps when the settings give no bound
)

// Knobs are the REINFORCE knobs that rl17 and hdp share: K, the samples
// drawn and evaluated per step; Adam's step size; the baseline's decay per
// step; the reward of an invalid placement.
type Knobs struct {
	Samples      int
	LearningRate float64
	Decay        float64
	FailReward   float64
}

// Resolved returns k with each knob left at zero (a decay outside (0, 1))
// at its default.
func (k Knobs) Resolved() Knobs {
	if k.Samples <= 0 {
		k.Samples = DefaultSamples
	}
	if k.LearningRate <= 0 {
		k.LearningRate = DefaultLearningRate
	}
	if k.Decay <= 0 || k.Decay >= 1 {
		k.Decay = DefaultDecay
	}
	if k.FailReward == 0 {
		k.FailReward = DefaultFailReward
	}
	return k
}
