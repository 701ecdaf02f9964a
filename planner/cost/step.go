package cost

import (
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// The step-level extension points: where a mechanism changes a step
// beyond its layers (its optimizer, the copies a sharded data
// parallelism runs, what a collective beside the compute takes from it,
// the host's issue, the clock a power limit holds). They see a step as
// the composition (planner) assembles it, through two views of
// its own: a pipeline device's Stage and the step's Breakdown.

// Stage is one pipeline device of a step as a step-level mechanism sees
// it: its place in the pipeline (Index, 0 the first), its forward and
// backward per micro-batch over all its chunks, their SM-bound parts
// (FwdSM, BwdSM: what a collective beside them slows, a Contention's;
// 0 where none is known), and what one of its GPUs holds: its
// parameters (Params), of them the experts' and the blocks' (Layers:
// the experts, the dense layers and the multi-token-prediction modules,
// not the embedding and the output layer), and those that get gradients
// and optimizer state (Trained: the adapters' under LoRA, else Params).
type Stage struct {
	Index                            int
	Fwd, Bwd                         Phase
	FwdSM, BwdSM                     float64
	Params, Experts, Layers, Trained float64
}

// Breakdown is where a step's time goes, seconds (planner's
// Result: its step, the busiest device's compute, the pipeline's bubble,
// the exposed data-parallel communication, the tied embedding's
// all-reduce, the optimizer's step, the tensor-, context- and
// expert-parallel communication and the host's waits exposed in the
// compute, and one block's forward and backward alone), and its model
// TFLOP/s per GPU and MFU.
type Breakdown struct {
	Step, Compute, Bubble, DPExposed, Embedding, Optimizer float64
	TPExposed, CPExposed, EPExposed, HostExposed           float64
	LayerForward, LayerBackward                            float64
	TFLOPs, MFU                                            float64
}

// Window is phase ph as a span of compute a collective runs beside: sm
// of it SM-bound (Stage's FwdSM, BwdSM), and its idle part, the host's
// waits and the communication exposed in it.
func Window(ph Phase, sm float64) plan.Window {
	return plan.Window{Busy: ph.Busy, Compute: min(sm, ph.Busy), Idle: ph.HostExposed + ph.TPExposed + ph.CPExposed + ph.EPExposed}
}

// BwdWindow is stage st's backward per micro-batch as a Window.
func (st *Stage) BwdWindow() plan.Window { return Window(st.Bwd, st.BwdSM) }

// DataParallel is the extension point of a step's data-parallel
// exchange where a stack's optimizer runs it otherwise than
// Megatron-Core's (each stage's gradients reduced beside its backward,
// the distributed optimizer's parameters gathered beside the next
// forward: planner's dpExposed): what it adds to the step of
// shard s over stages (every pipeline device), seconds. The first
// registered plug-in that implements it and prices the step is asked.
//
// Dispatch: Pricing.
type DataParallel interface {
	Plugin
	DPExposed(s *Shard, stages []Stage) float64
}

// StepClock is the extension point of the clock a step's compute runs
// at where pod p's power limit binds it: step held, priced at p's clock
// as it is, priced again at the clock its power allows, at pricing the
// step on another pod (p at another clock). A step it does not change
// comes back as held. The first registered plug-in that implements it
// is asked.
//
// Dispatch: First.
type StepClock interface {
	Plugin
	Clocked(p *plan.Pod, held Breakdown, at func(q *plan.Pod) Breakdown) Breakdown
}

// Optimizer is the extension point of a step's optimizer: its step on
// the most loaded device of stages (the step's, every pipeline device),
// seconds. The first registered plug-in that implements it and prices
// the step is asked (one optimizer a stack).
//
// Dispatch: Pricing.
type Optimizer interface {
	Plugin
	OptimizerStep(s *Shard, stages []Stage) float64
}

// StepKernels is the extension point of the kernels a mechanism runs
// once a step beside the optimizer's step on its most loaded device
// (the weights' casts of an FP8 recipe): t, the step's optimizer time so
// far, with its kernels added after it (t itself where it runs none).
// Each registered plug-in that implements it is asked, in the order
// registered.
//
// Dispatch: Each.
type StepKernels interface {
	Plugin
	StepKernels(s *Shard, stages []Stage, t float64) float64
}

// StageKernels is the extension point of the kernels a mechanism runs
// on a stage's compute stream beside its layers (FSDP2's copies): what
// it adds to stage st's forward and backward per micro-batch, asked of
// each registered plug-in that implements it and prices shard s (the
// stage's), in the order registered.
//
// Dispatch: EachPricing.
type StageKernels interface {
	Plugin
	StageKernels(s *Shard, st *Stage) (fwd, bwd Phase)
}

// HighPrecisionLayers is the extension point of a mechanism that runs
// some of a stage's transformer layers outside the plan's low-precision
// recipe (Megatron-Core's BF16 first and last layers): how many of
// stage i's layers (of shard s's plan) run with BF16 GEMMs and BF16
// weights (0: none). The framework costs those layers as the plan's
// layers are costed in BF16 (plan.Plan.InBF16) and the stage's memory
// likewise, a share of its layers each way. Asked of the first
// registered plug-in that implements it and prices shard s.
//
// Dispatch: Pricing.
type HighPrecisionLayers interface {
	Plugin
	HighPrecisionLayers(s *Shard, i int) int
}

// FSDP is the extension point of a fully sharded data parallelism that
// gathers and copies otherwise than Megatron-FSDP (every micro-batch all
// of a stage's parameters gathered beside its forward and again beside
// its backward, nothing copied beside them): the parameters of stage st
// it gathers forward and backward and how many times a step it gathers
// and reduces them (Gathers), and what it copies on its side streams
// beside the gathers and the reductions (SideCopies: for shard
// parameters one GPU holds sharded, lin of them the blocks' linear
// weights in linears linears). The first registered plug-in that
// implements it and prices the step is asked.
//
// Dispatch: Pricing.
type FSDP interface {
	Plugin
	Gathers(s *Shard, st *Stage) (fwd, bwd, times float64)
	SideCopies(s *Shard, shard, lin, linears float64) (gather, reduce plan.Comm)
}

// GatherWire is the extension point of the format FSDP's all-gather
// moves the parameters in: the bytes of n gathered parameters, lin of
// them the blocks' linear weights (Bytes), and how many linear weights a
// block gathers apart (Linears: the side copies' count of them). The
// first registered plug-in that implements it and prices the step is
// asked; without one every parameter goes in the pod's weight format
// and none apart.
//
// Dispatch: Pricing.
type GatherWire interface {
	Plugin
	Bytes(pl *plan.Plan, p *plan.Pod, n, lin float64) float64
	Linears() float64
}

// Contention is the extension point of what a collective run beside a
// stage's compute takes from it: whether a step runs one that it charges
// (its declaration, When), the pod a stage is costed again on to tell its SM-bound time
// from the rest (Slower: pod p at another clock), and the SM-bound part
// of a phase from its time on the pod (at) and on Slower's (SMBound:
// Stage's FwdSM and BwdSM). The first registered plug-in that implements
// it and prices the step is asked.
//
// Dispatch: Pricing.
type Contention interface {
	Plugin
	Slower(p *plan.Pod) plan.Pod
	SMBound(at, slower Phase) float64
}

// StepHost is the extension point of the host's waits once a step,
// beyond its layers' (Host's): what the GPU idles a step on host h while
// the host waits on the device outside the layers, seconds (a
// synchronization before a whole-step graph's replay). Each registered
// plug-in that implements it and prices shard s is asked; their waits
// add to the step's compute and to its host's exposed time.
//
// Dispatch: EachPricing.
type StepHost interface {
	Plugin
	StepWait(s *Shard, h *kernels.Host) float64
}

// Host is the extension point of the host that issues a step's kernels:
// phase ph, forward or backward (bwd), with the time the GPU waits on
// host h in it (Expose: in its Busy and HostExposed); the tail of steps
// a host issues after a device-to-host synchronization, with ahead
// seconds of kernels queued before it still to run (Drain); and stage
// st's host against its GPU (StageHost). The first registered plug-in
// that implements it is asked; without one the GPU never waits on its
// host.
//
// Dispatch: First.
type Host interface {
	Plugin
	Expose(h *kernels.Host, ph Phase, bwd bool) Phase
	Drain(h *kernels.Host, ahead float64, steps ...Phase) SyncTail
	StageHost(h *kernels.Host, st *Stage) StageHost
}

// StageHost is one pipeline device's host against its GPU for one
// micro-batch, forward and backward, seconds: the kernels' time (GPU,
// communication included, the host's wait left out), the host's (every
// launch issued at its rate, and the synchronizations), and how long the
// GPU waits on it (Exposed: Issue beyond GPU, and each
// synchronization's stall). Bound says the host's issue alone is longer
// than the kernels: the stage is host-bound, by Issue / GPU.
type StageHost struct {
	Stage    int     `json:"stage"`
	GPU      float64 `json:"gpu_s"`
	Issue    float64 `json:"host_s"`
	Exposed  float64 `json:"exposed_s"`
	Launches float64 `json:"launches"`
	Syncs    float64 `json:"syncs"`
	Bound    bool    `json:"host_bound"`
}
