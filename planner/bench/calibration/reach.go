package calibration

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

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

// excess is how far |x| is beyond the bound e states (0 within it).
func excess(e Error, x float64) float64 {
	if e.Rows == 0 {
		return math.Abs(x)
	}
	return max(0, math.Abs(x)-e.Bound)
}

// needed is the widening one family's rows needed, its excesses ex
// over the bound stated without it: their level quantile, or where the
// family has too few rows for it, the largest.
func needed(ex []float64, level float64) float64 {
	if b, ok := Quantile(ex, level); ok {
		return b
	}
	return slices.Max(append([]float64{0}, ex...))
}

// A family is the rows (indices) of one way's one fact.
type family struct {
	way  int
	key  string
	rows []int
}

// familiesOf are the families of every way among rows, in Ways' order
// and by key, each distinct set of rows once (nanotron's rows are the
// code base way's family "nanotron" and the kind x code base way's
// "dense/nanotron": one family, counted once), less a family of every
// row (left out, nothing is left to state its bound).
func familiesOf(rows []Row) []family {
	var out []family
	seen := map[string]bool{}
	for wi := range Ways {
		for _, f := range wayFamilies(rows, wi) {
			if id := fmt.Sprint(f.rows); !seen[id] && len(f.rows) < len(rows) {
				seen[id] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// split is rows less those at the indices in, and those.
func split(rows []Row, in []int) (rest, them []Row) {
	at := map[int]bool{}
	for _, i := range in {
		at[i] = true
	}
	for i, r := range rows {
		if at[i] {
			them = append(them, r)
		} else {
			rest = append(rest, r)
		}
	}
	return rest, them
}

// familyNeed is the widening family f's rows needed beyond the bound
// the other rows state (needed: the level quantile of their excesses,
// the largest where they are few); !ok where the other rows state no
// bound for any of them.
func familyNeed(rows []Row, f family, level float64) (float64, bool) {
	rest, them := split(rows, f.rows)
	t := newBounds(rest, level)
	var ex []float64
	for _, r := range them {
		if e := t.of(r.Regime); e.Rows > 0 {
			ex = append(ex, excess(e, r.Error))
		}
	}
	if len(ex) == 0 {
		return 0, false
	}
	return needed(ex, level), true
}

// Widening is the error measured on families left out: each family of
// every way among rows (each distinct set of rows once) left out in
// turn, the widening its rows needed beyond the bound stated from the
// other rows (familyNeed), and of these widenings their level quantile
// over the families (Quantile: the k-th smallest of n, k = ceil(level x
// (n+1))), the largest where the families are too few for it. One rule
// for every way: a way holds two to thirteen families, too few for a
// quantile of its own (with nine code bases the 90th percentile of
// eight left out is their largest), so the widening is drawn, as a
// regime with too few rows draws its error from a coarser one, from
// every way's families together. A plan outside the bench on any way
// states its regime's bound plus this.
func Widening(rows []Row, level float64) float64 {
	var needs []float64
	for _, f := range familiesOf(rows) {
		if n, ok := familyNeed(rows, f, level); ok {
			needs = append(needs, n)
		}
	}
	return needed(needs, level)
}

// FamilyCoverage is one family left out: its rows, how many fall within
// the bound stated without the family and widened by the widening
// measured without it, and how many within the bound unwidened.
type FamilyCoverage struct {
	Family     string  `json:"family"`
	Rows       int     `json:"rows"`
	Within     int     `json:"within"`
	Unwidened  int     `json:"within_unwidened"`
	Widening   float64 `json:"widening"`
	MeanStated float64 `json:"mean_stated_error"`
}

// WayCoverage is one way of leaving out: the widening of a plan
// outside the bench (Widening, one for every way), each family's
// coverage, and the median band its rows were stated.
type WayCoverage struct {
	Way          string           `json:"way"`
	Widening     float64          `json:"widening"`
	Rows         int              `json:"rows"`
	Within       int              `json:"within"`
	MedianStated float64          `json:"median_stated_error"`
	Families     []FamilyCoverage `json:"families"`
}

// LeaveFamilyOut is the development part's coverage by each way of
// leaving out: each family's rows against the error stated from the
// other families' rows, widened by the widening measured on those
// other rows alone (Widening of dev less the family: the family's own
// rows take no part in their band, neither in the regime's bound nor in
// the widening).
func LeaveFamilyOut(dev []Row, level float64) []WayCoverage {
	widening := Widening(dev, level)
	without := map[string]float64{} // Widening without a family, by its rows
	var out []WayCoverage
	for wi, w := range Ways {
		wc := WayCoverage{Way: w.Name, Widening: widening}
		var bands []float64
		for _, f := range wayFamilies(dev, wi) {
			rest, them := split(dev, f.rows)
			id := fmt.Sprint(f.rows)
			widen, ok := without[id]
			if !ok {
				widen = Widening(rest, level)
				without[id] = widen
			}
			t := newBounds(rest, level)
			fc := FamilyCoverage{Family: f.key, Widening: widen}
			for _, r := range them {
				e := t.of(r.Regime)
				fc.Rows++
				fc.MeanStated += e.Bound + widen
				bands = append(bands, e.Bound+widen)
				if e.Rows > 0 && math.Abs(r.Error) <= e.Bound+widen {
					fc.Within++
				}
				if e.Holds(r.Error) {
					fc.Unwidened++
				}
			}
			fc.MeanStated /= float64(fc.Rows)
			wc.Rows += fc.Rows
			wc.Within += fc.Within
			wc.Families = append(wc.Families, fc)
		}
		wc.MedianStated = median(bands)
		out = append(out, wc)
	}
	return out
}

// wayFamilies are way wi's families among rows, by key.
func wayFamilies(rows []Row, wi int) []family {
	by := map[string][]int{}
	for i, r := range rows {
		k := Ways[wi].Key(r.Facts)
		by[k] = append(by[k], i)
	}
	out := make([]family, 0, len(by))
	for k, idx := range by {
		out = append(out, family{way: wi, key: k, rows: idx})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// bounds are a table's bounds (Table.bound: no error of a difference),
// each regime's stated once.
type bounds struct {
	t  *Table
	by map[Regime]Error
}

func newBounds(rows []Row, level float64) *bounds {
	return &bounds{t: NewTable(rows, level), by: map[Regime]Error{}}
}

func (b *bounds) of(g Regime) Error {
	e, ok := b.by[g]
	if !ok {
		e, _ = b.t.bound(g)
		b.by[g] = e
	}
	return e
}

// median is the median of xs (0 where none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// Outside is a plan's facts that no development row shares, each by the
// way it is outside on, with the widening (Widening, one for every way).
type Outside struct {
	Way      string  `json:"way"`
	Says     string  `json:"says"`
	Widening float64 `json:"widening"`
}

// Reach is the development part's reach: the families each way holds
// and the widening of a plan outside them (Widening).
type Reach struct {
	families []map[string]bool
	widening float64
}

// NewReach is the reach of dev's rows (their errors known) at level.
func NewReach(dev []Row, level float64) *Reach {
	r := &Reach{widening: Widening(dev, level)}
	for _, w := range Ways {
		fams := map[string]bool{}
		for _, x := range dev {
			fams[w.Key(x.Facts)] = true
		}
		r.families = append(r.families, fams)
	}
	return r
}

// Outside is the ways plan facts f is outside the bench on ("no
// development run on a Grace host"), in Ways' order. A pair is named
// only where each of its facts is inside alone.
func (r *Reach) Outside(f Facts) []Outside {
	var out []Outside
	outside := make([]bool, len(Ways))
	for i, w := range Ways {
		outside[i] = !r.families[i][w.Key(f)]
		if !outside[i] || slices.ContainsFunc(w.Of, func(j int) bool { return outside[j] }) {
			continue
		}
		out = append(out, Outside{Way: w.Name, Says: "no development run " + w.Says(f), Widening: r.widening})
	}
	return out
}

// Widen is e widened for a plan outside the bench by out: its bound
// plus the largest widening of the ways it is outside on (each the
// same, Widening), each named.
func Widen(e Error, out []Outside) Error {
	if len(out) == 0 || e.Rows == 0 {
		return e
	}
	e.Outside = slices.Clone(out)
	most := 0.0
	for _, o := range out {
		most = max(most, o.Widening)
	}
	e.Widened = most
	e.Bound += most
	return e
}

// outsideText is the facts a widened error names, for its line: "; no
// development run on a Grace host; widened by 14 points, the error
// measured on families left out".
func outsideText(e Error) string {
	if len(e.Outside) == 0 {
		return ""
	}
	var says []string
	for _, o := range e.Outside {
		says = append(says, o.Says)
	}
	return fmt.Sprintf("; outside the bench: %s; widened by %.0f points, the error measured on families left out", strings.Join(says, ", "), 100*e.Widened)
}
