package search

import (
	"slices"

	"github.com/placer/placer/planner/plan"
)

// The levers: recipe switches Search turns on where the user left them
// (Space.Levers), each named by its plan key (plan.Keys).
const (
	// LeverFP8Params is fp8-params=on: FP8 (or, under a block-scaled
	// recipe, quantized) primary weights. Less memory; under LoRA with
	// an FP8 recipe no cast of the frozen base either, so there it is
	// never slower and never needs more memory and is turned on
	// wherever it applies.
	LeverFP8Params = "fp8-params"
	// LeverFP8Activation is fp8-activation=on: the MLP activation's
	// saved input in FP8. Memory only.
	LeverFP8Activation = "fp8-activation"
	// LeverOffload is offload-layers=N: the fewest layers whose
	// activations go to the host for the plan to fit. Memory only (the
	// model prices the copies hidden), and only without a pipeline or
	// recomputation (Megatron-Core's rule).
	LeverOffload = "offload-layers"
	// LeverCPComm is cp-comm-type: the context-parallel exchange (p2p,
	// all_gather, a2a), tried where cp > 1.
	LeverCPComm = "cp-comm-type"
	// LeverOutputProj is fp8-output-proj=on: the output layer's GEMMs in
	// MXFP8 (Megatron-Core's fp8_output_proj, fp8=mxfp8 only), tried on
	// a plan that fits where its step less all its output layer's time
	// beats the cutoff: faster GEMMs, their casts beside them, the
	// columnwise copies kept (more memory).
	LeverOutputProj = "fp8-output-proj"
	// LeverGraphs is cuda-graphs: Transformer Engine's per-layer CUDA
	// graphs (dense; full as well in a model with experts), with their
	// static buffers (graph-pool=layers) where the memory model counts
	// them, tried where the plan's GPU waits on its host: graphs change
	// nothing else of a step.
	LeverGraphs = "cuda-graphs"
)

// Levers are every lever, in the order Search turns them on.
var Levers = []string{LeverFP8Params, LeverFP8Activation, LeverOffload, LeverCPComm, LeverOutputProj, LeverGraphs}

// leverFixedBy are the keys of a --strategy that fix each lever beside
// its own: the transposes' cache is fp8-params'; the graphs' buffers are
// the graphs'; a named stack (stack=) sets the graphs and the exchange
// as its release runs them.
var leverFixedBy = map[string][]string{
	LeverFP8Params:     {"fp8-params", "fp8-transpose-cache"},
	LeverFP8Activation: {"fp8-activation"},
	LeverOffload:       {"offload-layers"},
	LeverCPComm:        {"cp-comm-type", "stack"},
	LeverOutputProj:    {"fp8-output-proj"},
	LeverGraphs:        {"cuda-graphs", "graph-pool", "stack"},
}

// LeversFor are the levers a search for framework target may turn on,
// in Levers' order: those whose key target's export writes (plan.Keys'
// Exports: megatron and megatron-bridge write fp8-params, offload-layers,
// cp-comm-type and cuda-graphs, megatron-bridge fp8-activation and
// fp8-output-proj too; torchtitan and deepspeed none), every one some
// export writes for "any", none for "" (no framework: the user's
// recipe). named reports whether the --strategy named a key (by its
// name): a lever a named key fixes (leverFixedBy) is left as written.
//
// Two recipe switches are no lever, since no export writes them:
// fp8-dpa=on (Megatron-LM core_v0.16.1's arguments.py has no flag for
// fp8_dot_product_attention; Megatron-Bridge 0.5.0's
// MixedPrecisionConfig.setup copies its recipe's
// fp8_dot_product_attention False over the model's) and
// lora-dropout-recompute=on (NeMo's dropout_recompute: Bridge 0.5.0's
// ParallelLinearAdapter keeps an nn.Dropout and takes no such
// argument). TestNoLeverUnwritten holds them out.
func LeversFor(target string, named func(key string) bool) []string {
	if target == "" {
		return nil
	}
	var out []string
	for _, lv := range Levers {
		if slices.ContainsFunc(leverFixedBy[lv], named) {
			continue
		}
		for _, k := range plan.Keys {
			if k.Name == lv && (target == "any" && len(k.Exports) > 0 || slices.Contains(k.Exports, target)) {
				out = append(out, lv)
			}
		}
	}
	return out
}

// leverSet is which levers a search turns on (Space.Levers).
type leverSet struct {
	any, fp8Params, fp8Act, offload, cpComm, outputProj, graphs bool
}

func newLeverSet(levers []string) leverSet {
	on := func(k string) bool { return slices.Contains(levers, k) }
	return leverSet{any: len(levers) > 0, fp8Params: on(LeverFP8Params), fp8Act: on(LeverFP8Activation),
		offload: on(LeverOffload), cpComm: on(LeverCPComm), outputProj: on(LeverOutputProj), graphs: on(LeverGraphs)}
}
