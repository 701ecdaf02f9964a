package profile

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/placer/placer/graph/transformer"
)

// Source is where a figure came from (DESIGN §13).
type Source int

const (
	// Modelled: nothing measured answered; the roofline did.
	Modelled Source = iota
	// Composed: from measured neighbours by a written rule (another
	// micro-batch or sequence, another message size, across nodes).
	Composed
	// Measured: this shape was timed on this machine.
	Measured
)

func (s Source) String() string {
	switch s {
	case Measured:
		return "measured"
	case Composed:
		return "composed"
	}
	return "modelled"
}

// MarshalText writes the source's name.
func (s Source) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Least is the weaker of two sources: a figure summed from a measured
// and a modelled part is modelled in part, and says so.
func Least(a, b Source) Source { return min(a, b) }

// Check refuses a profile that cannot price model m on a device named
// gpu (a pod's hardware: "h100", "cpu"): a profile of another model
// (its layer's shape differs) or of another device. Its errors are one
// line naming what differs.
func (p *Profile) Check(m transformer.Spec, gpu string) error {
	q := p.spec
	type field struct {
		name     string
		got, run int
	}
	for _, f := range []field{{"hidden", q.Hidden, m.Hidden}, {"heads", q.Heads, m.Heads}, {"kv_heads", q.KVHeads, m.KVHeads},
		{"ffn", q.FFN, m.FFN}, {"head_dim", q.HeadDim(), m.HeadDim()}, {"vocab", q.Vocab, m.Vocab},
		{"experts", q.Experts, m.Experts}, {"topk", q.TopK, m.TopK}, {"expert_ffn", q.ExpertFFN, m.ExpertFFN},
		{"window", q.Window, m.Window}, {"window_every", windowEvery(q), windowEvery(m)},
		{"global_every", q.GlobalEvery, m.GlobalEvery}, {"chunk", q.Chunk, m.Chunk}, {"norms", q.NormsPerBlock(), m.NormsPerBlock()}} {
		if f.got != f.run {
			return fmt.Errorf("profile of another model: %s %d, the workload's %d (profile %s; workload %s)", f.name, f.got, f.run, q, m)
		}
	}
	if q.Family != m.Family || q.Act != m.Act {
		return fmt.Errorf("profile of another model: family %s%s, the workload's %s%s", q.Family, actName(q), m.Family, actName(m))
	}
	if err := checkLatent(q, m); err != nil {
		return err
	}
	if !p.OfDevice(gpu) {
		return fmt.Errorf("profile of another device: %s %q (%s, torch %s), the run's %s", p.Device.Kind, p.Device.Name, p.Software.Backend, p.Software.Torch, gpu)
	}
	return nil
}

// OfDevice is whether the profile ran on the device named gpu: a CPU
// profile for "cpu" (or the CPU's own name), a GPU profile whose name
// holds gpu's ("h100" in "NVIDIA H100 80GB HBM3") but not as a Grace
// superchip's GPU's ("b200" is not "NVIDIA GB200", whose own name is
// "gb200": another part, at another power limit and memory).
func (p *Profile) OfDevice(gpu string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "")) }
	g := norm(gpu)
	if g == "" {
		return false
	}
	if p.Device.Kind == "cpu" {
		return g == "cpu" || g == norm(p.Device.Name)
	}
	n := norm(p.Device.Name)
	return strings.Contains(n, g) && (strings.HasPrefix(g, "g") || !strings.Contains(n, "g"+g))
}

// Shape is a layer's shard shape as a lookup asks for it.
type Shape struct {
	TP        int
	SP        bool
	EP        int // expert parallelism (0 or 1: none)
	ETP       int // expert tensor parallelism (0 or 1: none)
	MBS, Seq  int
	Recompute bool // full recomputation
	// Selective is Megatron-Core's selective recomputation of the
	// attention core (core_attn) alone; not with Recompute.
	Selective bool
	// FP8 is the layer's FP8 recipe ("" none): only layers measured
	// under it answer (Layer.FP8). The embedding and the loss run no
	// recipe: their lookups drop it.
	FP8 string
}

func (l Layer) full() bool { return l.Recompute == "full" }

func (l Layer) selective() bool { return l.Recompute == "selective" }

func (l Layer) ep() int { return max(1, l.EP) }

func (l Layer) etp() int { return max(1, l.ETP) }

// Layer is the forward and backward of one layer at shape s: measured,
// composed (Compose's rules) or, with Modelled, nothing.
func (p *Profile) Layer(s Shape) (fwd, bwd float64, src Source) { return compose(own(p.Layers), s) }

// Embedding is the embedding's forward and backward at s (Layer's rules).
func (p *Profile) EmbeddingAt(s Shape) (fwd, bwd float64, src Source) {
	s.Recompute, s.Selective, s.EP, s.ETP = false, false, 0, 0
	s.FP8 = ""
	return compose(p.Embedding, s)
}

// LossAt is the output layer's and the loss's forward and backward at
// s (Layer's rules).
func (p *Profile) LossAt(s Shape) (fwd, bwd float64, src Source) {
	s.Recompute, s.Selective, s.EP, s.ETP = false, false, 0, 0
	s.FP8 = ""
	return compose(p.Loss, s)
}

// LayerInPlace is the forward and backward of one layer at shape s
// with its tensor-parallel collectives, timed in place (Layer's
// ForwardInPlace): Layer's rules over the shapes timed so; Modelled
// where none answers (tp 1 has none).
func (p *Profile) LayerInPlace(s Shape) (fwd, bwd float64, src Source) {
	return compose(inPlace(own(p.Layers)), s)
}

// EmbeddingInPlace is EmbeddingAt's with its collectives in place.
func (p *Profile) EmbeddingInPlace(s Shape) (fwd, bwd float64, src Source) {
	s.Recompute, s.Selective, s.EP, s.ETP = false, false, 0, 0
	s.FP8 = ""
	return compose(inPlace(p.Embedding), s)
}

// LossInPlace is LossAt's with its collectives in place.
func (p *Profile) LossInPlace(s Shape) (fwd, bwd float64, src Source) {
	s.Recompute, s.Selective, s.EP, s.ETP = false, false, 0, 0
	s.FP8 = ""
	return compose(inPlace(p.Loss), s)
}

// inPlace is the shapes of ls timed in place, their in-place times as
// their times.
func inPlace(ls []Layer) []Layer {
	var out []Layer
	for _, l := range ls {
		if l.ForwardInPlace > 0 {
			l.Forward, l.Backward = l.ForwardInPlace, l.BackwardInPlace
			out = append(out, l)
		}
	}
	return out
}

// compose answers shape s from ls by these rules, in order, over the
// layers of s's FP8 recipe alone (none, or the one it names: another
// recipe's times are not s's):
//  1. a layer of s's shape: measured;
//  2. layers of s's degree, sequence parallelism and recomputation:
//     composed linearly in tokens (micro-batch x sequence) between the
//     two measured around s's, preferring those of s's sequence (a
//     layer's GEMMs and element-wise kernels are linear in tokens; its
//     attention is linear in the micro-batch but not in the sequence),
//     or proportionally to tokens from the nearest where s lies outside
//     them;
//  3. the other recomputation setting at s (by rules 1-2): full
//     recomputation's backward is the backward without it plus one
//     forward (what it runs again), and the other way round;
//  4. else nothing: modelled.
func compose(ls []Layer, s Shape) (fwd, bwd float64, src Source) {
	if f, b, src := composeOne(ls, s); src != Modelled || s.Selective {
		// Selective recomputation is measured or composed in tokens
		// from its own shapes: no rule gives it from the others.
		return f, b, src
	}
	other := s
	other.Recompute = !s.Recompute
	f, b, src := composeOne(ls, other)
	if src == Modelled {
		return 0, 0, Modelled
	}
	if s.Recompute {
		return f, b + f, Composed
	}
	if b-f <= 0 {
		return 0, 0, Modelled
	}
	return f, b - f, Composed
}

func composeOne(ls []Layer, s Shape) (fwd, bwd float64, src Source) {
	var same, seq []Layer
	for _, l := range ls {
		if l.TP != s.TP || l.SP != s.SP || l.ep() != max(1, s.EP) || l.etp() != max(1, s.ETP) || l.full() != s.Recompute || l.selective() != s.Selective {
			continue
		}
		if l.FP8 != s.FP8 {
			continue
		}
		if l.MBS == s.MBS && l.Seq == s.Seq {
			return l.Forward, l.Backward, Measured
		}
		same = append(same, l)
		if l.Seq == s.Seq {
			seq = append(seq, l)
		}
	}
	if len(seq) > 0 {
		same = seq
	}
	if len(same) == 0 {
		return 0, 0, Modelled
	}
	t := float64(s.MBS) * float64(s.Seq)
	f, b := inTokens(same, t)
	return f, b, Composed
}

// inTokens is the forward and backward at t tokens from ls (none of
// them at t): linear between the nearest below and above t, else
// proportional to tokens from the nearest.
func inTokens(ls []Layer, t float64) (fwd, bwd float64) {
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].Tokens() < ls[j].Tokens() })
	var lo, hi *Layer
	for i := range ls {
		if ls[i].Tokens() <= t {
			lo = &ls[i]
		}
		if ls[i].Tokens() >= t && hi == nil {
			hi = &ls[i]
		}
	}
	switch {
	case lo != nil && hi != nil && hi.Tokens() > lo.Tokens():
		w := (t - lo.Tokens()) / (hi.Tokens() - lo.Tokens())
		return lo.Forward + w*(hi.Forward-lo.Forward), lo.Backward + w*(hi.Backward-lo.Backward)
	case lo != nil:
		k := t / lo.Tokens()
		return lo.Forward * k, lo.Backward * k
	default:
		k := t / hi.Tokens()
		return hi.Forward * k, hi.Backward * k
	}
}

// CollectiveTime is collective op of bytes over group processes of one
// node: measured where that size was timed; composed between two sizes
// timed of the same op and group (linear in bytes: a latency and a
// bandwidth), above the largest at the bandwidth of the two largest,
// below the smallest at the smallest's time (latency-bound); else
// Modelled.
func (p *Profile) CollectiveTime(op string, group int, bytes float64) (float64, Source) {
	return p.collectiveTime(op, "", group, bytes)
}

// CollectiveTimeWire is CollectiveTime from the collectives timed on
// wire (WireFP32: an FP32 profile's gradients and weights, uncast),
// or, where the profile timed none of op and group on it (every GPU
// profile, and CPU profiles written before 2026-11-27), from the
// activations' (CollectiveTime).
func (p *Profile) CollectiveTimeWire(op, wire string, group int, bytes float64) (float64, Source) {
	if t, src := p.collectiveTime(op, wire, group, bytes); src != Modelled {
		return t, src
	}
	return p.collectiveTime(op, "", group, bytes)
}

func (p *Profile) collectiveTime(op, wire string, group int, bytes float64) (float64, Source) {
	var pts []Collective
	for _, c := range p.Collectives {
		if c.Op == op && c.Group == group && c.Wire == wire {
			if c.Bytes == bytes {
				return c.Seconds, Measured
			}
			pts = append(pts, c)
		}
	}
	if len(pts) == 0 {
		return 0, Modelled
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].Bytes < pts[j].Bytes })
	if bytes <= pts[0].Bytes {
		return pts[0].Seconds, Composed
	}
	n := len(pts)
	for i := 1; i < n; i++ {
		if bytes <= pts[i].Bytes {
			a, b := pts[i-1], pts[i]
			w := (bytes - a.Bytes) / (b.Bytes - a.Bytes)
			return a.Seconds + w*(b.Seconds-a.Seconds), Composed
		}
	}
	top := pts[n-1]
	if n == 1 {
		return top.Seconds * bytes / top.Bytes, Composed
	}
	prev := pts[n-2]
	slope := (top.Seconds - prev.Seconds) / (top.Bytes - prev.Bytes)
	if !(slope > 0) || math.IsInf(slope, 0) {
		slope = top.Seconds / top.Bytes
	}
	return top.Seconds + slope*(bytes-top.Bytes), Composed
}

// OptimizerTime is the optimizer's step over params parameters: the
// measured step's time per parameter times params (composed; measured
// where params is the count timed); false without a timed step.
func (p *Profile) OptimizerTime(params float64) (float64, Source) {
	o := p.Optimizer
	if o == nil {
		return 0, Modelled
	}
	if params == float64(o.Params) {
		return o.Seconds, Measured
	}
	return o.PerParam() * params, Composed
}

// actName is m's MLP activation where it is not its family's.
func actName(m transformer.Spec) string {
	if m.Act == "" {
		return ""
	}
	return " (act=" + m.Act + ")"
}

// windowEvery is how often m's layers attend through its sliding window
// (every window_every-th; 1 where window_every is 0), 0 without one: a
// windowed layer costs less than a causal one, so a profile prices only
// the windows it measured.
func windowEvery(m transformer.Spec) int {
	if m.Window == 0 {
		return 0
	}
	return max(1, m.WindowEvery)
}
