package calibration

import (
	"fmt"
	"strings"
	"unicode"

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
//   - CodeBase: the code whose run the plan is (Facts.CodeBase:
//     "megatron-core", "torchtitan", "nanotron", ...). Two code bases of
//     one stack family run one model through different code (their own
//     data-parallel reduction, pipeline engine and tensor-parallel
//     linears), so a code base whose development rows are enough
//     (OwnCodeBaseRows) states its error from its own rows, and one
//     code base's errors do not widen another's regime.
//
// A coarser regime leaves some facts out ("": any); the whole bench
// leaves out all.
type Regime struct {
	Kind     string `json:"kind,omitempty"`
	Gen      string `json:"gpu_generation,omitempty"`
	Stack    string `json:"stack,omitempty"`
	Scale    string `json:"scale,omitempty"`
	Seq      string `json:"sequence,omitempty"`
	CodeBase string `json:"code_base,omitempty"`
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
	r := Regime{Kind: KindDense, Gen: Generation(p.Hardware.Name), Stack: StackMegatron, Scale: ScaleOf(p.GPUs()), Seq: SeqShort,
		CodeBase: CodeBaseOf(s.Software.Stack)}
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

// Levels are r and its coarser regimes, nearest first. First r's own
// code base's (its rows alone, which Table.ForRegime takes only where they are
// at least OwnCodeBaseRows): r, then without the sequence band, then
// without the scale band. Then over every code base: r, without the
// sequence band, then without the scale band, the stack, the GPU's
// generation, and last the whole bench (every fact left out). The order
// drops first what placer's mechanisms cover most continuously (the
// sequence and the GPU count enter every cost as numbers), last what
// switches mechanisms on and off (the kind of training). A code base's
// own levels stop before the stack: its rows on another GPU generation
// or stack say less of a plan than every code base's rows on the plan's
// own (torchtitan's A100 rows, off by at most 5%, would state the 25% of
// its Hopper rows).
func (r Regime) Levels() []Regime {
	var out []Regime
	if r.CodeBase != "" {
		own := r
		out = append(out, own)
		own.Seq = ""
		out = append(out, own)
		own.Scale = ""
		out = append(out, own)
	}
	r.CodeBase = ""
	out = append(out, r)
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
	return in(r.Kind, x.Kind) && in(r.Gen, x.Gen) && in(r.Stack, x.Stack) && in(r.Scale, x.Scale) && in(r.Seq, x.Seq) &&
		in(r.CodeBase, x.CodeBase)
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
	if r.CodeBase != "" {
		parts = append(parts, "in "+r.CodeBase)
	}
	return strings.Join(parts, ", ")
}

// Key is r as one word a table's cell can hold ("dense/hopper/megatron/
// <=64/short/megatron-core", "*" where a fact is left out).
func (r Regime) Key() string {
	or := func(s string) string {
		if s == "" {
			return "*"
		}
		return s
	}
	return fmt.Sprintf("%s/%s/%s/%s/%s/%s", or(r.Kind), or(r.Gen), or(r.Stack), or(r.Scale), or(r.Seq), or(r.CodeBase))
}

// OwnCodeBaseRows is how many development rows (predicted) a level of
// one code base needs before it states its own error: 9, the fewest a
// 90th percentile is drawn from (Quantile). Chosen on the development
// part: leaving one sweep out, 9, 12, 15 and 20 held 84.8%, 85.0%, 86.7%
// and 85.5% of the rows, no threshold reliably better, while each step
// up sent more of the bench's own code bases' plans to a coarser, wider
// level of their own (at 15, LoRA on Blackwell in Megatron-Core from ±8%
// to ±17%; at 20, LoRA on Hopper from ±6% to ±18%).
const OwnCodeBaseRows = 9

// CodeBaseOf is the code base of a stack named name ("" : placer's
// default stack, Megatron-Core's): the name less a trailing release
// ("megatron-bridge-25.11" is "megatron-bridge", "torchtitan-0.2"
// "torchtitan").
func CodeBaseOf(name string) string {
	if name == "" || name == "default" {
		return "megatron-core"
	}
	parts := strings.Split(name, "-")
	for len(parts) > 1 {
		last := parts[len(parts)-1]
		if last == "" || !unicode.IsDigit(rune(last[0])) {
			break
		}
		parts = parts[:len(parts)-1]
	}
	return strings.Join(parts, "-")
}
