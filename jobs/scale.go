package jobs

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/placer/placer/evaluate/profile"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/inputs"
	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/fail"
	"github.com/placer/placer/internal/rank"
	exportjob "github.com/placer/placer/jobs/export"
	"github.com/placer/placer/optimize"
	"github.com/placer/placer/planner"
	"github.com/placer/placer/planner/bench/calibration"
	"github.com/placer/placer/planner/plan"
	"github.com/placer/placer/planner/published"
	"github.com/placer/placer/planner/search"
	"github.com/placer/placer/report"
	"github.com/placer/placer/report/plans"
	planexport "github.com/placer/placer/workloads/export/plans"
	"gonum.org/v1/gonum/stat"
)

// ScaleOptions are the inputs of an evaluation or a search at cluster
// scale: a transformer by its shape on a pod of nodes (DESIGN §12).
type ScaleOptions struct {
	// Workload is the model: "gpt:layers=96,hidden=12288,heads=96,
	// seq=4096,vocab=131072,batch=1152" or "llama:...".
	Workload string
	// Cluster is the pod, PRESET:NODES ("dgx-h100:288"); "" = as many
	// DGX H100 nodes as GPUs takes.
	Cluster string
	GPUs    int    // the pod's GPUs, when Cluster is "" (or to check it)
	Profile string // a layers profile file pricing what it measured ("" = the roofline alone)
	// MemoryMargin is the share of each GPU's memory a plan leaves free
	// to fit (--memory-margin; 0: none).
	MemoryMargin float64
	Strat        string // the plan, e.g. "tp=8,pp=6,dp=48,mbs=1" (eval); what the search keeps of it (search: search.SpaceOf)
	// PlanFile is eval's plan as a file: a search's -o result (its best
	// plan) or an eval's -o report, read as export reads it
	// (exportjob.PlanRule); "" = Strat.
	PlanFile string
	// Placement is eval's --placement at cluster scale: the plan file,
	// as PlanFile ("" or "single" = none; both naming files is a usage
	// error).
	Placement string
	Out       string // write the search's result here ("" = none)
	// For is the framework the search's plans are for (search only:
	// planexport.SearchTarget; "" = planexport.DefaultSearchTarget).
	For string
	// AllowTight keeps the search's "tight" plans (search.Space.AllowTight;
	// placer search --allow-tight).
	AllowTight bool
	// Tie is which plan of a tie the search answers with (placer search
	// --tie: report.TieFastest, the default, or report.TieCheapest, the
	// cheapest to run: report.RunCost).
	Tie string
	// BestOnly leaves the runners up out of the search's report (their
	// plans neither evaluated alone nor checked, no tie): the same
	// search and the same answer at --tie fastest, for callers that
	// read only the answer (placer size, over many clusters).
	BestOnly bool
	// NoHints leaves out of a refusal (no plan fits, or none to try) the
	// hints that are searched before they are offered (more nodes, fewer
	// nodes, LoRA): the cause alone, for callers that ask many clusters
	// and read only whether each has a plan (placer size).
	NoHints bool
}

func (o ScaleOptions) inputs() (transformer.Spec, plan.Pod, error) {
	m, p, err := inputs.Transformer(o.Workload, inputs.PodSpec{Pod: o.Cluster, GPUs: o.GPUs, Profile: o.Profile, MemoryMargin: o.MemoryMargin})
	if err == nil && !p.CPU() {
		p.MemoryError = published.VerdictError(m, o.Strat, p) // a peak within it of the limit is tight
	}
	return m, p, err
}

func scalePlan(m transformer.Spec, p plan.Pod, r planner.Result) plans.ScalePlan {
	if r.HostStages == nil {
		// A search's plans come without their stages' host (the search
		// leaves it out): the same plan evaluated alone has it.
		if full, err := planner.Evaluate(m, r.Plan.Strategy, p); err == nil && full.Step == r.Step {
			r = full
		}
	}
	sp := plans.ScalePlan{Model: m.String(), Cluster: p.Name, GPUs: p.GPUs(), Strategy: r.Plan.String(), Stack: r.Plan.Stack(), Result: r, Kernels: p.Kernels.Provenance}
	by := r.PricedBy()
	sp.PricedBy = &by
	if pr := p.Profile; pr != nil {
		sp.ProfileLayer = pr.Software.TimedLayer()
		if r.Plan.FP8 != "" && r.Sources != nil && r.Sources.Layers != profile.Modelled {
			sp.ProfileFP8 = pr.Software.FP8 // the layers measured under the plan's recipe
		}
	}
	if pr := p.Profile; pr != nil && !pr.Complete {
		sp.ProfileMissing = pr.Missing()
		if len(sp.ProfileMissing) == 0 {
			// Everything it asked for measured, the run not ended
			// cleanly (the measurements failed after their last line).
			sp.ProfileMissing = []string{"nothing it can name (its run did not end cleanly)"}
		}
	}
	if p.CPU() {
		// A CPU profile's pod: every published row ran on GPUs, and its
		// processes allocate through the host's malloc, not PyTorch's
		// caching allocator (no Allocator).
		sp.DeviceKind = plans.DeviceCPU
		sp.StackNote = cpuStack(p.Profile)
		sp.CheckedNote = "no published row: they ran on GPUs, this pod is a CPU's (make test-profile-cpu runs its plans)"
		return sp
	}
	if r.Allocator == nil {
		sp.Result = planner.WithAllocator(m, p, r)
	}
	sp.Check, sp.RegimeError = check(m, r.Plan.Strategy, p)
	me := published.MemoryErrorOf(published.Checked(), published.TraitsOf(m, r.Plan.Strategy, p))
	sp.PeakRegimeError = &me
	if se, err := calibration.For(m, r.Plan.Strategy, p); err == nil {
		sp.StatedError = &se
	}
	return sp
}

// checkFigures refuses plan r of workload m as an answer where a figure
// is not one: a step time or throughput not finite or negative, a count
// of bytes negative or past int64's range (transformer.Bytes saturates
// there). The workload's sizes are bounded before anything is computed
// (transformer.MaxCount), so this never fires on a parsed workload; it
// holds the rule that no overflow reaches an answer as a number.
func checkFigures(m transformer.Spec, r planner.Result) error {
	for _, f := range []float64{r.Step, r.TFLOPs, r.MFU, r.Compute} {
		if !(f >= 0 && f <= math.MaxFloat64) {
			return fmt.Errorf("workload %s: plan %s: a time or throughput is %g: too large to count", m, r.Plan, f)
		}
	}
	for _, b := range []int64{r.Memory, r.Weights, r.Grads, r.OptState, r.Activations} {
		if b < 0 || b == math.MaxInt64 {
			return fmt.Errorf("workload %s: plan %s: its memory passes int64's range: too large to count", m, r.Plan)
		}
	}
	return nil
}

// cpuStack is the stack line of a plan priced from CPU profile pr: the
// profile's own run (the layer it timed, torch, the backend), not the
// GPU stack (placer's default: Megatron-Core with Transformer Engine's
// kernels) a plan's keys would name, whose kernels cost nothing here.
func cpuStack(pr *profile.Profile) string {
	layer := "placer's own PyTorch layer (placer_torch.profile.layers)"
	sw := pr.Software
	if t := sw.TimedLayer(); t != "" {
		layer = t
	}
	return fmt.Sprintf("the profile's run on the CPU: %s, torch %s, %s; its layers measured, no GPU stack's kernels costed", layer, sw.Torch, sw.Backend)
}

// offRow adds to a published plan's unchecked features its own row when
// placer predicts that row outside the tolerance (published.CheckedDense,
// CheckedMoE): a plan whose own figure placer misses is not inside the
// checked regime, whatever rows vouch for its features.
func offRow(m transformer.Spec, e float64, unchecked []string) []string {
	tol := published.CheckedDense
	if m.MoE() {
		tol = published.CheckedMoE
	}
	if abs(e) > tol {
		return append(unchecked, fmt.Sprintf("its row (%+.0f%%)", 100*e))
	}
	return unchecked
}

// check is published.CheckPlan of plan s of model m on pod p over the
// published rows (published.Checked: the committed table, not
// recomputed), and the error of its regime over the same rows.
func check(m transformer.Spec, s plan.Strategy, p plan.Pod) (*published.Check, *published.RegimeError) {
	rows := published.Checked()
	t := published.TraitsOf(m, s, p)
	c := published.CheckPlan(rows, t)
	e := published.OutOfSampleOf(rows, published.RegimeOf(t))
	return &c, &e
}

// unchecked is the traits in which plan s of model m on pod p differs
// from the nearest published row (check: "precision", "scale"): nil
// where a row checks it.
func unchecked(m transformer.Spec, s plan.Strategy, p plan.Pod) []string {
	c, _ := check(m, s, p)
	if c.Row == nil {
		return []string{"no published row"}
	}
	var out []string
	for _, d := range c.Differences {
		out = append(out, d.Trait)
	}
	return out
}

// ScaleEval predicts one plan's training step (placer eval --workload
// gpt:... --cluster ... --strategy tp=8,pp=6,...).
func ScaleEval(_ context.Context, o ScaleOptions) (plans.ScalePlan, error) {
	file, err := exportjob.PlanOrPlacement(o.PlanFile, o.Placement)
	if err != nil {
		return plans.ScalePlan{}, err
	}
	if o.PlanFile = file; file == "single" {
		o.PlanFile = "" // --placement's default: no file
	}
	m, p, err := o.inputs()
	if err != nil {
		return plans.ScalePlan{}, err
	}
	var s plan.Strategy
	if o.PlanFile != "" {
		// A plan file's plan, read as export reads it: one reader, so
		// what export writes of a file is what eval costs of it.
		// No framework ("" format): the plan is costed on the stack the
		// file records.
		ep, err := exportjob.Options{Scale: exportjob.ScaleOptions{Workload: o.Workload}, Placement: o.PlanFile, Strategy: o.Strat}.TransformerPlan(m, p, "")
		if err != nil {
			return plans.ScalePlan{}, err
		}
		s = ep.Plan.Strategy
	} else {
		// The plan is the command line's (--strategy): one that does not
		// parse, or does not fit the model and pod, is a usage error. The
		// keys left out take their defaults (plan.Resolve).
		w, err := scaleStrategy(m, p, o.Strat)
		if err != nil {
			return plans.ScalePlan{}, err
		}
		if _, err := plan.Resolve(m, w.Strategy, p); err != nil {
			return plans.ScalePlan{}, fail.AsUsage(err)
		}
		s = w.Strategy
	}
	r, err := planner.Evaluate(m, s, p)
	if err != nil {
		return plans.ScalePlan{}, err
	}
	if err := checkFigures(m, r); err != nil {
		return plans.ScalePlan{}, err
	}
	return scalePlan(m, p, r), nil
}

// scaleStrategy reads a plan written on the command line (--strategy)
// for model m on pod p and checks the keys it names against them
// (plan.Written.Check), whatever the keys it leaves out: placer eval
// and placer search both read their --strategy here, so a key one
// refuses the other refuses with the same line, a usage error (exit 2),
// before anything is evaluated or searched.
func scaleStrategy(m transformer.Spec, p plan.Pod, text string) (plan.Written, error) {
	w, err := plan.ParseWritten(text)
	if err != nil {
		return w, fail.AsUsage(err)
	}
	if err := w.Check(m, p); err != nil {
		return w, fail.AsUsage(err)
	}
	return w, nil
}

// DefaultMemoryMargin and MaxMemoryMargin are --memory-margin's default
// and largest value (scale's).
const (
	DefaultMemoryMargin = plan.DefaultMemoryMargin
	MaxMemoryMargin     = plan.MaxMemoryMargin
)

// SearchTargets are the frameworks placer search --for names at cluster
// scale (planexport.SearchTarget), DefaultSearchTarget its default.
var SearchTargets = planexport.SearchTargets

// DefaultSearchTarget is --for's default (planexport.DefaultSearchTarget).
const DefaultSearchTarget = planexport.DefaultSearchTarget

// ScaleSearch finds the fastest plan that fits (placer search --workload
// gpt:... --cluster ...), keeping what o.Strat names (search.SpaceOf: the
// run's FP8 recipe, gradients' precision, a degree ...), and writes it to
// Out.
func ScaleSearch(ctx context.Context, o ScaleOptions) (plans.ScaleSearch, error) {
	if err := plans.CheckTie(o.Tie); err != nil {
		return plans.ScaleSearch{}, fail.AsUsage(err)
	}
	m, p, err := o.inputs()
	if err != nil {
		return plans.ScaleSearch{}, err
	}
	space, err := o.space(m, p)
	if err != nil {
		return plans.ScaleSearch{}, err
	}
	start := optimize.ProcessCPU()
	got, err := search.Search(ctx, m, p, space)
	if err != nil {
		return plans.ScaleSearch{}, err
	}
	if !got.Found {
		return plans.ScaleSearch{}, noPlan(ctx, o, m, p, space.For.Name, got)
	}
	for _, r := range got.Top {
		if err := checkFigures(m, r); err != nil {
			return plans.ScaleSearch{}, err
		}
	}
	rep := plans.ScaleSearch{Best: scalePlan(m, p, got.Best), Evaluated: got.Evaluated, Fitting: got.Fitting,
		Tight: got.Tight, AllowTight: o.AllowTight, Refused: got.Refused, RefusedWhy: got.RefusedWhy,
		CPU: (optimize.ProcessCPU() - start).Seconds(), Out: o.Out, Kept: o.Strat, For: space.For.Name}
	if o.BestOnly {
		return rep, nil
	}
	steps := []float64{got.Best.Step}
	for _, r := range got.Top[1:] {
		rep.Runners = append(rep.Runners, scalePlan(m, p, r))
		steps = append(steps, r.Step)
	}
	if e := rep.Best.StatedError; e != nil && e.Pairs > 0 {
		rep.Tied = plans.TiedWithin(steps, e.PairMean)
	}
	answerTie(&rep, o.Tie)
	if o.Tie != TieCheapest {
		knownFirst(&rep)
	}
	rep.Switches = space.Switches(rep.Best.Plan.Strategy)
	if o.Out != "" {
		if err := atomicfile.Write(o.Out, func(w io.Writer) error { return report.JSON(w, rep) }); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// TieFastest and TieCheapest are placer search --tie's values
// (report's): the fastest predicted plan of a tie, the default, or the
// cheapest to run.
const (
	TieFastest  = plans.TieFastest
	TieCheapest = plans.TieCheapest
)

// answerTie orders rep's tie by what is cheaper to run (report.OrderTie)
// and, where the answer is the tie's cheapest (--tie cheapest), makes it
// rep.Best, the fastest going back among the runners up, fastest first.
func answerTie(rep *plans.ScaleSearch, answer string) {
	all := append([]plans.ScalePlan{rep.Best}, rep.Runners...)
	tie, idx := plans.OrderTie(all, rep.Tied, answer)
	if rep.Tie = tie; tie == nil || answer != plans.TieCheapest || idx[0] == 0 {
		return
	}
	rep.Best = all[idx[0]]
	rep.Runners = slices.Delete(all, idx[0], idx[0]+1)
}

// knownFirst orders, where the fastest plan's facts are outside the
// bench (its stated error names facts no development row shares:
// calibration.Reach), the plans within its stated error of its step by
// what the bench knows best: the fewest facts outside, then the
// narrowest stated error, then the fastest. The first becomes rep.Best,
// the fastest going back among the runners up; rep.Known says so. A
// search whose fastest plan the bench covers is left as it is.
func knownFirst(rep *plans.ScaleSearch) {
	se := rep.Best.StatedError
	if se == nil || len(se.Outside) == 0 {
		return
	}
	all := append([]plans.ScalePlan{rep.Best}, rep.Runners...)
	near := plans.TiedWithin(stepsOf(all), se.Bound)
	says := func(e *calibration.Error) []string {
		var out []string
		if e != nil {
			for _, o := range e.Outside {
				out = append(out, o.Says)
			}
		}
		return out
	}
	idx := make([]int, near)
	for i := range idx {
		idx[i] = i
	}
	outside := func(i int) (int, float64) {
		e := all[i].StatedError
		if e == nil || e.Rows == 0 {
			return math.MaxInt, math.Inf(1)
		}
		return len(e.Outside), e.Bound
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		na, ba := outside(a)
		nb, bb := outside(b)
		switch {
		case na != nb:
			return cmp.Compare(na, nb)
		case ba != bb:
			return cmp.Compare(ba, bb)
		}
		return cmp.Compare(all[a].Step, all[b].Step)
	})
	k := &plans.KnownOrder{Outside: says(se), Window: se.Bound, Near: near, Fastest: all[0].Strategy, Answer: all[0].Strategy, AnswerError: se.Bound}
	rep.Known = k
	if near < 2 || idx[0] == 0 {
		return
	}
	ans := all[idx[0]]
	k.Answer, k.AnswerOutside = ans.Strategy, says(ans.StatedError)
	if ans.StatedError != nil {
		k.AnswerError = ans.StatedError.Bound
	}
	rep.Best = ans
	rep.Runners = slices.Delete(all, idx[0], idx[0]+1)
}

// stepsOf is the plans' steps, in order.
func stepsOf(ps []plans.ScalePlan) []float64 {
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = p.Step
	}
	return out
}

// space is the plans placer search tries for o of model m on pod p: the
// space o.Strat keeps, the plans --for's framework runs (its export's
// check on each), on that framework's stack.
func (o ScaleOptions) space(m transformer.Spec, p plan.Pod) (search.Space, error) {
	if _, err := scaleStrategy(m, p, o.Strat); err != nil {
		return search.Space{}, err
	}
	space, err := search.SpaceOf(o.Strat)
	if err != nil {
		return search.Space{}, fail.Usagef("--strategy: %w", err)
	}
	space.Top = 6
	space.AllowTight = o.AllowTight
	if space.For, err = planexport.SearchTarget(o.For, m, p.GPUs()); err != nil {
		return search.Space{}, fail.AsUsage(err) // --for names no framework
	}
	// Every plan is costed on the stack its framework's file runs
	// (torchtitan's compiled; Megatron-LM's and DeepSpeed's placer's
	// default), a stack --strategy names kept where that framework runs it.
	if space.Software, err = planexport.ForSoftware(space.For.Name, space.Software); err != nil {
		return search.Space{}, fail.AsUsage(err)
	}
	return space.WithLevers(space.For.Name), nil // the recipe switches that framework writes, as the search chooses
}

// noPlan is the one-line error of search o (for framework forName on
// model m and pod p) that found no plan: every plan of the space refused
// by the framework's export, with the first reason and the frameworks
// whose export runs that plan (--for megatron-bridge for LoRA); no plan
// at all, where the batch has too few sequences to spread over the
// GPUs; or none fitting the GPUs' memory, with the plans set aside as
// tight or refused, the least memory a plan needed and what would lower
// it (lessMemory: each hint searched first, offered only where it finds
// a plan).
func noPlan(ctx context.Context, o ScaleOptions, m transformer.Spec, p plan.Pod, forName string, got search.Result) error {
	kept := ""
	if o.Strat != "" {
		kept = " keeping " + o.Strat
	}
	if got.Evaluated == 0 && got.Refused > 0 {
		return fmt.Errorf("workload %s on %s: no plan%s runs under %s: its export refuses all %d plans of the space (first: %s); %s", m, p.Name, kept, forName, got.Refused, got.RefusedWhy, runsUnder(m, p, forName, got.RefusedPlan))
	}
	if got.Evaluated == 0 && got.Refused == 0 {
		return noGrid(ctx, o, m, p, kept)
	}
	runs := ""
	if forName != "" {
		runs = " for " + forName
		if forName != "any" {
			runs += "; --for any searches every plan"
		}
	}
	rank := "GPU"
	if p.CPU() {
		rank = "process"
	}
	if got.Tight > 0 {
		runs += fmt.Sprintf("; %d tight, set aside: --allow-tight keeps them", got.Tight)
	}
	if got.Refused > 0 {
		runs += "; " + plans.RefusedLine(got.Refused, forName, got.RefusedWhy)
	}
	least := ""
	if got.Evaluated > 0 {
		l := got.Least
		least = fmt.Sprintf("; the least a plan needs is %s a %s (%s)", plans.GB(l.Memory), rank, l.Plan)
		if hints := lessMemory(ctx, o, m, p, l.Plan); len(hints) > 0 {
			least += ": " + strings.Join(hints, ", ")
		}
	}
	return fmt.Errorf("workload %s on %s: no plan%s fits %s per %s at a %s margin (%d plans tried%s)%s", m, p.Name, kept, plans.GB(p.Hardware.Memory), rank, report.Percent(p.Margin()), got.Evaluated, runs, least)
}

// noGrid is noPlan's error where the space held no plan at all for
// model m on pod p (o's search, keeping kept): a batch of B sequences
// is at most B data-parallel replicas, and no plan of tensor, pipeline
// and context parallelism spreads each over the rest of the GPUs: the
// largest pod of the same nodes that has a plan (searched, as lessMemory's
// hints are) is named.
func noGrid(ctx context.Context, o ScaleOptions, m transformer.Spec, p plan.Pod, kept string) error {
	cause := fmt.Sprintf("a batch of %d sequences is at most %d data-parallel replicas, and no plan%s of tensor, pipeline and context parallelism spreads them over %d GPUs", m.Batch, m.Batch, kept, p.GPUs())
	if m.Batch == 1 {
		cause = fmt.Sprintf("a batch of 1 sequence is one data-parallel replica, and no plan%s of tensor, pipeline and context parallelism spreads it over %d GPUs", kept, p.GPUs())
	}
	hint := "a larger batch (batch=)"
	if name := nodeName(p); name != "" && !o.NoHints {
		for n := p.Nodes / 2; n >= 1; n /= 2 {
			o2 := o
			o2.Cluster, o2.GPUs = fmt.Sprintf("%s:%d", name, n), 0
			if finds(ctx, o2) {
				hint = fmt.Sprintf("fewer nodes (--cluster %s:%d finds a plan) or a larger batch (batch=)", name, n)
				break
			}
		}
	}
	return fmt.Errorf("workload %s on %s: no plan to try: %s; %s", m, p.Name, cause, hint)
}

// nodeName is pod p's node preset as --cluster names it ("dgx-h100"),
// "" for a CPU's pod.
func nodeName(p plan.Pod) string {
	if p.CPU() {
		return ""
	}
	name, _, _ := strings.Cut(p.Name, ":")
	name, _, _ = strings.Cut(name, ",")
	return name
}

// finds reports whether search o finds a plan: a hint's check, run
// before it is offered (its own failure is no answer: false).
func finds(ctx context.Context, o ScaleOptions) bool {
	m, p, err := o.inputs()
	if err != nil {
		return false
	}
	space, err := o.space(m, p)
	if err != nil {
		return false
	}
	got, err := search.Search(ctx, m, p, space)
	return err == nil && got.Found
}

// withKey is strategy text strat with key k set to v (and the keys in
// drop left out): a hint's --strategy, keeping what the user kept.
func withKey(strat, k, v string, drop ...string) string {
	var out []string
	for _, kv := range strings.Split(strat, ",") {
		key, _, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if key == "" || key == k || slices.Contains(drop, key) {
			continue
		}
		out = append(out, kv)
	}
	return strings.Join(append(out, k+"="+v), ",")
}

// runsUnder is the hint of a search whose framework's export refused
// every plan: the frameworks (--for) whose export runs the first plan
// refused (LoRA: megatron-bridge), else --for any.
func runsUnder(m transformer.Spec, p plan.Pod, forName string, refused plan.Plan) string {
	var runs []string
	for _, t := range SearchTargets {
		if t != forName && t != "any" && planexport.Check(t, m, refused.Strategy, p.GPUs()) == nil {
			runs = append(runs, "--for "+t)
		}
	}
	if len(runs) == 0 {
		return "--for any searches every plan"
	}
	return strings.Join(runs, " or ") + " runs it (--for any searches every plan)"
}

// maxNodesHint is how many times the pod's nodes lessMemory's "more
// nodes" hint searches up to (doubling): past it the hint is left out.
const maxNodesHint = 16

// lessMemory is what would bring search o, whose least memory (plan
// least) did not fit, under the GPUs' memory, each hint searched before
// it is offered (finds: a hint is a command that gets further, never one
// that fails the same way): the fewest nodes, doubling up to
// maxNodesHint times the pod's, on which a plan fits; LoRA fine-tuning
// (a frozen base: no gradients or optimizer state for it; exported by
// Megatron-Bridge alone) where the model's blocks are LoRA's and the
// plan is not already LoRA; full recomputation where the plan does not
// recompute every layer and the framework runs it.
func lessMemory(ctx context.Context, o ScaleOptions, m transformer.Spec, p plan.Pod, least plan.Plan) []string {
	if o.NoHints {
		return nil
	}
	var hints []string
	if name := nodeName(p); name != "" {
		for k := 2; k <= maxNodesHint; k *= 2 {
			o2 := o
			o2.Cluster, o2.GPUs = fmt.Sprintf("%s:%d", name, k*p.Nodes), 0
			if finds(ctx, o2) {
				hints = append(hints, fmt.Sprintf("more nodes (--cluster %s:%d or more)", name, k*p.Nodes))
				break
			}
		}
	}
	if lora := least.Strategy; !lora.FineTune.LoRA() {
		lora.FineTune.LoRARank = plan.DefaultLoRARank
		o2 := o
		o2.Strat, o2.For = withKey(o.Strat, "peft", "lora"), "megatron-bridge"
		if plan.FineTuneFits(m, lora) == nil && finds(ctx, o2) {
			hints = append(hints, fmt.Sprintf("LoRA fine-tuning (--strategy %s --for megatron-bridge, the export that runs LoRA)", o2.Strat))
		}
	}
	if least.Recompute != plan.FullRecompute {
		o2 := o
		o2.Strat = withKey(o.Strat, "recompute", "full", "recompute-layers", "recompute_layers")
		if finds(ctx, o2) {
			hints = append(hints, fmt.Sprintf("full recomputation (--strategy %s)", o2.Strat))
		}
	}
	return hints
}

// MegatronOptions are placer report megatron's.
type MegatronOptions struct {
	// Plot also draws the table's TFLOP/s to this file and the strong
	// scaling's MFU beside it ("" = none; report.WriteMegatronPlots).
	Plot string
}

// Megatron is placer report megatron: every row of Megatron-LM's
// weak-scaling table and its strong-scaling series, the published
// throughput, placer's prediction of Megatron's own configuration, and
// placer's best plan for the same model, GPUs and batch.
func Megatron(ctx context.Context, o MegatronOptions) (plans.Megatron, error) {
	return megatronReport(ctx, o, megatronRow, bridgeRow)
}

// rowFunc answers one published row of report megatron: megatronRow, or
// bridgeRow for Megatron-Bridge's table (a test passes the same
// answers, each row computed once for all its tests).
type rowFunc func(ctx context.Context, pub published.Row) (plans.MegatronRow, error)

// megatronReport is Megatron with its rows answered by megatron (the
// Megatron-LM tables and Llama 3's) and bridge (Megatron-Bridge's).
func megatronReport(ctx context.Context, o MegatronOptions, megatron, bridge rowFunc) (plans.Megatron, error) {
	rep := plans.Megatron{Hardware: "h100 and a100 presets, dgx pods"}
	row := func(pub published.Row) (plans.MegatronRow, error) { return megatron(ctx, pub) }
	var speedups, pubTFLOPs, predTFLOPs []float64
	var sumAbs, sum, sumFast float64
	for _, pub := range published.MegatronTable() {
		r, err := row(pub)
		if err != nil {
			return rep, err
		}
		rep.Rows = append(rep.Rows, r)
		speedups = append(speedups, r.Speedup)
		pubTFLOPs, predTFLOPs = append(pubTFLOPs, r.PublishedTFLOPs), append(predTFLOPs, r.PredictedTFLOPs)
		sumAbs += abs(r.Error)
		sum += r.Error
		sumFast += abs(r.FastestError)
		rep.MaxAbsError = max(rep.MaxAbsError, abs(r.Error))
	}
	n := float64(len(rep.Rows))
	rep.MeanAbsError, rep.MeanError, rep.FastestMeanAbsError = sumAbs/n, sum/n, sumFast/n
	rep.Spearman = Spearman(pubTFLOPs, predTFLOPs)
	rep.GeomeanSpeedup = stat.GeometricMean(speedups, nil)
	var checked []float64
	for _, r := range rep.Rows {
		if len(r.MegatronUnchecked) == 0 && len(r.PlacerUnchecked) == 0 {
			checked = append(checked, r.Speedup)
		}
	}
	if rep.CheckedRows = len(checked); len(checked) > 0 {
		rep.CheckedSpeedup = stat.GeometricMean(checked, nil)
	}
	for _, pub := range published.MegatronStrongScaling() {
		r, err := row(pub)
		if err != nil {
			return rep, err
		}
		rep.Strong = append(rep.Strong, r)
	}
	for _, pub := range published.MegatronA100() {
		r, err := row(pub)
		if err != nil {
			return rep, err
		}
		rep.A100 = append(rep.A100, r)
	}
	for _, pub := range published.Llama3() {
		r, err := row(pub)
		if err != nil {
			return rep, err
		}
		rep.Llama3 = append(rep.Llama3, r)
	}
	var bAbs, bSum float64
	for _, pub := range published.MegatronBridge() {
		r, err := bridge(ctx, pub)
		if err != nil {
			return rep, err
		}
		rep.Bridge = append(rep.Bridge, r)
		bAbs += abs(r.Error)
		bSum += r.Error
		rep.BridgeMaxAbsError = max(rep.BridgeMaxAbsError, abs(r.Error))
	}
	if n := float64(len(rep.Bridge)); n > 0 {
		rep.BridgeMeanAbsError, rep.BridgeMeanError = bAbs/n, bSum/n
	}
	rep.Samples = megatronSamples(rep)
	if o.Plot != "" {
		files, err := plans.WriteMegatronPlots(o.Plot, rep)
		rep.Plots = files
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// megatronSamples are report megatron's tables' errors in and out of
// sample (published.SampleError): Megatron-LM's H100 table, its 2022
// A100 table and Llama 3's on TFLOP/s, Megatron-Bridge's on tokens/s;
// the strong-scaling series publishes MFU at its ends only, no figure
// of each row.
func megatronSamples(rep plans.Megatron) []plans.TableSample {
	tables := []struct {
		name, set string
		rows      []plans.MegatronRow
		tokens    bool
	}{{"Megatron-LM H100", published.SetMegatronLMH100, rep.Rows, false}, {"Megatron-LM A100 (2022)", published.SetKorthikanti, rep.A100, false},
		{"Llama 3 405B", published.SetLlama3, rep.Llama3, false}, {"Megatron-Bridge 25.11", published.SetBridge, rep.Bridge, true}}
	var out []plans.TableSample
	for _, t := range tables {
		if len(t.rows) == 0 {
			continue
		}
		var measured, in, outs []float64
		for _, r := range t.rows {
			if t.tokens {
				measured, in, outs = append(measured, r.PublishedTokens), append(in, r.PredictedTokens), append(outs, r.OutOfSampleTokens)
			} else {
				measured, in, outs = append(measured, r.PublishedTFLOPs), append(in, r.PredictedTFLOPs), append(outs, r.OutOfSampleTFLOPs)
			}
		}
		_, reset := published.WithoutSource(plan.Pod{}, t.set)
		out = append(out, plans.TableSample{Name: t.name, SampleError: published.SampleErrorOf(t.set, reset, measured, in, outs, Spearman)})
	}
	return out
}

func abs(x float64) float64 { return max(x, -x) }

// Spearman is Spearman's rank correlation of x and y (rank.Spearman).
func Spearman(x, y []float64) float64 { return rank.Spearman(x, y) }

// megatronRow is one published run: placer's prediction of its own
// configuration and placer's best plan (the search's answer), with the
// workload and pod a user gives placer eval and search to get the same
// figures (--workload, --cluster).
func megatronRow(ctx context.Context, pub published.Row) (plans.MegatronRow, error) {
	r, _, _, _, err := megatronRuns(ctx, pub)
	return r, err
}

// megatronRuns is megatronRow with the three predictions it shows:
// Megatron's plan read at the defaults, its fastest reading, and
// placer's plan.
func megatronRuns(ctx context.Context, pub published.Row) (plans.MegatronRow, planner.Result, planner.Result, planner.Result, error) {
	var none planner.Result
	p, err := plan.PodOf(pub.Pod, pub.GPUs)
	if err != nil {
		return plans.MegatronRow{}, none, none, none, err
	}
	own, err := published.MegatronDefault(ctx, pub, p)
	if err != nil {
		return plans.MegatronRow{}, none, none, none, fmt.Errorf("%s: Megatron's plan: %w", pub.Name, err)
	}
	// Out of sample: the same reading with the constants the row's own
	// source chose reset (the same result where it chose none).
	ownOut := own
	if pOut, reset := published.WithoutSource(p, pub.Set); len(reset) > 0 {
		if ownOut, err = published.MegatronDefault(ctx, pub, pOut); err != nil {
			return plans.MegatronRow{}, none, none, none, fmt.Errorf("%s: Megatron's plan out of sample: %w", pub.Name, err)
		}
	}
	fast, err := published.MegatronPlan(ctx, pub, p)
	if err != nil {
		return plans.MegatronRow{}, none, none, none, fmt.Errorf("%s: Megatron's plan, fastest reading: %w", pub.Name, err)
	}
	start := optimize.ProcessCPU()
	// The run's precision (its GEMMs' and its gradients') and the
	// experts' load are settings, not plans: placer's plan keeps the row's.
	// It is a plan Megatron-LM runs (placer search's default --for), as
	// the plan it is held against is.
	target, err := planexport.SearchTarget("megatron", pub.Model, p.GPUs())
	if err != nil {
		return plans.MegatronRow{}, none, none, none, err
	}
	got, err := search.Search(ctx, pub.Model, p, search.Space{FP8: pub.Strategy.FP8, GradBF16: pub.Strategy.GradBF16,
		Imbalance: pub.Strategy.Imbalance, FSDP: pub.Strategy.FSDP, Software: pub.Strategy.Software, FineTune: pub.Strategy.FineTune, For: target})
	if err != nil {
		return plans.MegatronRow{}, none, none, none, err
	}
	if !got.Found {
		return plans.MegatronRow{}, none, none, none, fmt.Errorf("%s: no plan fits", pub.Name)
	}
	r := plans.MegatronRow{Model: pub.Name, GPUs: pub.GPUs, Batch: pub.Model.Batch, Workload: pub.Model.String(), Cluster: p.Name,
		PublishedTFLOPs: pub.TFLOPs, PublishedMFU: pub.MFU,
		MegatronPlan: own.Plan.String(), PredictedTFLOPs: own.TFLOPs, PredictedMFU: own.MFU, MegatronMemory: own.Memory,
		FastestPlan: fast.Plan.String(), FastestTFLOPs: fast.TFLOPs, FastestMFU: fast.MFU,
		PlacerPlan: got.Best.Plan.String(), PlacerTFLOPs: got.Best.TFLOPs, PlacerMFU: got.Best.MFU, PlacerMemory: got.Best.Memory,
		Speedup: own.Step / got.Best.Step, Search: (optimize.ProcessCPU() - start).Seconds()}
	r.MegatronFits, r.PlacerFits = own.Fits, got.Best.Fits
	wo, act := published.MegatronLMEstimate(pub.Model, own.Plan)
	r.MegatronLMEstimate = int64(wo + act)
	r.MegatronUnchecked = unchecked(pub.Model, own.Plan.Strategy, p)
	r.PlacerUnchecked = unchecked(pub.Model, got.Best.Plan.Strategy, p)
	if se, err := calibration.For(pub.Model, own.Plan.Strategy, p); err == nil {
		r.Stated = &se
	}
	if se, err := calibration.For(pub.Model, got.Best.Plan.Strategy, p); err == nil {
		r.PlacerStated = &se
	}
	r.OutOfSampleTFLOPs, r.OutOfSampleStep = ownOut.TFLOPs, ownOut.Step
	if pub.TFLOPs > 0 {
		r.Error = own.TFLOPs/pub.TFLOPs - 1
		r.OutOfSampleError = ownOut.TFLOPs/pub.TFLOPs - 1
		r.FastestError = fast.TFLOPs/pub.TFLOPs - 1
		if pub.Tokens == 0 { // a table of tokens counts its error on them (bridgeRow)
			r.MegatronUnchecked = offRow(pub.Model, r.Error, r.MegatronUnchecked)
		}
	}
	return r, own, fast, got.Best, nil
}

// bridgeRow is one row of Megatron-Bridge's table (published.MegatronBridge):
// megatronRow's figures as that table gives them, tokens a second per
// GPU and TFLOP/s per GPU in Megatron-LM's current count
// (transformer.CausalFLOPs), the error counted on tokens/s (no FLOP count
// enters it: GPT-OSS's published TFLOP/s count its MLP otherwise).
func bridgeRow(ctx context.Context, pub published.Row) (plans.MegatronRow, error) {
	r, own, fast, best, err := megatronRuns(ctx, pub)
	if err != nil {
		return r, err
	}
	gpus := float64(pub.GPUs)
	tokens := float64(pub.Model.Batch) * float64(pub.Model.Seq)
	flops := pub.Model.CausalFLOPs()
	tps := func(x planner.Result) float64 { return tokens / x.Step / gpus }
	tf := func(x planner.Result) float64 { return flops / x.Step / gpus / 1e12 }
	r.Precision = pub.Precision
	r.PublishedTokens, r.Regression = pub.Tokens, pub.Regression
	r.PredictedTokens, r.PredictedTFLOPs = tps(own), tf(own)
	r.FastestTokens, r.FastestTFLOPs = tps(fast), tf(fast)
	r.PlacerTokens, r.PlacerTFLOPs = tps(best), tf(best)
	r.MegatronFits, r.PlacerFits = own.Fits, best.Fits
	r.Error = r.PredictedTokens/pub.Tokens - 1
	r.OutOfSampleTokens = tokens / r.OutOfSampleStep / gpus
	r.OutOfSampleError = r.OutOfSampleTokens/pub.Tokens - 1
	r.FastestError = r.FastestTokens/pub.Tokens - 1
	r.MegatronUnchecked = offRow(pub.Model, r.Error, r.MegatronUnchecked)
	return r, nil
}

// PodPresets lists the node presets of --cluster.
func PodPresets() []string { return plan.PodPresets() }
