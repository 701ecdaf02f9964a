package calibration

import (
	"strings"

	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// Facts are the facts of a plan by which the bench's reach is judged
// (DESIGN.md §14, "The bench's reach"): whole families of runs that share one of them are left out
// together, and a plan whose fact no development row shares is outside
// the bench on it.
//
//   - CodeBase: the code whose run the plan is, its stack's name less a
//     release ("megatron-core" for placer's default stack: NeMo's and
//     Megatron-LM's MLPerf runs; "megatron-bridge", "torchtitan",
//     "nvidia-bert-mlperf", "model-zoo-moe-dev", "torch-eager", ...);
//   - Gen: the GPU's generation (Regime.Gen); a GPU of no known
//     generation its own ("other:l40s");
//   - Kind: dense pretraining, MoE or LoRA (Regime.Kind);
//   - Host: the CPU that issues the kernels, "grace" on the NVL72 racks
//     and GH200 (Arm Neoverse V2), else "x86";
//   - Seq: the sequence band (Regime.Seq).
type Facts struct {
	CodeBase string `json:"code_base"`
	Gen      string `json:"gpu_generation"`
	Kind     string `json:"kind"`
	Host     string `json:"host"`
	Seq      string `json:"sequence"`
}

// The hosts.
const (
	HostGrace = "grace"
	HostX86   = "x86"
)

// HostOf is the host CPU of a GPU named hw: Grace on the Grace
// superchips (gb200, gb300, gh200), x86 on every other.
func HostOf(hw string) string {
	name, _, _ := strings.Cut(strings.ToLower(hw), "-")
	if strings.HasPrefix(name, "gb") || strings.HasPrefix(name, "gh") {
		return HostGrace
	}
	return HostX86
}

// FactsOf is the facts of plan s of model m on pod p.
func FactsOf(m transformer.Spec, s plan.Strategy, p plan.Pod) Facts {
	g := RegimeOf(m, s, p)
	gen := g.Gen
	if gen == GenOther {
		// A GPU of no known generation is its own family (an L40S is
		// not an MI300X).
		name, _, _ := strings.Cut(strings.ToLower(p.Hardware.Name), "-")
		gen = GenOther + ":" + name
	}
	return Facts{CodeBase: CodeBaseOf(s.Software.Stack), Gen: gen, Kind: g.Kind, Host: HostOf(p.Hardware.Name), Seq: g.Seq}
}

// A Way is one way of leaving out a family of runs: one fact, or two
// together (a kind of run on a GPU generation).
type Way struct {
	Name string
	// Of are the single ways (indices in Ways) a pair is made of; none
	// for a single fact.
	Of []int
	// Key is a row's family by this way.
	Key func(Facts) string
	// Says is a family's phrase after "no development run": "on a
	// Grace host", "of LoRA on Blackwell".
	Says func(Facts) string
}

var (
	kindWord = map[string]string{KindDense: "dense pretraining", KindMoE: "MoE", KindLoRA: "LoRA"}
	genWord  = map[string]string{GenAmpere: "Ampere", GenHopper: "Hopper", GenBlackwell: "Blackwell"}
	seqWord  = map[string]string{SeqShort: "a short sequence", SeqLong: "a long sequence (context parallel or 16,384 tokens or more)"}
	hostWord = map[string]string{HostGrace: "a Grace host", HostX86: "an x86 host"}
)

// genName is a generation as a phrase names it: "Blackwell", "the
// mi300x" for a GPU of no known generation.
func genName(g string) string {
	if n, ok := genWord[g]; ok {
		return n
	}
	return "the " + strings.TrimPrefix(g, GenOther+":")
}

// Ways are the ways of leaving out a family: each fact alone, and the
// kind of run on a GPU generation, on a host and in a code base.
var Ways = []Way{
	{"code base", nil, func(f Facts) string { return f.CodeBase }, func(f Facts) string { return "in the code base " + f.CodeBase }},
	{"GPU generation", nil, func(f Facts) string { return f.Gen }, func(f Facts) string { return "on " + genName(f.Gen) }},
	{"kind of run", nil, func(f Facts) string { return f.Kind }, func(f Facts) string { return "of " + kindWord[f.Kind] }},
	{"host CPU", nil, func(f Facts) string { return f.Host }, func(f Facts) string { return "on " + hostWord[f.Host] }},
	{"sequence band", nil, func(f Facts) string { return f.Seq }, func(f Facts) string { return "at " + seqWord[f.Seq] }},
	{"kind x GPU generation", []int{2, 1}, func(f Facts) string { return f.Kind + "/" + f.Gen }, func(f Facts) string { return "of " + kindWord[f.Kind] + " on " + genName(f.Gen) }},
	{"kind x host CPU", []int{2, 3}, func(f Facts) string { return f.Kind + "/" + f.Host }, func(f Facts) string { return "of " + kindWord[f.Kind] + " on " + hostWord[f.Host] }},
	{"kind x code base", []int{2, 0}, func(f Facts) string { return f.Kind + "/" + f.CodeBase }, func(f Facts) string { return "of " + kindWord[f.Kind] + " in the code base " + f.CodeBase }},
}
