package planner

import (
	"fmt"

	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/memory"
	"github.com/placer/placer/planner/plan"
)

// Result is a plan's predicted training step.
type Result struct {
	Plan plan.Plan `json:"-"`
	// priced is what priced the step, as decided once when its shards
	// were made (cost.Shard.Priced, over the plan's tensor-parallel
	// degrees): PricedBy names it.
	priced cost.Record
	// points is the plug-ins it was costed with, whose registries name
	// priced (PricedBy).
	points *cost.Points
	// Step is the step's time in seconds; TFLOPs the model TFLOP/s per
	// GPU (Megatron's count: transformer.ModelFLOPs over the step and
	// the GPUs) and MFU their fraction of the GPU's dense BF16 peak (0,
	// left out: none, a CPU pod's processes, Pod.CPU).
	Step   float64 `json:"step_s"`
	TFLOPs float64 `json:"tflops_per_gpu"`
	MFU    float64 `json:"mfu,omitempty"`
	// Memory is the peak bytes of the most loaded GPU (weights,
	// gradients, optimizer state, activations in flight); Fits whether
	// it is within the GPU's memory.
	Memory int64 `json:"memory_bytes"`
	Fits   bool  `json:"fits"`
	// Verdict is "fits", "tight" or "over" (VerdictFits ...): Memory
	// against Usable within MemoryError, the plan's regime's measured
	// error of the peak (0 where none is measured: "fits" or "over"
	// alone), which MemoryErrorSource names. Fits is Verdict != "over".
	Verdict           string  `json:"verdict"`
	MemoryError       float64 `json:"memory_error,omitempty"`
	MemoryErrorSource string  `json:"memory_error_source,omitempty"`
	// Where the step goes, seconds: the pipeline's busy time on its most
	// loaded device (Compute, tensor-parallel communication included),
	// the bubble (fill and drain, stage imbalance, their point-to-point
	// transfers; with connections=1 every steady-state transfer too),
	// exposed data-parallel communication, the tied
	// embedding's gradient all-reduce, and the optimizer step.
	Compute   float64 `json:"compute_s"`
	Bubble    float64 `json:"bubble_s"`
	DPExposed float64 `json:"dp_exposed_s"`
	Embedding float64 `json:"embedding_allreduce_s"`
	Optimizer float64 `json:"optimizer_s"`
	// TPExposed is the tensor-parallel communication not hidden behind
	// GEMMs, per step on the most loaded device (part of Compute).
	TPExposed float64 `json:"tp_exposed_s"`
	// CPExposed is the context-parallel key/value exchange not hidden
	// behind the attention blocks, per step on the most loaded device
	// (part of Compute; 0 without context parallelism).
	CPExposed float64 `json:"cp_exposed_s,omitempty"`
	// EPExposed is the experts' communication (the token all-to-alls
	// and the expert-tensor-parallel collectives, not overlapped), per
	// step on the most loaded device (part of Compute; 0 without
	// experts).
	EPExposed float64 `json:"ep_exposed_s,omitempty"`
	// HostExposed is the time the most loaded device's GPU waits on its
	// host (Host: kernels issued slower than they run, and the
	// dispatcher's synchronizations), per step (part of Compute).
	HostExposed float64 `json:"host_exposed_s,omitempty"`
	// HostStages is each pipeline device's host against its GPU, per
	// micro-batch (Evaluate fills it; the search does not).
	HostStages []StageHost `json:"host_stages,omitempty"`
	// OutputLayer is the most the output layer's phases (the last
	// pipeline device's final norm, output GEMMs and loss, forward and
	// backward) add to Step: their time a micro-batch times M + 1, each
	// of the M micro-batches on the busiest device and one more through
	// the pipeline's fill and drain. A switch of the output layer alone
	// (fp8-output-proj) can take no more off Step. Not written.
	OutputLayer float64 `json:"-"`
	// MemoryByKind splits Memory: weights, gradients, optimizer state and
	// activations, bytes.
	Weights     int64 `json:"weights_bytes"`
	Grads       int64 `json:"grads_bytes"`
	OptState    int64 `json:"optimizer_state_bytes"`
	Activations int64 `json:"activations_bytes"`
	// MemoryParts is Memory by named part, and beside them the parts
	// held outside the allocator (Outside); Capacity is the GPU's
	// memory and Usable what the allocator may hold of it at the pod's
	// margin: Fits is Memory (Judged where set) within Usable.
	MemoryParts []plan.MemoryPart `json:"memory_parts,omitempty"`
	// Judged is the caching allocator's simulated reservation where the
	// verdict weighed it against Usable (memory.Peak's Reserved, where
	// the replay could change the verdict and it reserves more than
	// Memory); 0 where the verdict weighed Memory, the tensors' count.
	Judged   int64 `json:"judged_bytes,omitempty"`
	Capacity int64 `json:"capacity_bytes,omitempty"`
	Usable   int64 `json:"usable_bytes,omitempty"`
	// MemoryMargin is the share of Capacity kept free (Pod.MemoryMargin).
	MemoryMargin float64 `json:"memory_margin,omitempty"`
	// Allocator is what PyTorch's caching allocator reserves for Memory's
	// tensors, simulated on each stage's allocation trace (WithAllocator
	// fills it; Evaluate and the search do not).
	Allocator *memory.AllocatorPeak `json:"allocator,omitempty"`
	// Sources says which figures a profile measured or composed and
	// which the roofline modelled (nil: no profile, all modelled).
	Sources *Sources `json:"sources,omitempty"`
	// LayerForward and LayerBackward are one transformer block's kernels
	// on one GPU for one micro-batch (its tensor-parallel shard, its
	// recomputation included, no communication): what one GPU measures
	// running the block alone (tools/measure/layerbench).
	LayerForward  float64 `json:"layer_forward_s"`
	LayerBackward float64 `json:"layer_backward_s"`
	// LayerCosting says how a dense layer was costed where an eager
	// stack costs it from its ATen ops (EagerCosting; "": placer's fused
	// kernels).
	LayerCosting string `json:"layer_costing,omitempty"`
}

// String is a plan's one-line summary.
func (r Result) String() string {
	return fmt.Sprintf("%s: %.3f s, %.1f TFLOP/s per GPU, MFU %.1f%%, %.1f GB per GPU", r.Plan, r.Step, r.TFLOPs, 100*r.MFU, float64(r.Memory)/1e9)
}

// StageHost is one pipeline device's host against its GPU for one
// micro-batch (cost.StageHost; Result's HostStages).
type StageHost = cost.StageHost
