package published

import (
	"slices"
	"sort"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// Traits are what a published row must share with a plan to check it.
type Traits struct {
	// Precision is "bf16", or "fp8=" and the recipe (Strategy.FP8), or
	// "fp4=nvfp4".
	Precision string `json:"precision"`
	// Attention is the pod's fused attention kernel (its first measured
	// one: "cudnn", "flash"), "unfused" (Kernels.UnfusedAttention), or
	// "roofline" (fused, no measured kernel).
	Attention string `json:"attention"`
	// Layers is "fused" (a stack's fused kernels: Megatron-Core's,
	// torch.compile's) or "eager" (eager PyTorch's ATen ops: the stack's
	// Settings().Eager).
	Layers string `json:"layers"`
	// Family is "dense" or "moe" (a model with experts).
	Family string `json:"family"`
	// Parallel are the parallelisms in use, sorted: of cp, ep, fsdp,
	// pp, sp, tp, vp (Features' names).
	Parallel []string `json:"parallel"`
	GPUs     int      `json:"gpus"`
	Seq      int      `json:"seq"`
	// GPU is the GPU's generation: the hardware's name up to its first
	// "-" (h100 for grand-teton's h100-96gb; h800 is its own).
	GPU string `json:"gpu"`
}

// parallelFeatures are the Features that name a parallelism.
var parallelFeatures = []string{"cp", "ep", "fsdp", "pp", "sp", "tp", "vp"}

// TraitsOf are the traits of plan s of model m on pod p.
func TraitsOf(m transformer.Spec, s plan.Strategy, p plan.Pod) Traits {
	t := Traits{Precision: "bf16", Layers: "fused", Family: "dense", GPUs: p.GPUs(), Seq: m.Seq, Parallel: []string{}}
	if s.Software.Settings().Eager {
		t.Layers = "eager"
	}
	if s.FP8 != "" {
		t.Precision = plan.PrecisionKey(s.FP8)
	}
	if m.MoE() {
		t.Family = "moe"
	}
	for _, f := range Features(m, s) {
		if slices.Contains(parallelFeatures, f) {
			t.Parallel = append(t.Parallel, f)
		}
	}
	switch k := p.Kernels; {
	case k.UnfusedAttention:
		t.Attention = "unfused"
	case len(k.Attention) > 0:
		t.Attention = k.Attention[0].Backend
	default:
		t.Attention = "roofline"
	}
	t.GPU, _, _ = strings.Cut(p.Hardware.Name, "-")
	return t
}

// Features are the features of plan s of model m, sorted; the
// parallelisms among them are what a published row must share with it
// to check it (Traits.Parallel).
func Features(m transformer.Spec, s plan.Strategy) []string {
	var f []string
	add := func(ok bool, name string) {
		if ok {
			f = append(f, name)
		}
	}
	add(s.MaxTensor() > 1, "tp")
	add(s.MaxTensor() > 1 && s.SequenceParallel, "sp")
	add(s.TPOverlap, "tpoverlap")
	add(s.TensorStages != nil, "stage-tp")
	add(s.PipelineDegree() > 1, "pp")
	add(s.VirtualStages() > 1, "vp")
	add(s.ContextDegree() > 1, "cp")
	add(s.FSDP, "fsdp")
	add(s.DistOpt, "distopt")
	add(s.Recompute == plan.SelectiveRecompute, "recompute=selective")
	add(s.Recompute == plan.FullRecompute, "recompute=full")
	add(s.FP8 != "", plan.PrecisionKey(s.FP8))
	add(s.GradBF16, "grads=bf16")
	add(m.MoE(), "experts")
	add(m.MoE() && s.Experts > 1, "ep")
	add(m.MoE() && s.ExpertTensor > 1, "etp")
	add(s.EPOverlap, "epoverlap")
	add(m.MLA(), "mla")
	add(m.Window > 0, "window")
	add(m.MTP > 0, "mtp")
	// Gemma's GeGLU and post-norms and Nemotron's squared ReLU: no
	// checked row ran them.
	add(m.Act != "", "act="+m.Act)
	add(m.NormsPerBlock() > 2, "post-norms")
	add(m.Chunk > 0, "chunks")
	// The software settings where they differ from placer's default
	// stack (the MoE ones on a model with experts): a dispatcher, a
	// fusion or graphs no checked row ran are unchecked.
	run := s.Software.Settings()
	moe := m.MoE()
	add(moe && run.Dispatcher != plan.DispatcherAllToAll && !run.HybridEP, "dispatcher="+run.Dispatcher)
	add(moe && run.HybridEP, "dispatcher="+plan.DispatcherHybridEP)
	add(moe && run.UnfusedPermute, "permute-fusion=off")
	add(moe && run.UnfusedRouter, "router-fusion=off")
	add(moe && run.ExpertLoop, "grouped-gemm=off")
	add(moe && run.Capacity > 0, "routing=capacity")
	add(run.Graphs != plan.GraphsOff, "cuda-graphs="+run.Graphs)
	add(run.FusedLoss, "loss-fusion=on")
	// An eager stack's layers, dense and MoE, costed from their ATen
	// ops (eagerBlock, eagerMoE), and under autocast over FP32 weights:
	// unchecked until a published eager row holds.
	add(run.Eager, "layers=eager")
	add(run.Eager && run.FP32Weights, "autocast")
	sort.Strings(f)
	return f
}

// Tolerances of a published row counted as checked: predicted within
// this fraction of its figure.
const (
	CheckedDense = 0.10
	CheckedMoE   = 0.15
)

// CheckedRow is a published row as placer predicts it: where it comes
// from, what it ran and placer's error on it.
type CheckedRow struct {
	Source string `json:"source"` // the table or sweep, and the row
	Traits
	// Error is placer's prediction over the published figure, minus 1,
	// in the row's unit (tokens/s or TFLOP/s a GPU; seconds a step),
	// as placer report megatron and report sweeps count it, to four
	// decimals.
	Error float64 `json:"error"`
	// Fast says placer predicts the row faster than it was measured.
	Fast bool `json:"fast"`
	// Set is the row's published source set; OutOfSample and OutFast
	// are Error and Fast with the constants that set chose reset to
	// their values without it (WithoutSource; Error and Fast where it
	// chose none).
	Set         string  `json:"source_set"`
	OutOfSample float64 `json:"out_of_sample_error"`
	OutFast     bool    `json:"out_of_sample_fast"`
	// Regression cites the framework's tracker listing the row's figure
	// as a regression of its release (SweepRow.Regression): such a row
	// checks no plan, and a regime's error is said without it.
	Regression string `json:"regression,omitempty"`
	// Peak says the row's peak memory of a GPU is published
	// (SweepRow.PeakGiB); PeakError and PeakOutOfSample are placer's
	// peak over it, minus 1, of the kind published (reserved against
	// the caching allocator simulated, allocated against allocated), in
	// sample and with the constants its source set chose reset.
	Peak            bool    `json:"peak,omitempty"`
	PeakError       float64 `json:"peak_error,omitempty"`
	PeakOutOfSample float64 `json:"peak_out_of_sample_error,omitempty"`
}

// Tolerance is the error within which the row checks a plan:
// CheckedDense, or CheckedMoE with experts.
func (r CheckedRow) Tolerance() float64 {
	if r.Family == "moe" {
		return CheckedMoE
	}
	return CheckedDense
}

// The kinds of a RegimeError: measured on the rows the model was
// checked against (in-sample), or on rows whose source left the model's
// constants as they were without it (out-of-sample).
const (
	InSample    = "in-sample"
	OutOfSample = "out-of-sample"
)

// PrecisionName is a Traits.Precision as a user reads it: "BF16", "FP8
// current".
func PrecisionName(p string) string {
	if recipe, ok := strings.CutPrefix(p, "fp8="); ok {
		return "FP8 " + recipe
	}
	if recipe, ok := strings.CutPrefix(p, "fp4="); ok {
		return "FP4 " + recipe
	}
	return strings.ToUpper(p)
}

// parallelName is a set of parallelisms as a user reads it: "FSDP",
// "TP+SP+PP", "none".
func parallelName(ps []string) string {
	if len(ps) == 0 {
		return "none"
	}
	return strings.ToUpper(strings.Join(ps, "+"))
}
