package published

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// Row is one row of a published table of training throughput: a
// model, the cluster, the configuration its authors chose and what they
// measured.
type Row struct {
	Name string `json:"model"`
	// Set is the published source set of the row's figure (SourceSets'
	// keys).
	Set      string           `json:"-"`
	Model    transformer.Spec `json:"-"`
	Pod      string           `json:"-"` // pod preset
	GPUs     int              `json:"gpus"`
	Strategy plan.Strategy
	TFLOPs   float64 `json:"published_tflops"` // per GPU
	MFU      float64 `json:"published_mfu"`
	// RecomputeStated: the publication states the recomputation (else
	// MegatronPlan searches it); MBSStated likewise the micro-batch size.
	RecomputeStated bool `json:"-"`
	MBSStated       bool `json:"-"`
	// FreeSP: the publication does not state sequence parallelism and
	// its overlap (else MegatronPlan keeps the strategy's).
	FreeSP bool `json:"-"`
	// Megatron: the run used Megatron-LM, so what the row leaves open is
	// read at its documented defaults (MegatronDefault); else (another
	// stack, no documented defaults) at its fastest (MegatronPlan).
	Megatron bool `json:"-"`
	// VirtualStated: the publication states the virtual stages (else
	// MegatronDefault reads none and MegatronPlan searches them).
	VirtualStated bool `json:"-"`
	// Tokens is the published tokens a second per GPU (Megatron-Bridge's
	// tables; 0 where only TFLOP/s is published).
	Tokens float64 `json:"published_tokens_per_gpu,omitempty"`
	// Precision is the publication's ("BF16", "FP8 current scaling").
	Precision string `json:"-"`
	// Regression: as SweepRow.Regression, the maintainers' tracker
	// listing the row's figure as a regression of its release.
	Regression string `json:"regression,omitempty"`
}
