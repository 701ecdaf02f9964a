package published

import (
	"math"
	"slices"

	"github.com/placer/placer/planner/plan"
)

// SourceSet is one published source set: its key and what it cites.
type SourceSet struct {
	Key, Cites string
}

// SourceSets are the published source sets, in the order the reports
// give them.
func SourceSets() []SourceSet {
	return []SourceSet{
		{SetMegatronLMH100, "Megatron-LM README (Megatron-Core r0.8.0): the H100 weak-scaling table and the strong-scaling series"},
		{SetKorthikanti, "Korthikanti et al., arXiv 2205.05198: Megatron-LM's 2022 A100 MFU table and the paper's iteration times (as Calculon transcribes them)"},
		{SetLlama3, "Grattafiori et al., The Llama 3 Herd of Models (2024), table 4"},
		{SetBridge, "NVIDIA-NeMo/Megatron-Bridge performance summaries: the 25.11 table and the archive, releases 25.09 to 26.06"},
		{SetTorchtitanH100, torchtitanSource},
		{SetTorchtitanA100, torchtitanA100Source},
		{SetModelZoo, "yanring/Megatron-MoE-ModelZoo best_practice/Qwen3/readme.md"},
		{SetMegatronMoEReadme, "NVIDIA/Megatron-LM megatron/core/transformer/moe/README.md at 022bcb5a"},
		{SetBridgeBlackwell, bridgeBlackwellSource},
		{SetBridgeFineTune, bridgeFineTuneSource},
		{SetTorchtitanAsyncTP, torchtitanAsyncTPSource},
		{SetTorchaoFloat8, torchaoFloat8Source},
		{SetInternEvo, internEvoSource + ": the development rows"},
		{SetInternEvoValidation, internEvoSource + ": the validation rows (the throughput table's tp=2 rows)"},
		{SetFlashAttn, flashAttnSource + ": the development rows"},
		{SetFlashAttnValidation, flashAttnSource + ": the validation rows (the 1M-token batch rows)"},
		{SetTorchtitanH200, titanH200Source + ": the development row (4 nodes)"},
		{SetTorchtitanH200Validate, titanH200Source + ": the validation row (8 nodes)"},
		{SetNanotron, nanotronSource + ": the development rows"},
		{SetNanotronValidation, nanotronSource + ": the validation rows (the 3.57B model's)"},
		{SetFMSFSDP, fmsSource + ": the development rows"},
		{SetFMSFSDPValidation, fmsSource + ": the validation rows (the compiled table's H100 column)"},
	}
}

// IsSourceSet says whether key is one of SourceSets' keys.
func IsSourceSet(key string) bool {
	return slices.ContainsFunc(SourceSets(), func(s SourceSet) bool { return s.Key == key })
}

// NoneChosen is what a source's out-of-sample figure says where no
// constant was chosen with it: the figure is its in-sample one, by
// construction.
const NoneChosen = "no constant was chosen with this source"

// SampleError is one sweep's or table's error over its rows, in sample
// (the model as it stands) and out of sample (the constants its own
// source chose reset: plan.Pod.WithoutSource), with Spearman's rank
// correlation of each against the published figures where it has three
// rows or more.
type SampleError struct {
	Set string `json:"source_set"`
	// Reset are the constants reset for the out-of-sample figures
	// ("Name value -> without"); empty: NoneChosen, and the two figures
	// are the same.
	Reset []string `json:"constants_reset"`
	Rows  int      `json:"rows"`
	// MeanAbs and OutMeanAbs are the mean |error|, in and out of sample.
	MeanAbs    float64 `json:"mean_abs_error"`
	OutMeanAbs float64 `json:"out_of_sample_mean_abs_error"`
	// Spearman and OutSpearman: null with fewer than three rows, or
	// where the figures or the predictions are all equal.
	Spearman    *float64 `json:"spearman"`
	OutSpearman *float64 `json:"out_of_sample_spearman"`
}

// SampleErrorOf is the SampleError of rows whose published figures are
// measured, whose predictions are in and out (in and out of sample;
// errors counted as prediction over figure, minus 1), from source set
// set with reset the constants reset; rank is the rank correlation the
// reports use (Spearman's).
func SampleErrorOf(set string, reset []string, measured, in, out []float64, rank func(x, y []float64) float64) SampleError {
	e := SampleError{Set: set, Reset: append([]string{}, reset...), Rows: len(measured)}
	if e.Rows == 0 {
		return e
	}
	for i, m := range measured {
		e.MeanAbs += math.Abs(in[i]/m - 1)
		e.OutMeanAbs += math.Abs(out[i]/m - 1)
	}
	e.MeanAbs /= float64(e.Rows)
	e.OutMeanAbs /= float64(e.Rows)
	if e.Rows >= 3 {
		// Undefined (NaN) where either side is all ties: left null.
		a, b := rank(measured, in), rank(measured, out)
		if !math.IsNaN(a) {
			e.Spearman = &a
		}
		if !math.IsNaN(b) {
			e.OutSpearman = &b
		}
	}
	return e
}

// WithoutSource is pod p without source set set's tuned constants:
// plan.Pod.WithoutSource over plan.Tuned.
func WithoutSource(p plan.Pod, set string) (plan.Pod, []string) {
	return p.WithoutSource(plan.Tuned, set)
}
