package plans

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/bench/calibration"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/memory"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/published"
	"github.com/placer/placer/report"
)

// ScalePlan is one plan of a transformer at cluster scale and its
// predicted step (placer eval --workload gpt:... --cluster ...).
type ScalePlan struct {
	Model    string `json:"model"`
	Cluster  string `json:"cluster"`
	GPUs     int    `json:"gpus"`
	Strategy string `json:"strategy"`
	// Stack is the software stack the plan is costed on (its stack= and
	// compile= keys, or placer's default) and whose run it is: what placer
	// export checks against the framework it writes for.
	Stack plan.StackInfo `json:"stack"`
	// PricedBy is what priced the step, by the names its parts are
	// registered under (planner.PricedByOf: the code base, the families'
	// traits, the mechanisms): the figure's provenance as data.
	PricedBy *planner.PricedBy `json:"priced_by,omitempty"`
	// The prediction: the step, the throughput, where the time and the
	// memory go.
	planner.Result
	// Check is whether a published row checks the plan
	// (published.CheckPlan over published.Checked): the row that does,
	// or the nearest and how it differs. Nil where no published row can
	// apply (CheckedNote).
	Check *published.Check `json:"check,omitempty"`
	// RegimeError is the error of the plan's regime, said beside its
	// step and TFLOP/s (published.ErrorOf: in sample today); nil where
	// no published row can apply (CheckedNote).
	RegimeError *published.RegimeError `json:"regime_error,omitempty"`
	// PeakRegimeError is the out-of-sample error of placer's peak memory
	// over the published peaks of the plan's family and precision (else
	// every published peak), said beside its memory
	// (published.MemoryErrorOf); nil where no published row can apply.
	PeakRegimeError *published.MemoryError `json:"peak_regime_error,omitempty"`
	// StatedError is the error placer states beside the plan's step
	// and throughput, calibrated on the bench's development part
	// (calibration.For): its regime's, the nearest regime's or the whole
	// bench's, as it says; nil where none is stated (a CPU pod's plan).
	StatedError *calibration.Error `json:"stated_error,omitempty"`
	// StackNote, when set, is what the stack line says in place of
	// Stack's words: on a CPU profile's pod, the profile's run (its
	// layer, torch and backend), which no GPU stack's kernels cost.
	StackNote string `json:"stack_note,omitempty"`
	// CheckedNote, when set, is why no published row can vouch for the
	// plan at all (a CPU profile's pod: the rows ran on GPUs).
	CheckedNote string `json:"checked_note,omitempty"`
	// DeviceKind is "cpu" on a CPU profile's pod (plan.Pod.CPU): GPUs
	// then counts its processes, TFLOPs is per process and there is no
	// MFU; "" (left out) on a pod of GPUs.
	DeviceKind string `json:"device_kind,omitempty"`
	// ProfileMissing is, where the plan was priced from an incomplete
	// profile, what it lacks of what its run set out to measure
	// (profile.Missing: "40 of 54 layer shapes", "the collectives"):
	// the figures that need them fall back to the model. Nil: a
	// complete profile, or none.
	ProfileMissing []string `json:"profile_missing,omitempty"`
	// ProfileLayer is, where the plan was priced from a profile of
	// another framework's layer than placer's own (placer profile
	// --framework), whose: profile.Software.TimedLayer.
	ProfileLayer string `json:"profile_layer,omitempty"`
	// ProfileFP8 is, where the plan's layers under its FP8 recipe come
	// from the profile (measured or composed), what ran them there:
	// profile.Software.FP8 ("transformer-engine 2.9 (experts:
	// GroupedLinear)", "torchao-style (...)"). "": none.
	ProfileFP8 string `json:"profile_fp8,omitempty"`
	// Kernels is where the pod's kernel figures come from
	// (kernels.Node.Provenance), said where no profile prices the plan.
	Kernels string `json:"kernels,omitempty"`
}

// DeviceCPU is ScalePlan.DeviceKind on a CPU profile's pod.
const DeviceCPU = "cpu"

// cpu is whether p's pod is a CPU profile's: its ranks are processes.
func (p *ScalePlan) cpu() bool { return p.DeviceKind == DeviceCPU }

// rank is what one rank of p's pod is: a GPU, or a CPU pod's process.
func (p *ScalePlan) rank() string {
	if p.cpu() {
		return "process"
	}
	return "GPU"
}

// ranks is n ranks of p's pod: "4 GPUs", "2 processes".
func (p *ScalePlan) ranks(n int) string {
	if p.cpu() {
		return fmt.Sprintf("%d processes", n)
	}
	return fmt.Sprintf("%d GPUs", n)
}

// checkedCell says, row by row, whether a published row checks a plan:
// "yes", the traits the nearest row differs in ("no: precision,
// scale"), or, where none can apply (CheckedNote: a CPU pod; no rows),
// "no published row".
func checkedCell(p *ScalePlan) string {
	switch {
	case p.CheckedNote != "" || p.Check == nil || p.Check.Row == nil:
		return "no published row"
	case p.Check.Checked:
		return "yes"
	}
	var traits []string
	for _, d := range p.Check.Differences {
		traits = append(traits, d.Trait)
	}
	return "no: " + strings.Join(traits, ", ")
}

// ScaleSearch is placer search at cluster scale: the fastest plan that
// fits, how many plans the exhaustive search evaluated and its CPU time.
type ScaleSearch struct {
	Best ScalePlan `json:"best"`
	// Runners are the next fastest plans that fit, fastest first.
	Runners   []ScalePlan `json:"runners_up"`
	Evaluated int         `json:"evaluated"`
	Fitting   int         `json:"fitting"`
	// Tight is the plans set aside as tight (their memory within their
	// regime's measured error of the usable memory), AllowTight whether
	// the search kept them instead (placer search --allow-tight).
	Tight      int  `json:"tight_set_aside"`
	AllowTight bool `json:"allow_tight,omitempty"`
	// Refused is the plans of the space set aside because the --for
	// framework's export refuses them (workloads/export/plans' Check),
	// RefusedWhy the first one's reason.
	Refused    int     `json:"refused_set_aside,omitempty"`
	RefusedWhy string  `json:"refused_first,omitempty"`
	CPU        float64 `json:"search_cpu_s"`
	Out        string  `json:"out,omitempty"`
	// Kept is what the search kept as given (placer search --strategy;
	// "" = nothing: every plan was searched).
	Kept string `json:"kept,omitempty"`
	// For is the framework whose runs the plans searched were (placer
	// search --for; "" = any plan).
	For string `json:"for,omitempty"`
	// Tied is how many of the plans shown, the best first, are closer
	// to the best's step than the error of a difference (the best's
	// stated error's PairMean): a tie, placer's figures too rough to
	// order them. 0: no pair to measure it on; 1: the best stands apart.
	Tied int `json:"tied_within_error,omitempty"`
	// Tie is the tie ordered by what is cheaper to run (OrderTie); nil
	// where fewer than two plans are tied.
	Tie *Tie `json:"tie,omitempty"`
	// Known is, where the fastest plan's facts are outside the bench
	// (its stated error names them), how the plans within its stated
	// error of it were ordered by what the bench knows best; nil where
	// the bench covers the fastest plan's facts.
	Known    *KnownOrder `json:"known_first,omitempty"`
	Switches []string    `json:"switches,omitempty"` // the recipe switches the search turned on in the answer
}

// KnownOrder is a search's near-tie ordered by what the bench knows
// best (DESIGN.md §14, "The bench's reach"): the plans within the fastest plan's stated error of
// its step, fewest facts outside the bench first, then the narrowest
// stated error, then the fastest; the first is the answer.
type KnownOrder struct {
	// Outside are the fastest plan's facts no development row shares.
	Outside []string `json:"outside"`
	// Window is the fastest plan's stated error (a fraction): the plans
	// within it of the fastest step are its near-ties.
	Window float64 `json:"window"`
	// Near is how many plans shown are within Window, the fastest
	// among them.
	Near int `json:"near_ties"`
	// Answer is the plan answered with, Fastest the fastest's
	// (the same where the fastest is the best known).
	Answer  string `json:"answer"`
	Fastest string `json:"fastest"`
	// AnswerOutside and AnswerError are the answer's facts outside the
	// bench and its stated error.
	AnswerOutside []string `json:"answer_outside,omitempty"`
	AnswerError   float64  `json:"answer_stated_error"`
}

// KnownLine says, below the search's table, that the fastest plan is
// outside the bench and which plan of its near-ties the bench knows
// best; "" where the bench covers it.
func KnownLine(s ScaleSearch) string {
	k := s.Known
	if k == nil {
		return ""
	}
	head := fmt.Sprintf("outside the bench: the fastest plan has %s; ", strings.Join(k.Outside, ", "))
	if k.Near < 2 {
		return head + fmt.Sprintf("no other plan is within its stated error ±%s, so it is the answer\n", report.Percent(k.Window))
	}
	if k.Answer == k.Fastest {
		return head + fmt.Sprintf("of the %d plans within its stated error ±%s, it is also the one the bench knows best (fewest facts outside, then the narrowest stated error), so it is the answer\n", k.Near, report.Percent(k.Window))
	}
	out := "every fact of it inside the bench"
	if len(k.AnswerOutside) > 0 {
		out = strings.Join(k.AnswerOutside, ", ")
	}
	return head + fmt.Sprintf("of the %d plans within its stated error ±%s, the answer is the one the bench knows best (fewest facts outside, then the narrowest stated error): %s (%s; stated ±%s)\n",
		k.Near, report.Percent(k.Window), k.Answer, out, report.Percent(k.AnswerError))
}

// shown is the search's plans, fastest first: the best and the runners
// up, or, where the answer is the tie's cheapest to run (--tie
// cheapest), the runners up with the answer put back in its place.
func (s ScaleSearch) shown() []ScalePlan {
	all := append([]ScalePlan{s.Best}, s.Runners...)
	slices.SortStableFunc(all, func(a, b ScalePlan) int {
		switch {
		case a.Step < b.Step:
			return -1
		case a.Step > b.Step:
			return 1
		}
		return 0
	})
	return all
}

// tableOrder is the search's plans as its table shows them: a tie's
// plans by what is cheaper to run (Tie.Order), then the rest fastest
// first.
func (s ScaleSearch) tableOrder() []ScalePlan {
	all := s.shown()
	if s.Tie == nil || len(s.Tie.Order) > len(all) {
		return all
	}
	out := make([]ScalePlan, 0, len(all))
	for _, c := range s.Tie.Order {
		for _, p := range all[:len(s.Tie.Order)] {
			if p.Strategy == c.Strategy {
				out = append(out, p)
				break
			}
		}
	}
	if len(out) != len(s.Tie.Order) {
		return all // a plan named twice: step order
	}
	return append(out, all[len(s.Tie.Order):]...)
}

// tableHeading is the line over the search's table of plans: what it
// holds (the answer's plan among them) and in what order (tableOrder).
func tableHeading(s ScaleSearch) string {
	n := len(s.Runners) + 1
	if t := s.Tie; t != nil && len(t.Order) == n {
		return fmt.Sprintf("the %d fastest plans that fit (the answer among them), all tied: cheapest to run first (the tie below):", n)
	} else if t != nil && len(t.Order) < n {
		return fmt.Sprintf("the %d fastest plans that fit (the answer among them): the %d tied first, cheapest to run first (the tie below), then fastest first:", n, len(t.Order))
	}
	return fmt.Sprintf("the %d fastest plans that fit, fastest first (the answer):", n)
}

// TiedWithin is how many of steps, the best (steps[0]) first, are within
// err (a fraction) of the best: steps[i] <= steps[0] (1 + err).
func TiedWithin(steps []float64, err float64) int {
	n := 0
	for _, s := range steps {
		if s <= steps[0]*(1+err) {
			n++
		}
	}
	return n
}

// tieLine says, below the search's table, that its first plans are a
// tie within the error of a difference (PairMean); "" where not.
func tieLine(s ScaleSearch) string {
	all := s.shown()
	e := all[0].StatedError
	if s.Tied < 2 || e == nil || e.Pairs == 0 || len(s.Runners) == 0 || s.Tied > len(all) {
		return ""
	}
	last := all[s.Tied-1]
	line := fmt.Sprintf("a tie within the error of a difference: the best %d of the %d plans shown are within %s of the best step, closer than %s, the mean |error| of the ratio of two runs' steps on %d pairs of development runs of one sweep (%s)",
		s.Tied, len(all), report.Percent(last.Step/all[0].Step-1), report.Percent(e.PairMean), e.Pairs, e.BasisText())
	if s.Tie == nil {
		return line + "\n"
	}
	return line + "; the table orders them by what is cheaper to run (" + tieKeyWords(s.Tie) + ")\n" + cheapestLine(s.Tie)
}

// tieKeyWords is the levels of the tie's key, the GPUs left out where
// every tied plan occupies as many.
func tieKeyWords(t *Tie) string {
	for _, c := range t.Order {
		if c.GPUs != t.Order[0].GPUs {
			return t.Key
		}
	}
	return strings.TrimPrefix(t.Key, "fewer GPUs, then ")
}

// WriteScalePlan writes a plan's prediction: the step, the throughput and
// where the time and the memory go.
func WriteScalePlan(w io.Writer, p ScalePlan) error {
	w, flush := report.FitLines(w)
	defer flush()
	fits := verdictWords(&p.Result)
	busiest := fmt.Sprintf("%s (tensor-parallel communication exposed %s)", report.Seconds(p.Compute), report.Seconds(p.TPExposed))
	if p.EPExposed > 0 {
		busiest = fmt.Sprintf("%s (tensor-parallel communication exposed %s, the experts' all-to-alls and collectives %s)",
			report.Seconds(p.Compute), report.Seconds(p.TPExposed), report.Seconds(p.EPExposed))
	}
	rows := [][2]string{
		{"model", p.Model},
		{"cluster", fmt.Sprintf("%s (%s)", p.Cluster, p.ranks(p.GPUs))},
		{"strategy", p.Strategy},
		{"stack", cmp.Or(p.StackNote, p.Stack.String())},
		{"step", report.Seconds(p.Step) + regimeNote(&p)},
		throughputRow(&p),
		{"memory per " + p.rank(), memoryLine(&p, fits)},
		{"busiest stage", busiest},
		{"pipeline bubble", report.Seconds(p.Bubble)},
		{"data-parallel exposed", report.Seconds(p.DPExposed)},
		{"embedding all-reduce", report.Seconds(p.Embedding)},
		{"optimizer step", report.Seconds(p.Optimizer)},
		{"host", hostLine(&p)},
		{"checked against", checkedLine(p)},
	}
	if a := p.Allocator; a != nil {
		i := slices.IndexFunc(rows, func(r [2]string) bool { return r[0] == "memory per GPU" })
		rows = slices.Insert(rows, i+1, [2]string{"reserved per GPU", reservedLine(a, p.Usable)})
	}
	if p.LayerCosting != "" {
		rows = append(rows, [2]string{"layers costed as", p.LayerCosting})
	}
	if p.Kernels != "" && p.Sources == nil {
		rows = append(rows, [2]string{"kernels", p.Kernels})
	}
	if s := p.Sources; s != nil {
		layers := s.Layers.String()
		if s.DenseLayers != nil {
			layers = fmt.Sprintf("%s (the dense ones before the experts %s)", s.Layers, *s.DenseLayers)
		}
		line := fmt.Sprintf("layers %s, embedding %s, loss %s, optimizer %s, host %s", layers, s.Embedding, s.Loss, s.Optimizer, s.Host)
		for _, c := range []struct {
			name string
			src  fmt.Stringer
			on   bool
		}{{"tensor-parallel", s.TP, p.Plan.TP > 1}, {"experts' communication", s.EP, expertsComm(p.Plan, s)},
			{"data-parallel", s.DP, p.Plan.DP*p.Plan.CP > 1}, {"pipeline sends", s.Pipeline, p.Plan.PP > 1}} {
			if c.on {
				line += fmt.Sprintf(", %s %s", c.name, c.src)
			}
		}
		rows = append(rows, [2]string{"from the profile", line})
	}
	if p.ProfileLayer != "" {
		rows = append(rows, [2]string{"profile's layer", p.ProfileLayer + ", not placer's own"})
	}
	if p.ProfileFP8 != "" {
		rows = append(rows, [2]string{"profile's FP8 layers", "fp8=" + p.Plan.FP8 + " as " + p.ProfileFP8 + " ran them"})
	}
	if len(p.ProfileMissing) > 0 {
		rows = append(rows, [2]string{"profile", "incomplete, not measured: " + strings.Join(p.ProfileMissing, ", ") +
			"; a figure that needs them is modelled (the roofline), as the line above says"})
	}
	return report.KeyValue(w, rows)
}

// throughputRow is the plan's model FLOP/s per rank: TFLOP/s per GPU
// and the MFU; on a CPU pod GFLOP/s per process (a CPU's rate in
// TFLOP/s rounds to 0.0) and no MFU: the profile measured no peak of
// the CPU to take a fraction of (plan.Pod.CPU).
func throughputRow(p *ScalePlan) [2]string {
	if p.cpu() {
		return [2]string{"GFLOP/s per process", fmt.Sprintf("%.1f (no MFU: the profile measured no peak of the CPU)", 1e3*p.TFLOPs)}
	}
	line := fmt.Sprintf("%.1f (MFU %s)", p.TFLOPs, report.Percent(p.MFU))
	switch {
	case p.StatedError != nil:
		line += "; the step's stated error applies"
	case p.RegimeError != nil:
		line += "; the step's regime error applies"
	}
	return [2]string{"TFLOP/s per GPU", line}
}

// statedCell is the stated error as a table's step cell carries it
// after the step: " ±12% regime" (its regime's), " ±18% nearest" (the
// nearest regime's), " ±20% whole" (the whole bench's); "" where none.
func statedCell(p *ScalePlan) string {
	if p.StatedError == nil {
		return ""
	}
	return " " + p.StatedError.Short()
}

// stated is a stated error on a figure's own line below it in a table's
// cell ("\n±12% regime"); "" where none.
func stated(e *calibration.Error) string {
	if e == nil {
		return ""
	}
	return "\n" + e.Short()
}

// regimeNote is the error of p's regime as the step's line carries it:
// "; dense BF16 FSDP on H100: mean |error| 30% (...) on 4 published
// rows (in-sample)", or "" where no published row can apply.
func regimeNote(p *ScalePlan) string {
	if p.StatedError != nil {
		return "; " + p.StatedError.String()
	}
	if p.RegimeError == nil {
		return ""
	}
	return "; " + p.RegimeError.String()
}

// expertsComm is whether plan pl has experts' communication to say the
// source of: expert parallelism, or an expert-tensor degree above 1
// priced from a profile (a dense plan's ETP is its T, its experts'
// source the zero, modelled: not said).
func expertsComm(pl plan.Plan, s *planner.Sources) bool {
	return pl.EP > 1 || pl.ETP > 1 && s.EP != profile.Modelled
}

// verdictWords is the memory line's verdict on r (planner.Result.Verdict):
// "fits", "is TIGHT against" or "does NOT fit" the usable memory.
func verdictWords(r *planner.Result) string {
	switch {
	case r.Verdict == plan.VerdictTight:
		return "is TIGHT against"
	case !r.Fits:
		return "does NOT fit"
	}
	return "fits"
}

// errorWords is what the memory line says of r's measured error, where
// its regime has one: "tight" is within it of the usable memory.
func errorWords(r *planner.Result) string {
	if r.MemoryError <= 0 {
		return ""
	}
	return fmt.Sprintf("; tight within ±%s of it, the measured error of %s", report.Percent(r.MemoryError), r.MemoryErrorSource)
}

// memoryLine is the most loaded GPU's memory: what the allocator holds,
// whether it fits what the GPU leaves it (its capacity less the CUDA
// context, NCCL's buffers and the margin), and its named parts. On a
// CPU pod, the most loaded process's: what its tensors hold against its
// share of the host's memory less the margin (gloo's buffers and the
// process's own not counted).
func memoryLine(p *ScalePlan, fits string) string {
	r := &p.Result
	if len(r.MemoryParts) == 0 {
		return fmt.Sprintf("%s, %s: weights %s, gradients %s, optimizer %s, activations %s",
			GB(r.Memory), fits, GB(r.Weights), GB(r.Grads), GB(r.OptState), GB(r.Activations))
	}
	judged := max(r.Judged, r.Memory)
	// The figure judged and the usable memory at one precision, fine
	// enough to tell them apart.
	need, usable, _ := GBApart(judged, r.Usable)
	held, spare := GB(r.Memory)+" allocated", spareWords(r.Usable-judged)
	switch {
	case r.Judged > r.Memory && r.Judged == r.Usable+1:
		// Out of the device with less in use than the usable memory
		// (its segments' fragments): judged just over it (settle).
		held, spare = GB(r.Memory)+" allocated (the caching allocator, simulated, runs out of memory: its segments fill the usable memory)", "none to spare"
	case r.Judged > r.Memory && r.Allocator != nil && r.Allocator.OutOfMemory:
		// The replay ran out of the device: judged at what it needed
		// then (memory.Peak's settle), not at a reservation.
		held = fmt.Sprintf("%s allocated (the caching allocator, simulated, runs out of memory: it needs %s)", GB(r.Memory), need)
	case r.Judged > r.Memory:
		// The verdict weighed the caching allocator's simulated
		// reservation (memory.Peak's Reserved).
		held = fmt.Sprintf("%s allocated (%s reserved, the caching allocator simulated)", GB(r.Memory), need)
	}
	line := fmt.Sprintf("%s, %s the %s usable of %s (a %s margin, %s kept free; %s%s)",
		held, fits, usable, GB(r.Capacity), report.Percent(r.MemoryMargin), keptFree(r.MemoryParts), spare, errorWords(r))
	if p.cpu() {
		need, usable, _ := GBApart(r.Memory, r.Usable)
		line = fmt.Sprintf("%s in tensors, %s the %s usable of the process's %s share of host memory (a %s margin kept free; gloo's buffers and the process's own memory not counted; %s)",
			need, fits, usable, GB(r.Capacity), report.Percent(r.MemoryMargin), spareWords(r.Usable-r.Memory))
	}
	// A line whose whole is under a GB (a CPU profile's small model)
	// gives its parts in MB: in GB each read 0.0.
	partSize := GB
	if r.Memory < 1e9 {
		partSize = Mem
	}
	for i, pt := range r.MemoryParts {
		if pt.Bytes == 0 {
			continue
		}
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		name := pt.Name
		if pt.Outside {
			name += " (outside the allocator)"
		}
		line += fmt.Sprintf("%s%s %s", sep, name, partSize(pt.Bytes))
	}
	if p.PeakRegimeError != nil && p.PeakRegimeError.String() != r.MemoryErrorSource {
		line += "; " + p.PeakRegimeError.String() // once: errorWords may say it
	}
	return line
}

// keptFree names what the usable memory leaves out beside the margin:
// the CUDA context and NCCL's buffers, and any other part held outside
// the allocator (DeepEP's buffers under the flex dispatcher).
func keptFree(parts []plan.MemoryPart) string {
	var more []string
	for _, pt := range parts {
		if pt.Outside && pt.Bytes > 0 && pt.Name != "CUDA context" && pt.Name != "NCCL buffers" {
			more = append(more, pt.Name)
		}
	}
	if len(more) == 0 {
		return "the CUDA context and NCCL's buffers"
	}
	return "the CUDA context, NCCL's buffers and " + strings.Join(more, ", ")
}

// reservedLine is what PyTorch's caching allocator reserves for the
// memory line's tensors (torch.cuda.max_memory_reserved), simulated;
// where it ran out of memory, what it needed then, at the precision the
// memory line gives it beside the usable memory.
func reservedLine(a *memory.AllocatorPeak, usable int64) string {
	exp := "off"
	if a.Expandable {
		exp = "on"
	}
	reserved, _, _ := GBApart(a.Reserved, usable) // as the memory line gives it
	line := fmt.Sprintf("%s reserved by PyTorch's caching allocator (expandable segments %s), %s allocated as it counts: simulated on stage %d's allocation trace (%d events)",
		reserved, exp, GB(a.Allocated), a.Stage, a.Events)
	if a.OutOfMemory {
		line += "; OUT OF MEMORY in the simulation, with the cache released"
		if a.Needed > 0 {
			need, _, _ := GBApart(max(a.Needed, a.Allocated), usable)
			line += ": it needed " + need
		}
	} else if a.Releases > 0 {
		line += fmt.Sprintf("; the cache released %d times to make room", a.Releases)
	}
	return line
}

// checkedLine says which published row checks the plan, or that none
// does: the nearest row and how it differs.
func checkedLine(p ScalePlan) string {
	c := p.Check
	switch {
	case p.CheckedNote != "":
		return p.CheckedNote
	case c == nil || c.Row == nil:
		return "UNCHECKED: no published row"
	case c.Checked:
		return fmt.Sprintf("checked by %s: the same precision (%s), attention, family and parallelism, %d GPUs, %d tokens; predicted %+.0f%%, within its %.0f%%",
			c.Row.Source, published.PrecisionName(c.Row.Precision), c.Row.GPUs, c.Row.Seq, 100*c.Row.Error, 100*c.Row.Tolerance())
	}
	return fmt.Sprintf("UNCHECKED: nearest %s (%s, %d GPUs) differs in %s", c.Row.Source, published.PrecisionName(c.Row.Precision), c.Row.GPUs, andList(c.Reasons()))
}

// andList joins words as a sentence does: "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// hostLine says how long the busiest GPU waits on its host per step and
// which pipeline stages are host-bound (their host issues a
// micro-batch's kernels slower than the GPU runs them), with the
// largest host-to-GPU ratio; on a CPU pod the process's compute in the
// GPU's place.
func hostLine(p *ScalePlan) string {
	line := hostLineGPU(p.Result)
	if p.cpu() {
		line = strings.ReplaceAll(strings.ReplaceAll(line, "GPU waits", "compute waits"), "the GPU's time", "the compute's time")
	}
	return line
}

// hostLineGPU is hostLine on a pod of GPUs.
func hostLineGPU(r planner.Result) string {
	var bound []string
	worst := 0.0
	for _, st := range r.HostStages {
		if st.GPU > 0 {
			worst = max(worst, st.Issue/st.GPU)
		}
		if st.Bound {
			bound = append(bound, fmt.Sprint(st.Stage))
		}
	}
	line := fmt.Sprintf("GPU waits %s", report.Seconds(r.HostExposed))
	switch {
	case len(r.HostStages) == 0:
		return line
	case len(bound) == 0:
		return line + fmt.Sprintf("; no stage host-bound (host at most %.2fx the GPU's time)", worst)
	case len(bound) == len(r.HostStages):
		return line + fmt.Sprintf("; every stage host-bound (host up to %.2fx the GPU's time)", worst)
	}
	return line + fmt.Sprintf("; host-bound stages %s (host up to %.2fx the GPU's time)", strings.Join(bound, ", "), worst)
}

// WriteScaleSearch writes the search's best plan and its statistics.
func WriteScaleSearch(w io.Writer, s ScaleSearch) error {
	w, flush := report.FitLines(w)
	defer flush()
	if err := WriteScalePlan(w, s.Best); err != nil {
		return err
	}
	if len(s.Runners) > 0 {
		if _, err := fmt.Fprintln(w, tableHeading(s)); err != nil {
			return err
		}
		var rows [][]string
		cpu := s.Best.cpu()
		fastest := s.shown()[0].Step
		for _, r := range s.tableOrder() {
			// The plan as --strategy reads it, broken after commas to fit
			// 120 columns.
			row := []string{report.Wrap(r.Strategy, 60), report.Seconds(r.Step) + statedCell(&r), fmt.Sprintf("%.1f", r.TFLOPs), report.Percent(r.MFU), Mem(r.Memory),
				fmt.Sprintf("%.3fx", r.Step/fastest), report.Wrap(checkedCell(&r), 24)}
			if cpu {
				// GFLOP/s per process, no MFU (throughputRow).
				row = slices.Delete(row, 3, 4)
				row[2] = fmt.Sprintf("%.1f", 1e3*r.TFLOPs)
			}
			rows = append(rows, row)
		}
		vs := "vs best"
		if fastest != s.Best.Step {
			vs = "vs fastest" // the answer is the tie's cheapest to run
		}
		header, optional := []string{"plan", "step", "TFLOP/s per GPU", "MFU", "memory per GPU", vs, "checked against"}, []int{3}
		if cpu {
			header, optional = []string{"plan", "step", "GFLOP/s per process", "memory per process", vs, "checked against"}, nil
		}
		if err := report.TableFit(w, header, rows, optional); err != nil {
			return err
		}
		if _, err := io.WriteString(w, tieLine(s)); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(w, KnownLine(s)); err != nil {
		return err
	}
	kept, runs, tight := "", "", ""
	if s.Kept != "" {
		kept = ", keeping " + s.Kept
	}
	if s.For != "" {
		runs = " for " + s.For // placer search --for: the plans its export writes
	}
	switch {
	case s.AllowTight:
		tight = "; tight plans kept (--allow-tight)"
	case s.Tight > 0:
		tight = fmt.Sprintf("; %d tight, set aside: --allow-tight keeps them", s.Tight)
	}
	_, err := fmt.Fprintf(w, "searched %d plans%s (%d fit%s) exhaustively in %.2f CPU s%s\n", s.Evaluated, runs, s.Fitting, tight, s.CPU, kept)
	if err == nil && len(s.Switches) > 0 {
		_, err = fmt.Fprintf(w, "switches the search turned on: %s (--strategy KEY=VALUE keeps one as given)\n", strings.Join(s.Switches, ", "))
	}
	if err == nil && s.Refused > 0 {
		_, err = fmt.Fprintf(w, "%s\n", RefusedLine(s.Refused, s.For, s.RefusedWhy))
	}
	if err == nil && s.Out != "" {
		_, err = fmt.Fprintf(w, "result written to %s\n", s.Out)
	}
	return err
}

// RefusedLine says how many plans a search for framework set aside
// because its export refuses them, and the first one's reason.
func RefusedLine(n int, framework, why string) string {
	return fmt.Sprintf("%d plans set aside: %s's export refuses them (first: %s)", n, framework, why)
}

// GB is bytes in decimal gigabytes, as GPU memory is sold ("80 GB").
func GB(b int64) string { return fmt.Sprintf("%.1f GB", float64(b)/1e9) }

// Mem is b as GB, or as MB where under a GB (a CPU profile's small
// model, whose memory in GB reads 0.0).
func Mem(b int64) string { return memAt(b, 1) }

// GBApart is a and b as GB (1e9 bytes), or MB (1e6) where under a GB,
// at the fewest decimals, one to three, at which they differ (three
// where they do not), and that number of decimals: a peak against the
// usable memory, so that a peak over it never reads as equal to it.
func GBApart(a, b int64) (as, bs string, decimals int) {
	for decimals = 1; decimals < 3; decimals++ {
		if memAt(a, decimals) != memAt(b, decimals) {
			break
		}
	}
	return memAt(a, decimals), memAt(b, decimals), decimals
}

// memAt is b in GB at decimals decimals, or in MB where under a GB.
func memAt(b int64, decimals int) string {
	if b > -1e9 && b < 1e9 {
		return strconv.FormatFloat(float64(b)/1e6, 'f', decimals, 64) + " MB"
	}
	return strconv.FormatFloat(float64(b)/1e9, 'f', decimals, 64) + " GB"
}

// spareWords is the room left under the usable memory, spare bytes
// (negative: over it), in its own unit: "30.6 GB to spare", "23.1 MB
// over" (a room of MB between two figures of GB is not rounded away).
func spareWords(spare int64) string {
	if spare < 0 {
		return memAt(-spare, 1) + " over"
	}
	return memAt(spare, 1) + " to spare"
}

// MegatronRow is one row of placer report megatron: a published
// configuration's measured throughput, placer's prediction of it, and
// placer's best plan for the same model, GPUs and batch.
type MegatronRow struct {
	Model string `json:"model"`
	GPUs  int    `json:"gpus"`
	Batch int    `json:"global_batch"`
	// Workload and Cluster are the row's model and pod as placer eval and
	// search take them (--workload, --cluster): with a plan of the row as
	// --strategy, placer eval prints the row's figure to the bit.
	Workload        string  `json:"workload"`
	Cluster         string  `json:"cluster"`
	PublishedTFLOPs float64 `json:"published_tflops"`
	PublishedMFU    float64 `json:"published_mfu"`
	// Megatron's own configuration read as it ran (what the row states,
	// the rest at the framework's documented defaults:
	// published.MegatronDefault) and placer's prediction of it.
	MegatronPlan    string  `json:"megatron_plan"`
	PredictedTFLOPs float64 `json:"predicted_tflops"`
	// Stated and PlacerStated are the errors placer states beside
	// Megatron's plan's figures and beside its own plan's, as placer eval
	// states them (calibration.For).
	Stated       *calibration.Error `json:"stated_error,omitempty"`
	PlacerStated *calibration.Error `json:"placer_stated_error,omitempty"`
	PredictedMFU float64            `json:"predicted_mfu"`
	// Error is predicted over published, minus 1: the error counted.
	Error float64 `json:"error"`
	// OutOfSampleError is Error with the constants the row's own source
	// chose reset (Megatron.Samples; Error where it chose none), of the
	// step OutOfSampleStep: OutOfSampleTFLOPs, and on Megatron-Bridge's
	// rows OutOfSampleTokens.
	OutOfSampleError  float64 `json:"out_of_sample_error"`
	OutOfSampleStep   float64 `json:"out_of_sample_step_s"`
	OutOfSampleTFLOPs float64 `json:"out_of_sample_tflops"`
	OutOfSampleTokens float64 `json:"out_of_sample_tokens_per_gpu,omitempty"`
	MegatronMemory    int64   `json:"megatron_memory_bytes"`
	// MegatronLMEstimate is Megatron-LM's own estimate of the same
	// plan's memory (theoretical_memory_usage.py: weights and optimizer
	// plus activations, published.MegatronLMEstimate): a second opinion
	// beside placer's MegatronMemory, not a measurement.
	MegatronLMEstimate int64 `json:"megatron_lm_estimate_bytes,omitempty"`
	// The fastest reading of what the row leaves open
	// (published.MegatronPlan), shown beside the default's, and its error.
	FastestPlan   string  `json:"fastest_plan"`
	FastestTFLOPs float64 `json:"fastest_tflops"`
	FastestMFU    float64 `json:"fastest_mfu"`
	FastestError  float64 `json:"fastest_error"`
	// placer's best plan.
	PlacerPlan   string  `json:"placer_plan"`
	PlacerTFLOPs float64 `json:"placer_tflops"`
	PlacerMFU    float64 `json:"placer_mfu"`
	PlacerMemory int64   `json:"placer_memory_bytes"`
	// Speedup is placer's plan over Megatron's, both predicted; it is
	// printed only where neither plan has an unchecked feature
	// (MegatronUnchecked, PlacerUnchecked: ScalePlan.Unchecked's).
	Speedup           float64  `json:"speedup"`
	MegatronUnchecked []string `json:"megatron_unchecked,omitempty"`
	PlacerUnchecked   []string `json:"placer_unchecked,omitempty"`
	Search            float64  `json:"search_cpu_s"`
	// Megatron-Bridge's rows (Megatron.Bridge) only: the precision, the
	// tokens a second per GPU published and predicted (the error is
	// theirs; the TFLOP/s above are in Megatron-LM's current count,
	// transformer.CausalFLOPs), and whether Megatron's plan and placer's
	// fit the GPUs' memory in placer's model.
	Precision       string  `json:"precision,omitempty"`
	PublishedTokens float64 `json:"published_tokens_per_gpu,omitempty"`
	// Regression cites the framework's tracker where it lists the row's
	// figure as a regression of its release (published.Row.Regression):
	// the row keeps its error in the means, marked.
	Regression      string  `json:"regression,omitempty"`
	PredictedTokens float64 `json:"predicted_tokens_per_gpu,omitempty"`
	FastestTokens   float64 `json:"fastest_tokens_per_gpu,omitempty"`
	PlacerTokens    float64 `json:"placer_tokens_per_gpu,omitempty"`
	MegatronFits    bool    `json:"megatron_fits,omitempty"`
	PlacerFits      bool    `json:"placer_fits,omitempty"`
}

// Megatron is placer report megatron: the weak-scaling table and the
// strong-scaling series.
type Megatron struct {
	Hardware string        `json:"hardware"`
	Rows     []MegatronRow `json:"rows"`
	Strong   []MegatronRow `json:"strong_scaling"`
	// A100 is Megatron-LM's 2022 table on A100s (data-parallel size 1).
	A100 []MegatronRow `json:"a100_2022"`
	// Llama3 is the Llama 3 paper's 405B rows on H100s (Meta's stack,
	// not Megatron-LM: "Megatron's plan" is Meta's stated one).
	Llama3 []MegatronRow `json:"llama3_405b,omitempty"`
	// Over the table's rows: the mean absolute prediction error, the
	// largest, and the geometric mean of placer's speedup.
	MeanAbsError float64 `json:"mean_abs_error"`
	MaxAbsError  float64 `json:"max_abs_error"`
	// MeanError is the mean signed error (its bias), Spearman the rank
	// correlation of predicted and published TFLOP/s, and
	// FastestMeanAbsError the mean |error| of the fastest readings.
	MeanError           float64 `json:"mean_error"`
	Spearman            float64 `json:"spearman"`
	FastestMeanAbsError float64 `json:"fastest_mean_abs_error"`
	GeomeanSpeedup      float64 `json:"geomean_speedup"`
	// CheckedSpeedup is the geometric mean over the CheckedRows rows
	// whose plans are both inside the checked regime (speedupCell).
	CheckedSpeedup float64 `json:"checked_geomean_speedup,omitempty"`
	CheckedRows    int     `json:"checked_rows"`
	// Bridge is Megatron-Bridge's H100 table (25.11: Llama 3 in FP8 and
	// mixtures of experts), its errors on tokens/s: their mean |error|,
	// largest and mean.
	Bridge             []MegatronRow `json:"megatron_bridge,omitempty"`
	BridgeMeanAbsError float64       `json:"bridge_mean_abs_error,omitempty"`
	BridgeMaxAbsError  float64       `json:"bridge_max_abs_error,omitempty"`
	BridgeMeanError    float64       `json:"bridge_mean_error,omitempty"`
	// Samples are the tables' errors in sample and out of sample (each
	// table's rows with the constants its own source chose reset).
	Samples []TableSample `json:"in_and_out_of_sample"`
	// Plots are the files --plot wrote.
	Plots []string `json:"plots,omitempty"`
}

// TableSample is one table's error in and out of sample.
type TableSample struct {
	Name string `json:"table"`
	published.SampleError
}

// sampleLine is table name's out-of-sample line (OutOfSampleLine), "" where
// m has none.
func sampleLine(m Megatron, name string) string {
	for _, t := range m.Samples {
		if t.Name == name {
			return name + " " + OutOfSampleLine(t.SampleError, false) + "\n"
		}
	}
	return ""
}

// WriteMegatron writes both tables and their summary.
func WriteMegatron(w io.Writer, m Megatron) error {
	w, flush := report.FitLines(w)
	defer flush()
	if _, err := fmt.Fprintf(w, "Megatron-LM's weak-scaling table (H100, published) against placer's model (%s):\n", m.Hardware); err != nil {
		return err
	}
	if err := writeMegatronRows(w, m.Rows); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "prediction error (Megatron's plan read at the framework's defaults): mean |error| %s, largest %s, mean %+.1f%%,\n"+
		"Spearman %.2f; at the fastest reading of what the table leaves open: mean |error| %s\n%s"+
		"placer's plans %.3fx Megatron's (geometric mean, predicted); %s\n"+
		"each row's figures again: placer eval --workload W --cluster C --strategy PLAN, placer search --workload W --cluster C (W and C: the row's workload and cluster in --json)\n\n",
		report.Percent(m.MeanAbsError), report.Percent(m.MaxAbsError), 100*m.MeanError, m.Spearman, report.Percent(m.FastestMeanAbsError),
		sampleLine(m, "Megatron-LM H100"), m.GeomeanSpeedup, checkedSpeedupNote(m)); err != nil {
		return err
	}
	if len(m.Strong) > 0 {
		if _, err := fmt.Fprintln(w, "Strong scaling, GPT-3 175B at a global batch of 1,152 (published: MFU at the two ends only):"); err != nil {
			return err
		}
		if err := writeMegatronRows(w, m.Strong); err != nil {
			return err
		}
	}
	if len(m.A100) > 0 {
		if _, err := fmt.Fprintln(w, "\nMegatron-LM's 2022 table on DGX A100s (Korthikanti et al.: data-parallel size 1, selective recomputation):"); err != nil {
			return err
		}
		if err := writeMegatronRows(w, m.A100); err != nil {
			return err
		}
		if _, err := fmt.Fprint(w, sampleLine(m, "Megatron-LM A100 (2022)")); err != nil {
			return err
		}
	}
	if len(m.Llama3) > 0 {
		if _, err := fmt.Fprintln(w, "\nLlama 3 405B's pre-training (Meta's table 4; Meta's own stack on H100s: its stated plan in the Megatron column):"); err != nil {
			return err
		}
		if err := writeMegatronRows(w, m.Llama3); err != nil {
			return err
		}
		if _, err := fmt.Fprint(w, sampleLine(m, "Llama 3 405B")); err != nil {
			return err
		}
	}
	if len(m.Bridge) > 0 {
		return writeBridgeRows(w, m)
	}
	return nil
}

// writeBridgeRows writes Megatron-Bridge's table: tokens/s per GPU
// published and predicted (the error counted), TFLOP/s per GPU in
// Megatron-LM's current count, memory, placer's plan, and the summary.
func writeBridgeRows(w io.Writer, m Megatron) error {
	if _, err := fmt.Fprintln(w, "\nMegatron-Bridge's table on DGX H100s (25.11; MoE routing force-balanced, dropless): tokens/s per GPU"); err != nil {
		return err
	}
	header := []string{"model", "GPUs", "precision", "Megatron's plan", "published tok/s", "predicted", "error", "published TFLOP/s",
		"predicted TFLOP/s", "GB placer / MLM est.", "placer's plan", "placer tok/s", "placer memory", "speedup", "search CPU", "fastest reading", "its error"}
	var out [][]string
	for _, r := range m.Bridge {
		mem := memoryBeside(r)
		out = append(out, []string{bridgeModel(r), strconv.Itoa(r.GPUs), r.Precision, report.Wrap(CompactPlan(r.MegatronPlan), 24),
			fmt.Sprintf("%.0f", r.PublishedTokens), fmt.Sprintf("%.0f", r.PredictedTokens) + stated(r.Stated), fmt.Sprintf("%+.1f%%", 100*r.Error),
			fmt.Sprintf("%.0f", r.PublishedTFLOPs), fmt.Sprintf("%.0f", r.PredictedTFLOPs), mem,
			report.Wrap(CompactPlan(r.PlacerPlan), 24), fmt.Sprintf("%.0f", r.PlacerTokens) + stated(r.PlacerStated), GB(r.PlacerMemory), speedupCell(r),
			fmt.Sprintf("%.2f s", r.Search), report.Wrap(CompactPlan(r.FastestPlan), 24), fmt.Sprintf("%+.1f%%", 100*r.FastestError)})
	}
	if err := report.TableFit(w, header, out, []int{16, 15, 14, 12, 8, 7}); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "prediction error on tokens/s (Megatron's plan read as its recipe ran it: Megatron-Bridge v0.2.1's performance recipes,\n"+
		"Megatron-Core's defaults where they are silent): mean |error| %s, largest %s, mean %+.1f%%\n"+
		"TFLOP/s in Megatron-LM's current count (causal attention; GPT-OSS's published figure counts its MLP as two GEMMs);\n"+
		"epN expert parallelism, etN expert tensor parallelism where not TP's, fp8 FP8 current scaling, fsdp FSDP (ZeRO-3),\n"+
		"epo all-to-alls overlapped with another micro-batch, g16 gradients kept and reduced in BF16; every row read with\n"+
		"stack=megatron-bridge-25.11 (docs/stacks.md: the settings shown only where they differ from placer's default);\n"+
		"GB placer / MLM est.: placer's memory of Megatron's plan / Megatron-LM's own estimate (theoretical_memory_usage.py:\n"+
		"a second opinion, not a measurement); (over): above the GPU's memory in placer's model; (reg.): the framework's\n"+
		"own tracker lists the row's figure as a regression of its release (--json: the row's regression cites it)\n",
		report.Percent(m.BridgeMeanAbsError), report.Percent(m.BridgeMaxAbsError), 100*m.BridgeMeanError)
	if err == nil {
		_, err = fmt.Fprint(w, sampleLine(m, "Megatron-Bridge 25.11"))
	}
	if err == nil {
		err = unitsLegend(w, m.Bridge)
	}
	return err
}

// memoryBeside is a row's memory cell: placer's of Megatron's plan,
// (over) where it does not fit, and Megatron-LM's estimate beside it.
func memoryBeside(r MegatronRow) string {
	mem := fmt.Sprintf("%.1f", float64(r.MegatronMemory)/1e9)
	if !r.MegatronFits {
		mem += " (over)"
	}
	if r.MegatronLMEstimate > 0 {
		return fmt.Sprintf("%s / %.1f", mem, float64(r.MegatronLMEstimate)/1e9)
	}
	return mem
}

// unitsLegend says what emb and loss mean in a table whose plans have
// them (CompactPlan).
func unitsLegend(w io.Writer, rows []MegatronRow) error {
	for _, r := range rows {
		if strings.Contains(r.MegatronPlan+r.PlacerPlan+r.FastestPlan, "-layer=on") {
			_, err := fmt.Fprint(w, "emb/loss the embedding/the loss counted as a layer of the pipeline split (Megatron-Core's\n"+
				"--account-for-embedding/loss-in-pipeline-split: stages of equal layers and units, interleaved in vN chunks)\n")
			return err
		}
	}
	return nil
}

func writeMegatronRows(w io.Writer, rows []MegatronRow) error {
	header := []string{"model", "GPUs", "Megatron's plan", "published TFLOP/s", "predicted", "error", "GB placer / MLM est.",
		"placer's plan", "placer TFLOP/s", "placer memory", "speedup", "search CPU", "MFU published", "MFU predicted",
		"fastest reading", "its error"}
	var out [][]string
	for _, r := range rows {
		pub, pubMFU, errS, fastErr := "-", "-", "-", "-"
		if r.PublishedMFU > 0 {
			pubMFU = pct0(r.PublishedMFU)
		}
		if r.PublishedTFLOPs > 0 {
			pub = fmt.Sprintf("%.1f", r.PublishedTFLOPs)
			errS = fmt.Sprintf("%+.1f%%", 100*r.Error)
			fastErr = fmt.Sprintf("%+.1f%%", 100*r.FastestError)
		} else if r.PublishedMFU > 0 {
			pub = "MFU " + pct0(r.PublishedMFU)
			errS = fmt.Sprintf("%+.1f pt", 100*(r.PredictedMFU-r.PublishedMFU))
			fastErr = fmt.Sprintf("%+.1f pt", 100*(r.FastestMFU-r.PublishedMFU))
		}
		// A plan longer than 24 columns takes two lines.
		out = append(out, []string{r.Model, strconv.Itoa(r.GPUs), report.Wrap(CompactPlan(r.MegatronPlan), 24), pub,
			fmt.Sprintf("%.1f", r.PredictedTFLOPs) + stated(r.Stated), errS, memoryBeside(r),
			report.Wrap(CompactPlan(r.PlacerPlan), 24), fmt.Sprintf("%.1f", r.PlacerTFLOPs) + stated(r.PlacerStated), GB(r.PlacerMemory), speedupCell(r),
			fmt.Sprintf("%.2f s", r.Search), pubMFU, pct0(r.PredictedMFU), report.Wrap(CompactPlan(r.FastestPlan), 24), fastErr})
	}
	// Narrow terminals lose the search time, placer's plan's memory, the
	// fastest reading's plan, the MFUs and its error; the memory of
	// Megatron's plan stays.
	if err := report.TableFit(w, header, out, []int{11, 9, 14, 12, 13, 15}); err != nil {
		return err
	}
	_, err := fmt.Fprint(w, "plans: TPxPPxDP, vN virtual stages, bN micro-batch size (1 unless shown), sp sequence parallelism (+o: its\n"+
		"communication overlapped), z1 distributed optimizer, rs/rf selective/full recomputation (rfN: N layers a chunk),\n"+
		"fN/lN layers of the first/last stage (the others an even share); --json writes them as --strategy reads them\n"+
		"GB placer / MLM est.: placer's memory of Megatron's plan (allocated, the most loaded GPU) / Megatron-LM's own\n"+
		"estimate of it (theoretical_memory_usage.py: a second opinion, not a measurement); (over): above the GPU's memory\n")
	for _, r := range rows {
		if strings.Contains(r.MegatronPlan+r.PlacerPlan, "cp=") {
			if _, err = fmt.Fprint(w, "cpN context parallelism: each sequence split over N GPUs (TPxPPxDP x N GPUs in all)\n"); err != nil {
				return err
			}
			break
		}
	}
	if err := unitsLegend(w, rows); err != nil {
		return err
	}
	for _, r := range rows {
		if strings.Contains(r.MegatronPlan+r.PlacerPlan, "stage-tp=") {
			_, err = fmt.Fprint(w, "tF:M:L tensor-parallel degrees per stage (first, middle, last; every stage's where the middle ones differ),\n"+
				"TPxPPxDP then the largest\n")
			break
		}
	}
	return err
}

// CompactPlan writes a plan at cluster scale (as plan.ParseStrategy
// reads it) short enough for a table column: "8x16x48 v7 b2 sp+o z1 rs"
// (cpN the context-parallel degree; the micro-batch size shown when it is not 1; tF:M:L the per-stage
// tensor-parallel degrees, TP then the largest; z1 the distributed
// optimizer, rs and rf selective and full recomputation, fN and lN the
// first and last stages' layers where uneven);
// text it cannot read is returned as it is.
func CompactPlan(text string) string {
	s, err := plan.ParseStrategy(text)
	if err != nil {
		return text
	}
	parts := []string{fmt.Sprintf("%dx%dx%d", s.MaxTensor(), s.PipelineDegree(), s.ReplicaCount())}
	if s.ContextDegree() > 1 {
		parts = append(parts, fmt.Sprintf("cp%d", s.ContextDegree()))
	}
	if ts := s.TensorStages; ts != nil {
		// tF:M:L (first, middle, last) where the stages between share
		// one degree, else every stage's; TP above is the largest.
		d := ts
		if len(ts) > 3 && slices.Min(ts[1:len(ts)-1]) == slices.Max(ts[1:len(ts)-1]) {
			d = []int{ts[0], ts[1], ts[len(ts)-1]}
		}
		t := make([]string, len(d))
		for i, x := range d {
			t[i] = strconv.Itoa(x)
		}
		parts = append(parts, "t"+strings.Join(t, ":"))
	}
	if s.VirtualStages() > 1 {
		parts = append(parts, fmt.Sprintf("v%d", s.VirtualStages()))
	}
	if s.MicroBatchSize > 1 {
		parts = append(parts, fmt.Sprintf("b%d", s.MicroBatchSize))
	}
	switch {
	case s.TPOverlap:
		parts = append(parts, "sp+o")
	case s.SequenceParallel:
		parts = append(parts, "sp")
	}
	if s.DistOpt {
		parts = append(parts, "z1")
	}
	if s.FSDP {
		parts = append(parts, "fsdp")
	}
	if s.Recompute != plan.NoRecompute {
		rc := "r" + string(s.Recompute)[:1] // rs, rf
		if s.RecomputeLayers > 0 {
			rc += strconv.Itoa(s.RecomputeLayers) // rf3: 3 layers a model chunk
		}
		parts = append(parts, rc)
	}
	if s.FirstLayers > 0 {
		parts = append(parts, fmt.Sprintf("f%d", s.FirstLayers))
	}
	if s.LastLayers > 0 {
		parts = append(parts, fmt.Sprintf("l%d", s.LastLayers))
	}
	if s.EmbeddingLayer {
		parts = append(parts, "emb")
	}
	if s.LossLayer {
		parts = append(parts, "loss")
	}
	if s.PipelineDegree() > 1 && s.Sched() == decision.GPipe && s.Schedule != "" {
		parts = append(parts, "gpipe")
	}
	if s.Experts > 1 {
		parts = append(parts, fmt.Sprintf("ep%d", s.Experts))
	}
	if s.ExpertTensor > 0 && s.ExpertTensor != s.MaxTensor() {
		parts = append(parts, fmt.Sprintf("et%d", s.ExpertTensor))
	}
	if s.FP8 != "" {
		f := "fp8"
		if s.FP8 != plan.FP8Current {
			f += "-" + s.FP8
		}
		parts = append(parts, f)
	}
	if s.Imbalance > 1 {
		parts = append(parts, fmt.Sprintf("imb%g", s.Imbalance))
	}
	if s.EPOverlap {
		parts = append(parts, "epo")
	}
	if s.GradBF16 {
		parts = append(parts, "g16")
	}
	// The software settings that differ from placer's default stack (the
	// MoE ones where the plan has expert parallelism).
	if sw := s.Software.Settings().Short(s.Experts > 1); sw != "" {
		parts = append(parts, sw)
	}
	return strings.Join(parts, " ")
}

func pct0(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

// WriteMegatronPlots draws TFLOP/s per GPU per row of the weak-scaling
// table (published, placer's prediction of Megatron's configuration, and
// placer's plan) to path, and the strong-scaling series' MFU against the
// GPUs to path with "-strong" before its extension; it returns the files
// written.
func WriteMegatronPlots(path string, m Megatron) ([]string, error) {
	p := report.BarPlot{Title: "Megatron-LM's table on H100s: TFLOP/s per GPU", YLabel: "TFLOP/s per GPU", Headroom: 1.3}
	var pub, pred, pl []float64
	for _, r := range m.Rows {
		p.Groups = append(p.Groups, r.Model)
		pub = append(pub, r.PublishedTFLOPs)
		pred = append(pred, r.PredictedTFLOPs)
		pl = append(pl, r.PlacerTFLOPs)
	}
	p.Series = []report.BarSeries{{Name: "published (Megatron's plan)", Values: pub}, {Name: "predicted (Megatron's plan)", Values: pred}, {Name: "predicted (placer's plan)", Values: pl}}
	if err := report.WriteBarPlot(path, p); err != nil {
		return nil, err
	}
	files := []string{path}
	if len(m.Strong) == 0 {
		return files, nil
	}
	ext := filepath.Ext(path)
	strong := strings.TrimSuffix(path, ext) + "-strong" + ext
	lp := report.Plot{Title: "GPT-3 175B strong scaling on H100s, batch 1,152", XLabel: "GPUs", YLabel: "MFU (%)", LegendTop: true}
	var pubS, predS, plS report.Series
	pubS = report.Series{Name: "published (the two ends)", Dash: true}
	predS.Name, plS.Name = "predicted (Megatron's plan)", "predicted (placer's plan)"
	for _, r := range m.Strong {
		x := float64(r.GPUs)
		if r.PublishedMFU > 0 {
			pubS.X, pubS.Y = append(pubS.X, x), append(pubS.Y, 100*r.PublishedMFU)
		}
		predS.X, predS.Y = append(predS.X, x), append(predS.Y, 100*r.PredictedMFU)
		plS.X, plS.Y = append(plS.X, x), append(plS.Y, 100*r.PlacerMFU)
	}
	lp.Series = []report.Series{pubS, predS, plS}
	if err := report.WritePlot(strong, lp); err != nil {
		return files, err
	}
	return append(files, strong), nil
}

// Layers is placer report layers: measured transformer blocks against
// the pod's prediction of them (published.CheckLayers) and the GEMM
// efficiency they give (published.FitGEMM).
type Layers struct {
	Measured string `json:"measured,omitempty"`
	Cluster  string `json:"cluster"`
	// GEMMEff is the pod's GEMM efficiency, the one Layers are
	// predicted at.
	GEMMEff float64                `json:"gemm_eff"`
	Layers  []published.LayerCheck `json:"layers,omitempty"`
	Fit     *published.GEMMFit     `json:"fit,omitempty"`
	// StepsFile is the kernelbench file of Steps: whole steps of a
	// row on one GPU and their parts against the pod's prediction
	// (published.CheckSteps).
	StepsFile string                `json:"steps_file,omitempty"`
	Steps     []published.StepCheck `json:"steps,omitempty"`
	// Attention and MoE are the same file's attention cases against the
	// pod's fit (plan.CheckAttention) and its MoE layers' glue in plain
	// PyTorch against placer's fused kernels (published.CheckMoE).
	Attention []kernels.AttentionCheck `json:"attention,omitempty"`
	MoE       []published.MoECheck     `json:"moe,omitempty"`
	// MoEHost are the same file's whole eager MoE layers: wall time with
	// the host, the GPU's busy time, and placer's kernels for the layer
	// (published.CheckMoEHost).
	MoEHost []published.MoEHostCheck `json:"moe_host,omitempty"`
}

// WriteLayers writes the blocks, the errors and the fit, then the whole
// steps.
func WriteLayers(w io.Writer, l Layers) error {
	w, flush := report.FitLines(w)
	defer flush()
	if len(l.Layers) > 0 {
		if err := writeBlocks(w, l); err != nil {
			return err
		}
	}
	sections := []struct {
		has   bool
		write func(io.Writer, Layers) error
	}{{len(l.Steps) > 0, writeSteps}, {len(l.Attention) > 0, writeAttention}, {len(l.MoE) > 0, writeMoE}, {len(l.MoEHost) > 0, writeMoEHost}}
	first := len(l.Layers) == 0
	for _, sec := range sections {
		if !sec.has {
			continue
		}
		if !first {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		first = false
		if err := sec.write(w, l); err != nil {
			return err
		}
	}
	return nil
}

// writeAttention writes each measured attention case against the pod's
// fit of its backend, and the mean error.
func writeAttention(w io.Writer, l Layers) error {
	if _, err := fmt.Fprintf(w, "Fused attention, causal, by shape (%s), against %s's fit of each backend, ms:\n", l.StepsFile, l.Cluster); err != nil {
		return err
	}
	var rows [][]string
	type sums struct{ n, f, b float64 }
	by := map[string]*sums{}
	var order []string
	for _, c := range l.Attention {
		ef, eb := c.FwdPredicted/c.FwdMeasured-1, c.BwdPredicted/c.BwdMeasured-1
		s := by[c.Backend]
		if s == nil {
			s = &sums{}
			by[c.Backend] = s
			order = append(order, c.Backend)
		}
		s.n, s.f, s.b = s.n+1, s.f+math.Abs(ef), s.b+math.Abs(eb)
		rows = append(rows, []string{strings.TrimSuffix(c.Name, "."+c.Backend), c.Backend,
			fmt.Sprintf("%d x %d x %d", c.Batch, c.Heads, c.Seq), strconv.Itoa(c.HeadDim),
			fmt.Sprintf("%.3f", 1e3*c.FwdMeasured), fmt.Sprintf("%.3f", 1e3*c.FwdPredicted), fmt.Sprintf("%+.1f%%", 100*ef),
			fmt.Sprintf("%.3f", 1e3*c.BwdMeasured), fmt.Sprintf("%.3f", 1e3*c.BwdPredicted), fmt.Sprintf("%+.1f%%", 100*eb)})
	}
	header := []string{"case", "backend", "batch x heads x seq", "head dim", "fwd", "predicted", "error", "bwd", "predicted", "error"}
	if err := report.TableFit(w, header, rows, nil); err != nil {
		return err
	}
	var means []string
	for _, b := range order {
		s := by[b]
		means = append(means, fmt.Sprintf("%s forward %.1f%%, backward %.1f%%", b, 100*s.f/s.n, 100*s.b/s.n))
	}
	_, err := fmt.Fprintf(w, "mean |error|: %s (t = F/R(d) + Beta E + T0: docs/hardware.md, \"Fused attention by shape\")\n",
		strings.Join(means, "; "))
	return err
}

// writeMoE writes the MoE layer's glue measured in plain PyTorch against
// placer's fused kernels.
func writeMoE(w io.Writer, l Layers) error {
	if _, err := fmt.Fprintf(w, "An MoE layer besides its experts, one GPU (%s): plain PyTorch against the fused kernels %s costs, forward + backward, ms:\n", l.StepsFile, l.Cluster); err != nil {
		return err
	}
	var rows [][]string
	for _, c := range l.MoE {
		pred, ratio := "not costed", "-"
		if c.Predicted > 0 {
			pred, ratio = fmt.Sprintf("%.3f", 1e3*c.Predicted), fmt.Sprintf("%.1fx", c.Measured/c.Predicted)
		}
		rows = append(rows, []string{c.Model, c.Part, strconv.Itoa(c.Tokens), fmt.Sprintf("%.3f", 1e3*c.Measured), pred, ratio})
	}
	if err := report.TableFit(w, []string{"model", "part", "tokens", "PyTorch", "placer", "PyTorch / placer"}, rows, nil); err != nil {
		return err
	}
	_, err := fmt.Fprint(w, "router: GEMM, softmax, top-k; permute: argsort and gather of the top-k copies; unpermute: their weighted sum\n"+
		"(index_add); host_sync: the tokens per expert copied to the host (the all-to-all dispatcher's, once a layer). placer\n"+
		"costs Megatron-Core's fused permutation (moe_permute_fusion), not plain PyTorch's\n")
	return err
}

// writeMoEHost writes each whole eager MoE layer: its wall time, the
// GPU's busy time in it, and placer's kernels for it.
func writeMoEHost(w io.Writer, l Layers) error {
	if _, err := fmt.Fprintf(w, "A whole MoE layer run eagerly on one GPU (%s): wall time with the host, the GPU's busy time, and the kernels %s costs, forward + backward, ms:\n", l.StepsFile, l.Cluster); err != nil {
		return err
	}
	var rows [][]string
	for _, c := range l.MoEHost {
		busy, kernels, share := "-", "-", "-"
		if c.Busy > 0 {
			busy, kernels, share = fmt.Sprintf("%.3f", 1e3*c.Busy), strconv.Itoa(c.Kernels), report.Percent(c.BusyShare)
		}
		rows = append(rows, []string{c.Model, c.Mode, strconv.Itoa(c.Tokens), strconv.Itoa(c.LocalExperts), fmt.Sprintf("%.3f", 1e3*c.Wall),
			busy, kernels, share, fmt.Sprintf("%.3f", 1e3*c.Predicted), fmt.Sprintf("%.2fx", c.Wall/c.Predicted)})
	}
	if err := report.TableFit(w, []string{"model", "experts as", "tokens", "local experts", "wall", "GPU busy", "kernels", "busy share", "placer", "wall / placer"}, rows, nil); err != nil {
		return err
	}
	_, err := fmt.Fprint(w, "loop: one GEMM pair per expert; grouped: torch._grouped_mm. A busy share well below 100% is a layer that waits\n"+
		"on its host (the tokens-per-expert sync and the launches after it), which placer does not cost\n")
	return err
}

// writeSteps writes each whole one-GPU step and its parts, measured
// against predicted.
func writeSteps(w io.Writer, l Layers) error {
	if _, err := fmt.Fprintf(w, "One GPU's whole step a row, no communication (%s), against %s's prediction, ms:\n", l.StepsFile, l.Cluster); err != nil {
		return err
	}
	header := []string{"row", "micro-batches x layers", "step", "predicted", "error", "blocks", "predicted", "between", "predicted"}
	ms := func(v float64) string { return fmt.Sprintf("%.2f", 1e3*v) }
	var rows, parts [][]string
	part := func(row, name string, measured, predicted float64) {
		if measured > 0 {
			parts = append(parts, []string{row, name, ms(measured), ms(predicted), fmt.Sprintf("%+.1f%%", 100*(predicted/measured-1))})
		}
	}
	for _, c := range l.Steps {
		rows = append(rows, []string{c.Row, fmt.Sprintf("%d x %d", c.MicroBatches, c.Layers), ms(c.Measured), ms(c.Predicted),
			fmt.Sprintf("%+.1f%%", 100*c.Error), ms(c.BlocksMeasured), ms(c.BlocksPredicted), ms(c.BetweenMeasured), ms(c.BetweenPredicted)})
		part(c.Row, "output layer + cross-entropy", c.HeadMeasured, c.HeadPredicted)
		part(c.Row, "embedding", c.EmbeddingMeasured, c.EmbeddingPredicted)
		part(c.Row, fmt.Sprintf("Adam, %.1fM parameters", c.AdamParams/1e6), c.AdamMeasured, c.AdamPredicted)
	}
	if err := report.TableFit(w, header, rows, nil); err != nil {
		return err
	}
	if len(parts) > 0 {
		if _, err := fmt.Fprintln(w, "Its parts, ms:"); err != nil {
			return err
		}
		if err := report.TableFit(w, []string{"row", "part", "measured", "predicted", "error"}, parts, nil); err != nil {
			return err
		}
	}
	_, err := fmt.Fprint(w, "step: the micro-batches' embedding, blocks, output layer and cross-entropy, forward and backward, measured in plain\n"+
		"PyTorch (tools/measure/kernelbench); blocks: the block measured alone, times micro-batches x layers; between: the step less its\n"+
		"blocks, predicted with plain PyTorch's addition of each micro-batch's gradients into the last (Megatron-Core fuses it\n"+
		"into its GEMMs); attention: the backend the file names, else the pod's first (cuDNN on H100);\n"+
		"head, embedding: one micro-batch's forward and backward (placer: Megatron-Core's, the FP32 main-gradient add included);\n"+
		"adam: fused Adam over the distributed optimizer's shard\n")
	return err
}

// writeBlocks writes the blocks, the errors and the fit.
func writeBlocks(w io.Writer, l Layers) error {
	if _, err := fmt.Fprintf(w, "One transformer block a row, measured (%s) against %s's prediction (GEMMs at %.3f of the BF16 peak):\n", l.Measured, l.Cluster, l.GEMMEff); err != nil {
		return err
	}
	header := []string{"row", "measured ms", "predicted ms", "error", "at the fit", "fitted to the others", "head measured ms", "head predicted ms"}
	var rows [][]string
	var sumAbs, most float64
	for i, c := range l.Layers {
		head, headP := "-", "-"
		if c.HeadMeasured > 0 {
			head, headP = fmt.Sprintf("%.3f", 1e3*c.HeadMeasured), fmt.Sprintf("%.3f", 1e3*c.HeadPredicted)
		}
		fit := l.Fit.Layers[i]
		rows = append(rows, []string{c.Name, fmt.Sprintf("%.3f", 1e3*c.Measured), fmt.Sprintf("%.3f", 1e3*c.Predicted),
			fmt.Sprintf("%+.1f%%", 100*c.Error), fmt.Sprintf("%+.1f%%", 100*fit.Error), fmt.Sprintf("%+.1f%%", 100*fit.LeaveOneOut), head, headP})
		sumAbs += max(c.Error, -c.Error)
		most = max(most, max(c.Error, -c.Error))
	}
	if err := report.TableFit(w, header, rows, []int{7, 6}); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "error: mean |error| %s, largest %s\n"+
		"the GEMM efficiency these blocks give: %.4f of the BF16 peak (every other kernel as the pod costs it); \"at the fit\" is each\n"+
		"block at it, \"fitted to the others\" at the efficiency the other blocks give (leave one out)\n"+
		"head: the output layer and its cross-entropy (measured in plain PyTorch; placer costs Megatron-Core's unfused cross-entropy)\n",
		report.Percent(sumAbs/float64(len(l.Layers))), report.Percent(most), l.Fit.Eff)
	return err
}

// speedupCell is a row's speedup where both plans are inside the checked
// regime, else what is unchecked.
func speedupCell(r MegatronRow) string {
	if len(r.MegatronUnchecked) > 0 || len(r.PlacerUnchecked) > 0 {
		u := append(append([]string(nil), r.MegatronUnchecked...), r.PlacerUnchecked...)
		slices.Sort(u)
		return report.Wrap("unchecked: "+strings.Join(slices.Compact(u), ", "), 20)
	}
	return fmt.Sprintf("%.3fx", r.Speedup)
}

// checkedSpeedupNote says the geometric mean speedup over the rows whose
// plans are both inside the checked regime.
func checkedSpeedupNote(m Megatron) string {
	if m.CheckedRows == 0 {
		return "no row's two plans are both inside the checked regime"
	}
	rows := fmt.Sprintf("the %d rows whose two plans are", m.CheckedRows)
	if m.CheckedRows == 1 {
		rows = "the one row whose two plans are"
	}
	return fmt.Sprintf("%.3fx over %s inside the checked regime", m.CheckedSpeedup, rows)
}

// bridgeModel is a Bridge row's model, "(reg.)" beside it where
// the framework's tracker lists the row's figure as a regression of its
// release.
func bridgeModel(r MegatronRow) string {
	if r.Regression != "" {
		return r.Model + " (reg.)"
	}
	return r.Model
}
