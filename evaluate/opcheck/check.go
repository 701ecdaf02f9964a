package opcheck

import (
	"fmt"
	"sort"
	"strings"

	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
)

// Report is what one graph's op-level figures were checked against on
// one GPU.
type Report struct {
	Hardware string `json:"hardware"`
	// Steps is how many profiled steps on this GPU the references hold
	// (0: none: nothing of this graph is checked on it).
	Steps int `json:"profiled_steps"`
	// Checked is the share of the graph's GPU time (the roofline's op
	// times, or the graph's measured ones) in kinds some profiled step on
	// this GPU has.
	Checked float64     `json:"checked_share"`
	Kinds   []KindCheck `json:"kinds"`
	// Issue is the host's time to issue the graph's kernels
	// (roofline.EagerIssue each: the measured issue of an op and of each
	// further launch, or the model's dispatch times with --host) and GPU
	// the kernels' time: a step whose Issue exceeds its GPU is host-bound
	// at its batch.
	Issue     float64 `json:"host_issue_s"`
	GPU       float64 `json:"gpu_s"`
	HostBound bool    `json:"host_bound"`
	// Casts are autocast's casts among the graph's kernels (nil: the
	// graph does not run under autocast).
	Casts *Casts `json:"autocast_casts,omitempty"`
	// Stages are the same per GPU of a decision that places the graph on
	// more than one (AddStages; nil for one GPU): each GPU's host thread
	// issues that GPU's kernels, so a stage is host-bound on its own.
	Stages   []StageCheck `json:"stages,omitempty"`
	Warnings []string     `json:"warnings,omitempty"`
}

// StageCheck is one GPU of a decision: its ops, its host's time to issue
// their kernels against their GPU time, and whether it is host-bound.
type StageCheck struct {
	GPU       int     `json:"gpu"`
	Ops       int     `json:"ops"`
	Issue     float64 `json:"host_issue_s"`
	GPUTime   float64 `json:"gpu_s"`
	HostBound bool    `json:"host_bound"`
}

// KindCheck is one kind of the graph: its share of the GPU time and the
// profiled steps on this GPU that have it, with the roofline's error on
// their ops of this kind (their roofline time over their measured time,
// minus 1; nil where none has it).
type KindCheck struct {
	Kind
	Ops        int      `json:"ops"`
	Share      float64  `json:"share"`
	References []string `json:"references,omitempty"`
	Error      *float64 `json:"roofline_error,omitempty"`
}

// Unchecked is the share of a kind the references lack that a warning
// names: smaller kinds are summed in the report, not named.
const Unchecked = 0.05

// Check reports graph g, costed by model m (one of its ops' times each),
// against refs for hardware preset hw.
func Check(g *graph.Graph, m *roofline.Model, hw string, refs []Reference) Report {
	r := Report{Hardware: hw}
	type ref struct {
		names              []string
		measured, roofline float64
	}
	have := map[Kind]*ref{}
	for _, rf := range refs {
		if rf.Hardware != hw {
			continue
		}
		r.Steps++
		for _, k := range rf.Kinds {
			x := have[k.Kind]
			if x == nil {
				x = &ref{}
				have[k.Kind] = x
			}
			x.names = append(x.names, rf.Name)
			x.measured += k.Measured
			x.roofline += k.Roofline
		}
	}
	tf := m.TF32()
	by := map[Kind]*KindCheck{}
	times, issue := costs(g, m)
	total := 0.0
	for i := 0; i < g.NumOps(); i++ {
		op := g.Op(i)
		if !counted(op) {
			continue
		}
		k := KindOf(op, tf)
		c := by[k]
		if c == nil {
			c = &KindCheck{Kind: k}
			by[k] = c
		}
		c.Ops++
		c.Share += times[i]
		total += times[i]
		r.Issue += issue[i]
	}
	r.GPU = total
	r.HostBound = eager(g) && r.Issue > r.GPU
	r.Casts = castsOf(g, times, issue, total)
	for k, c := range by {
		if total > 0 {
			c.Share /= total
		}
		if x := have[k]; x != nil {
			c.References = x.names
			if x.measured > 0 {
				e := x.roofline/x.measured - 1
				c.Error = &e
			}
		}
		r.Kinds = append(r.Kinds, *c)
	}
	sort.Slice(r.Kinds, func(i, j int) bool {
		if r.Kinds[i].Share != r.Kinds[j].Share {
			return r.Kinds[i].Share > r.Kinds[j].Share
		}
		return r.Kinds[i].String() < r.Kinds[j].String()
	})
	// The shares are added in the kinds' sorted order, not the map's,
	// so that the same graph gives the same sums to the last bit.
	small := 0.0
	for _, c := range r.Kinds {
		if c.References != nil {
			r.Checked += c.Share
		} else if c.Share < Unchecked {
			small += c.Share
		}
	}
	if r.Steps == 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("no profiled step on %s: no op of this graph is checked against a measurement on it (profiled: %s)", hw, hardwareOf(refs)))
	} else {
		for _, c := range r.Kinds {
			if c.References == nil && c.Share >= Unchecked {
				r.Warnings = append(r.Warnings, fmt.Sprintf("%s is %.0f%% of the GPU time and no profiled step on %s has it: its cost is the roofline's alone", c.Kind, 100*c.Share, hw))
			}
		}
		if small > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("kinds no profiled step has, each under %.0f%%: %.0f%% of the GPU time in all", 100*Unchecked, 100*small))
		}
	}
	if r.HostBound {
		how := "eval --host models the host"
		if m.DispatchTimes() != nil {
			how = "the step's time is the host's: placer models it; --host=false for the GPU alone"
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("host-bound at this batch: issuing its kernels takes %s against %s of GPU work (%s)", ms(r.Issue), ms(r.GPU), how))
	}
	return r
}

// counted says whether op is one of the graph's kernels the report
// counts (not a view, nor of an unknown class).
func counted(op *graph.Op) bool { return op.Class != graph.ClassUnknown && !op.Alias }

// eager says whether g's step is issued op by op by eager PyTorch (a
// graph from torchexport that neither compiles nor captures its step;
// --host models the others), so that EagerIssue's costs apply.
func eager(g *graph.Graph) bool {
	e := g.Execution()
	return e != nil && e.Compile == "" && !e.CUDAGraphs
}

// costs are each op's GPU time by model m and its host's time to issue
// it: m's dispatch times where m models the host (--host), else
// roofline.EagerIssue's.
func costs(g *graph.Graph, m *roofline.Model) (times, issue []float64) {
	times = m.OpTimes()
	if issue = m.DispatchTimes(); issue == nil {
		issue = make([]float64, g.NumOps())
		for i := range issue {
			issue[i] = roofline.EagerIssue(g, i)
		}
	}
	return times, issue
}

// AddStages says, for a decision that places g's ops on more than one GPU
// (device: op -> GPU), which GPUs are host-bound: each GPU's ops' issue
// time against their GPU time, as Check counts them for the whole step
// with model m (g's ops on one GPU). One GPU or none, or a graph not
// issued op by op by eager PyTorch (eager: the paper workloads, a
// compiled or captured step): nothing.
func (r *Report) AddStages(g *graph.Graph, m *roofline.Model, device []int) {
	n := 0
	for _, d := range device {
		n = max(n, d+1)
	}
	if n < 2 || len(device) != g.NumOps() || !eager(g) {
		return
	}
	times, issue := costs(g, m)
	st := make([]StageCheck, n)
	for i := range st {
		st[i].GPU = i
	}
	for i, d := range device {
		if op := g.Op(i); d >= 0 && counted(op) {
			st[d].Ops++
			st[d].Issue += issue[i]
			st[d].GPUTime += times[i]
		}
	}
	bound := 0
	for i := range st {
		st[i].HostBound = st[i].Issue > st[i].GPUTime
		if st[i].HostBound {
			bound++
		}
	}
	r.Stages = st
	if bound > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d of %d GPUs host-bound: their hosts take longer to issue their kernels than the kernels run (the stages table)", bound, n))
	}
}

func ms(s float64) string { return fmt.Sprintf("%.3f ms", s*1e3) }

func hardwareOf(refs []Reference) string {
	seen := map[string]bool{}
	var out []string
	for _, r := range refs {
		if !seen[r.Hardware] {
			seen[r.Hardware] = true
			out = append(out, r.Hardware)
		}
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

// Line is the report in one line (what search prints; eval prints the
// kinds): the share checked, the unchecked kinds of at least Unchecked
// each, and whether the step, and which GPUs of its stages, are
// host-bound.
func (r Report) Line() string {
	if r.Steps == 0 {
		return fmt.Sprintf("checked against: nothing, no profiled step on %s", r.Hardware)
	}
	s := fmt.Sprintf("checked against: %.0f%% of the GPU time is in op kinds %d profiled steps on %s have", 100*r.Checked, r.Steps, r.Hardware)
	var not []string
	for _, k := range r.Kinds {
		if k.References == nil && k.Share >= Unchecked {
			not = append(not, fmt.Sprintf("%s %.0f%%", k.Kind, 100*k.Share))
		}
	}
	if len(not) > 0 {
		s += "; not: " + strings.Join(not, ", ")
	}
	if r.HostBound {
		s += "; host-bound at this batch"
	}
	var bound []string
	for _, st := range r.Stages {
		if st.HostBound {
			bound = append(bound, fmt.Sprint(st.GPU))
		}
	}
	if len(bound) > 0 {
		s += fmt.Sprintf("; GPUs %s of %d host-bound", strings.Join(bound, ", "), len(r.Stages))
	}
	return s + " (eval lists the kinds)"
}
