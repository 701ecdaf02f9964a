package bench

import (
	"slices"

	"github.com/placer/placer/planner/published"
)

// The parts of the bench.
const (
	Development = "development"
	Validation  = "validation"
)

// ValidationRound is the MLPerf round kept out of view, whole, and
// ValidationSet the published source set kept with it (torchao's float8
// table): chosen on 2026-11-28 before any bench row was predicted
// (measurements/mlperf/README.md, "The validation part").
// ValidationRound50 and ValidationBenchmark50 are round v5.0's part kept
// out of view: its Llama 3.1 405B pretraining benchmark, whole, every
// submitter, chosen on 2026-11-29 before any v5.0 row was read or
// predicted (measurements/mlperf/README.md); v5.0's BERT and LoRA rows are development rows.
const (
	ValidationRound       = "v4.1"
	ValidationSet         = published.SetTorchaoFloat8
	ValidationRound50     = "v5.0"
	ValidationBenchmark50 = "llama31_405b"
)

// ValidationGPU50 is the GPU of round v5.0's AMD Instinct rows in the
// validation part (chosen on 2026-11-29 before any AMD row was read into
// the bench or predicted: the MI325X rows of every submitter; the MI300X
// rows are development rows).
const ValidationGPU50 = "MI325X"

// amdGPUs are the AMD Instinct GPUs the bench holds (v5.0's Llama 2 70B
// LoRA rows of AMD and its partners): placer has no ROCm NeMo stack, so
// their runs are read in placer's default stack (Megatron-Core's, as
// NVIDIA's NeMo LoRA rows are), its code base's nearest (amdAssumed).
var amdGPUs = map[string]bool{"MI300X": true, "MI325X": true}

// PartOf is the part an MLPerf row of round, benchmark and gpu (runs.csv's
// gpu) is in: the validation part for ValidationRound, for v5.0's
// ValidationBenchmark50 and for v5.0's ValidationGPU50 rows, the
// development part for every other row.
func PartOf(round, benchmark, gpu string) string {
	if round == ValidationRound || (round == ValidationRound50 && (benchmark == ValidationBenchmark50 || gpu == ValidationGPU50)) {
		return Validation
	}
	return Development
}

// SetOf is the set of its part an MLPerf row of round, benchmark and gpu
// is in, the unit the part's rule names: "v4.1", "v5.0 llama31_405b" and
// "v5.0 MI325X" in the validation part; "v5.0 MI300X", "v5.0" (its
// NVIDIA-GPU BERT and LoRA rows) and "v3.0-v4.0" in the development part.
func SetOf(round, benchmark, gpu string) string {
	switch {
	case round == ValidationRound:
		return round
	case round == ValidationRound50 && benchmark == ValidationBenchmark50:
		return round + " " + benchmark
	case round == ValidationRound50 && amdGPUs[gpu]:
		return round + " " + gpu
	case round == ValidationRound50:
		return round
	}
	return "v3.0-v4.0"
}

// SweepPart is the part a published sweep of source set is in: the
// validation part for ValidationSet and the code bases' validation sets
// (published.CodebaseValidationSets: each code base's own, chosen before
// its rows were predicted), the development part otherwise.
func SweepPart(set string) string {
	if set == ValidationSet || slices.Contains(published.CodebaseValidationSets(), set) {
		return Validation
	}
	return Development
}
