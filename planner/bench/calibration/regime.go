package calibration

import (
	"fmt"
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// A Regime is a class of plans whose predictions share an error, by five
// facts every plan has, chosen before the bench's errors were read, each
// for a mechanism placer prices apart:
//
//   - Kind: dense pretraining, MoE (a model with experts: routing,
//     all-to-alls, grouped GEMMs) or LoRA fine-tuning (a frozen base, the
//     adapters' small GEMMs, no optimizer over the base).
//   - Gen: the GPU's generation, Ampere, Hopper, Blackwell (each its own
//     kernels' efficiencies and fabric), else "other".
//   - Stack: the code base's family, Megatron-Core's fused kernels
//     (Megatron-LM, NeMo, Megatron-Bridge: placer's default stack) or
//     eager PyTorch (torchtitan, plain PyTorch, transformers: layers
//     costed from their ATen ops).
//   - Scale: the GPU count, up to 64 (eight 8-GPU servers: few
//     inter-node hops), 65 to 1,024, above 1,024 (thousands of GPUs, where
//     the data-parallel and pipeline traffic crosses the most switches).
//   - Seq: "long" where the plan splits the sequence (context
//     parallelism) or runs sequences of 16,384 tokens or more (attention's
//     share of the step grows with it), else "short".
//
// A coarser regime leaves some facts out ("": any); the whole bench
// leaves out all.
type Regime struct {
	Kind  string `json:"kind,omitempty"`
	Gen   string `json:"gpu_generation,omitempty"`
	Stack string `json:"stack,omitempty"`
	Scale string `json:"scale,omitempty"`
	Seq   string `json:"sequence,omitempty"`
}

// The facts' values.
const (
	KindDense = "dense"
	KindMoE   = "moe"
	KindLoRA  = "lora"

	GenAmpere    = "ampere"
	GenHopper    = "hopper"
	GenBlackwell = "blackwell"
	GenOther     = "other"

	StackMegatron = "megatron"
	StackPyTorch  = "pytorch"

	ScaleSmall  = "<=64"
	ScaleMedium = "65-1024"
	ScaleLarge  = ">1024"

	SeqShort = "short"
	SeqLong  = "long"
)

// LongSequence is the sequence length from which a plan is "long"
// without context parallelism.
const LongSequence = 16384

// generations maps a GPU's name up to its first "-" (plan.Pod's
// Hardware.Name: h100-96gb is an h100) to its generation.
var generations = map[string]string{
	"a100": GenAmpere, "a800": GenAmpere,
	"h100": GenHopper, "h200": GenHopper, "h800": GenHopper, "gh200": GenHopper,
	"b200": GenBlackwell, "b300": GenBlackwell, "gb200": GenBlackwell, "gb300": GenBlackwell,
}

// Generation is the generation of a GPU named hw (GenOther where none
// is known: a CPU, an L40S).
func Generation(hw string) string {
	name, _, _ := strings.Cut(strings.ToLower(hw), "-")
	if g, ok := generations[name]; ok {
		return g
	}
	return GenOther
}

// ScaleOf is the scale band of a plan on gpus GPUs.
func ScaleOf(gpus int) string {
	switch {
	case gpus <= 64:
		return ScaleSmall
	case gpus <= 1024:
		return ScaleMedium
	}
	return ScaleLarge
}

// RegimeOf is the regime of plan s of model m on pod p.
func RegimeOf(m transformer.Spec, s plan.Strategy, p plan.Pod) Regime {
	r := Regime{Kind: KindDense, Gen: Generation(p.Hardware.Name), Stack: StackMegatron, Scale: ScaleOf(p.GPUs()), Seq: SeqShort}
	switch {
	case s.FineTune.LoRA():
		r.Kind = KindLoRA
	case m.MoE():
		r.Kind = KindMoE
	}
	if s.Software.Settings().Eager {
		r.Stack = StackPyTorch
	}
	if s.ContextDegree() > 1 || m.Seq >= LongSequence {
		r.Seq = SeqLong
	}
	return r
}

// Levels are r and its coarser regimes, nearest first: without the
// sequence band, then without the scale band, the stack, the GPU's
// generation, and last the whole bench (every fact left out). The order
// drops first what placer's mechanisms cover most continuously (the
// sequence and the GPU count enter every cost as numbers), last what
// switches mechanisms on and off (the kind of training).
func (r Regime) Levels() []Regime {
	out := []Regime{r}
	for _, drop := range []func(*Regime){
		func(x *Regime) { x.Seq = "" }, func(x *Regime) { x.Scale = "" }, func(x *Regime) { x.Stack = "" },
		func(x *Regime) { x.Gen = "" }, func(x *Regime) { x.Kind = "" },
	} {
		drop(&r)
		out = append(out, r)
	}
	return out
}

// Whole says r is the whole bench (every fact left out).
func (r Regime) Whole() bool { return r == Regime{} }

// Contains says plan regime x is in r: every fact r names, x has.
func (r Regime) Contains(x Regime) bool {
	in := func(a, b string) bool { return a == "" || a == b }
	return in(r.Kind, x.Kind) && in(r.Gen, x.Gen) && in(r.Stack, x.Stack) && in(r.Scale, x.Scale) && in(r.Seq, x.Seq)
}

// String is the regime as a user reads it: "dense, Hopper, Megatron-Core,
// 65-1024 GPUs, short sequence"; "whole bench" for the whole.
func (r Regime) String() string {
	if r.Whole() {
		return "whole bench"
	}
	var parts []string
	add := func(v string, names map[string]string) {
		if v != "" {
			parts = append(parts, names[v])
		}
	}
	add(r.Kind, map[string]string{KindDense: "dense", KindMoE: "MoE", KindLoRA: "LoRA fine-tuning"})
	add(r.Gen, map[string]string{GenAmpere: "Ampere", GenHopper: "Hopper", GenBlackwell: "Blackwell", GenOther: "other GPU"})
	add(r.Stack, map[string]string{StackMegatron: "Megatron-Core", StackPyTorch: "PyTorch eager"})
	if r.Scale != "" {
		parts = append(parts, r.Scale+" GPUs")
	}
	add(r.Seq, map[string]string{SeqShort: "short sequence", SeqLong: "long sequence"})
	return strings.Join(parts, ", ")
}

// Key is r as one word a table's cell can hold ("dense/hopper/megatron/
// <=64/short", "*" where a fact is left out).
func (r Regime) Key() string {
	or := func(s string) string {
		if s == "" {
			return "*"
		}
		return s
	}
	return fmt.Sprintf("%s/%s/%s/%s/%s", or(r.Kind), or(r.Gen), or(r.Stack), or(r.Scale), or(r.Seq))
}
