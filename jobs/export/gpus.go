package export

import (
	"fmt"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/planner/plan"
)

// GPUsRule is how eval, search and export read --gpus with a strategy
// (their help says it in these words).
const GPUsRule = `--gpus is every GPU of the cluster, in eval, search and export alike.
A strategy of R data-parallel replicas (--strategy dp=R, or the placement
file's) places one replica's placement on GPUs / R of them: with
--placement round-robin --gpus 4 --strategy dp=2, eval scores and export
writes 2 replicas, each round-robin on 2 GPUs; search --gpus 4 writes a
dp=2 answer as one replica's decision on 2 GPUs, which eval and export
read back with --gpus 4 or without --gpus. Without --gpus the cluster is
the placement file's replica GPUs times R (a decision file records one
replica's GPUs), else the graph file's GPUs, else 1.`

// ReplicaCluster resolves --gpus (gpus; 0 = not given) with strategy st
// around placement (a named placement or a file) by GPUsRule: it returns
// the cluster's GPUs (0 when neither --gpus nor a decision file says:
// the caller's default, the graph file's) and refuses, in one line, a
// GPU count that R replicas do not divide or that gives a replica other
// GPUs than the decision file's placement was made for.
func ReplicaCluster(gpus int, st decision.Strategy, placement string) (int, error) {
	R := st.R()
	fileGPUs := decisionFileGPUs(placement)
	if gpus <= 0 {
		return fileGPUs * R, nil
	}
	if gpus%R != 0 {
		return 0, fmt.Errorf("--gpus %d: %d replicas do not divide %d GPUs (--gpus is every GPU; each replica's placement gets GPUs / replicas)", gpus, R, gpus)
	}
	if fileGPUs > 0 && fileGPUs != gpus/R && R > 1 {
		return 0, fmt.Errorf("%s: decision: made for %d devices a replica, and %d replicas of it take %d GPUs, not --gpus %d (--gpus is every GPU: give --gpus %d, or leave it out)",
			placement, fileGPUs, R, fileGPUs*R, gpus, fileGPUs*R)
	}
	return gpus, nil
}

// decisionFileGPUs is one replica's GPUs as a decision or result file
// records them; 0 for a named placement, an msr-fiddle expert file or a
// file that cannot be read (whoever reads it says why).
func decisionFileGPUs(placement string) int {
	data, err := bounded.ReadFile(placement, bounded.Decision, "a placement file")
	if err != nil || inputs.PlacementFormat(data) != inputs.PlacementDecision {
		return 0
	}
	f, err := decision.Decode(data)
	if err != nil {
		return 0
	}
	return f.Devices
}

// StrategyOf is the strategy around a placement: spec (--strategy) when
// given, else the placement file's, else none (one replica).
func StrategyOf(spec, placement string) (decision.Strategy, error) {
	if spec == "" {
		return inputs.PlacementStrategy(placement), nil
	}
	s, err := decision.ParseStrategy(spec, plan.IsKey)
	if err != nil {
		return s, fmt.Errorf("--strategy: %w", err)
	}
	return s, nil
}
