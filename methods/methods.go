package methods

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/methods/brkga"
	"github.com/placer/placer/methods/brkga/tuned"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/gdp"
	"github.com/placer/placer/methods/gdp/defaultmodel"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/methods/hdp"
	"github.com/placer/placer/methods/regal"
	regaldefault "github.com/placer/placer/methods/regal/defaultmodel"
	"github.com/placer/placer/methods/rl17"
	"github.com/placer/placer/nn/ppo"
	"github.com/placer/placer/optimize"
)

// Kind says what sort of method an entry is; tables show the kinds in
// this order.
type Kind int

// The kinds.
const (
	Reference Kind = iota // a fixed placement to compare with (single, expert)
	Heuristic             // one-shot constructions (metis, m-etf, ...)
	Search                // classical searches under a budget (local search, SA, BRKGA)
	Default               // TensorFlow's defaults
	Learned               // the learned policies (go, go-zero-shot)
)

func (k Kind) String() string {
	return [...]string{"reference", "heuristic", "search", "default", "learned"}[k]
}

// Options configure a method when it is made. The zero value means every
// method's defaults; a method ignores the fields it has no use for.
type Options struct {
	// Learned methods.

	// Policy is the network of a new policy (go); nil = defaults.
	Policy *policy.Config
	// Trained is a trained policy: go fine-tunes it instead of making a
	// new one; go-zero-shot places with it (nil = the embedded default
	// model).
	Trained *policy.Policy
	// PPO are go's PPO knobs (zero = gdp.DefaultPPO).
	PPO ppo.Settings
	// Samples is the rollout size K (go) or the number of samples
	// (go-zero-shot); 0 = 16.
	Samples int
	// Warmup bounds go's imitation steps (see gdp.Search.Warmup).
	Warmup int
	// Reference is the decision and step time the learned methods are
	// anchored on and normalize rewards by; nil = the problem's Base.
	Reference *optimize.Result
	// Anchors, when Reference is nil, are the results of the quick
	// methods already run on the problem: an anchored search starts from
	// the best of them (the least invalid when none is valid) instead of
	// running them again. nil = run them (methods.Quick).
	Anchors []*optimize.Result
	// Head is go-scored's pre-trained move head (go-scored-pretrained,
	// go-scored-zero-shot); nil = the embedded default head.
	Head *gdp.MoveHead

	// Regal is the REGAL model regal and regal-zero-shot place with; it
	// must have been trained for the problem's objective (else they
	// return an error). nil = the embedded default model for the
	// problem's objective (methods/regal/defaultmodel.LoadFor).
	Regal *regal.Model

	// Classical searches.

	// Start is local-search's and sa's initial placement (see
	// classical.LocalSearch.Start); "" = each method's default; "anchored"
	// runs the anchored search (local-search-anchored, sa-anchored).
	Start string
}

// Entry is one method of the registry.
type Entry struct {
	Name string
	Kind Kind
	// Arm names the method this entry is an experiment arm of: an
	// ablation (learning off), a control, a pre-trained or tuned variant,
	// a start the method's options give. "" for the distinct algorithms a
	// user chooses among (Methods). Arms are named only in the report
	// commands, which compare them with their method.
	Arm     string
	Summary string // one line for --help and docs
	// Quick marks the fast deterministic methods that a learned search
	// runs first as its references (the best valid one is its anchor).
	Quick bool
	// Compared marks the methods `placer baselines` runs when none are
	// named.
	Compared bool
	// Splits marks the methods that split the batch (replicas,
	// micro-batches: decision.Strategy): they need a graph that records
	// its batch, and a search never starts from their decisions.
	Splits bool
	// Pretrained marks the methods that place with a pre-trained model:
	// Options.Trained (Options.Regal for regal and regal-zero-shot), or
	// the embedded default model when it is nil.
	// (go also takes Options.Trained, as the network to fine-tune, but
	// starts from a new one by default.)
	Pretrained bool
	// Limits are what the method needs of a problem and spends as a
	// search by default.
	Limits Limits
	New    func(Options) (optimize.Optimizer, error)
}

// DefaultSearchEvaluations is the budget a search method spends in
// placer's search (methods/anchored) when neither the user nor its
// Limits name one.
const DefaultSearchEvaluations = 10000

// Limits are what a method needs of a problem and spends by default.
type Limits struct {
	// MaxDevices is the most GPUs it places on (0 = any).
	MaxDevices int
	// Budget is what it spends as placer's search when the user names no
	// budget (zero = DefaultSearchEvaluations evaluations).
	Budget optimize.Budget
}

// Check returns an error when p is outside the limits.
func (l Limits) Check(p *optimize.Problem) error {
	if l.MaxDevices > 0 && p.Devices() > l.MaxDevices {
		return fmt.Errorf("%d GPUs; the method places on at most %d", p.Devices(), l.MaxDevices)
	}
	return nil
}

// SearchBudget is the budget the method spends as placer's search when
// the user names none (Limits.Budget) on a graph of any size.
func (e Entry) SearchBudget() optimize.Budget { return e.SearchBudgetFor(0) }

// DefaultSearchOpEvaluations bounds the default search's work on a large
// graph: its evaluations times the graph's ops. An evaluation costs about
// its ops' simulation (go-scored on gnmt8, 76,424 ops: 106 CPU s for the
// whole search at 10,000 evaluations on this project's 2-core machine,
// 2026-11-26), so that the default answers within a minute of CPU on
// every built-in workload: gnmt8 gets 3,271 evaluations, gnmt4 6,085,
// rnnlm8 7,898, every graph of up to 25,000 ops the full 10,000
// (docs/search.md, "The default budget").
const DefaultSearchOpEvaluations = 2.5e8

// MinDefaultSearchEvaluations is the least the default gives a graph,
// however large.
const MinDefaultSearchEvaluations = 500

// SearchBudgetFor is the budget the method spends as placer's search
// when the user names none, on a graph of ops ops (0: any):
// Limits.Budget, or DefaultSearchEvaluations evaluations, fewer on a
// graph so large that they would take more than DefaultSearchOpEvaluations
// op-evaluations (never fewer than MinDefaultSearchEvaluations).
func (e Entry) SearchBudgetFor(ops int) optimize.Budget {
	if e.Limits.Budget != (optimize.Budget{}) {
		return e.Limits.Budget
	}
	n := DefaultSearchEvaluations
	if ops > 0 {
		n = min(n, max(MinDefaultSearchEvaluations, int(DefaultSearchOpEvaluations/float64(ops))))
	}
	return optimize.Budget{Evaluations: n}
}

// registry is every method, in table order: references, heuristics,
// searches, TensorFlow's defaults, learned methods. (It is filled in init
// because the anchored searches' factories read it for the quick
// methods.)
var registry []Entry

func init() {
	registry = []Entry{
		{Name: "single", Kind: Reference, Summary: "every op on GPU 0", Quick: true, Compared: true, New: plain(classical.Single{})},
		{Name: "expert", Kind: Reference, Summary: "the human expert's placement (built-in workloads)", Quick: true, Compared: true, New: plain(classical.Expert{})},
		{Name: "ddp", Kind: Reference, Summary: "data parallelism (PyTorch DDP): one replica per GPU on its share of the batch, gradients all-reduced in buckets overlapped with the backward pass", Compared: true, Splits: true, New: plain(classical.DDP{})},
		{Name: "fsdp", Kind: Reference, Summary: "fully sharded data parallelism (PyTorch FSDP, ZeRO-3): ddp with parameters, gradients and optimizer state sharded over the GPUs", Compared: true, Splits: true, New: plain(classical.FSDP{})},
		{Name: "zero2", Kind: Reference, Summary: "ZeRO-2 (DeepSpeed stage 2, FSDP SHARD_GRAD_OP): ddp with gradients and optimizer state sharded, each GPU stepping 1/N of the parameters", Compared: true, Splits: true, New: plain(classical.ZeRO2{})},
		{Name: "round-robin", Kind: Heuristic, Summary: "ops dealt to GPUs in topological order", Compared: true, New: plain(classical.RoundRobin{})},
		{Name: "random", Kind: Heuristic, Summary: "the best of k random placements", Compared: true, New: plain(classical.Random{})},
		{Name: "metis", Kind: Heuristic, Summary: "METIS-style multilevel k-way partition", Quick: true, Compared: true, New: plain(classical.METIS{})},
		{Name: "gp-dfs", Kind: Heuristic, Summary: "REGAL's partition + depth-first schedule", Quick: true, Compared: true, New: plain(classical.GPDFS{})},
		{Name: "m-topo", Kind: Heuristic, Summary: "Baechi's memory-constrained topological split", Quick: true, Compared: true, New: plain(classical.MTopo{})},
		{Name: "m-etf", Kind: Heuristic, Summary: "Baechi's memory-constrained earliest-task-first", Quick: true, Compared: true, New: plain(classical.METF{})},
		{Name: "dp", Kind: Heuristic, Summary: "contiguous split of a topological order, one block per GPU (PipeDream)", Quick: true, Compared: true, New: plain(classical.DP{})},
		{Name: "gpipe", Kind: Heuristic, Summary: "a GPipe pipeline: the forward pass cut into one stage per GPU by time, the backward with its layers, the micro-batch count chosen by evaluation", Compared: true, Splits: true, New: plain(classical.Pipeline{Schedule: decision.GPipe})},
		{Name: "1f1b", Kind: Heuristic, Summary: "gpipe's stages under the 1F1B schedule (PipeDream-Flush, Megatron-LM): the same bubble, fewer micro-batches in flight", Compared: true, Splits: true, New: plain(classical.Pipeline{Schedule: decision.OneFOneB})},
		{Name: "pipedream", Kind: Heuristic, Summary: "PipeDream's planner: a dynamic program over layer splits into stages for each data-parallel degree R (R x S = N GPUs, R uniform over the stages as PipeDream-Flush runs it) and micro-batch count, 1F1B, the plans evaluated best estimate first", Compared: true, Splits: true, New: plain(classical.PipeDream{})},
		{Name: "local-search", Kind: Search, Summary: "REGAL's local search over placement, order, fusion", Compared: true, New: newLocalSearch},
		{Name: "sa", Kind: Search, Summary: "simulated annealing over placement, order, fusion", Compared: true, New: newAnnealing},
		{Name: "local-search-anchored", Kind: Search, Summary: "local search from the best quick baseline, the policy's moves", Compared: true, New: newAnchoredLocalSearch},
		{Name: "sa-anchored", Kind: Search, Arm: "sa", Summary: "simulated annealing from the best quick baseline, the policy's moves (sa --start anchored)", New: newAnchoredAnnealing},
		{Name: "brkga", Kind: Search, Summary: "REGAL's biased random-key genetic algorithm", Compared: true, New: func(Options) (optimize.Optimizer, error) { return &brkga.BRKGA{}, nil }},
		{Name: "brkga-tuned", Kind: Search, Arm: "brkga", Summary: "BRKGA with hyperparameters grid-searched on REGAL's synthetic training set, per objective (make brkga-tune)", New: func(Options) (optimize.Optimizer, error) { return &tuned.Optimizer{}, nil }},
		{Name: "tf-default", Kind: Default, Summary: "TensorFlow's defaults: FIFO, XLA-like fusion", Quick: true, Compared: true, New: plain(classical.TFDefault{})},
		{Name: "go", Kind: Learned, Summary: "the GO/GDP policy trained with PPO on this graph", Limits: Limits{MaxDevices: 8, Budget: optimize.Budget{Steps: 100}}, New: newSearch},
		{Name: "go-no-learning", Kind: Learned, Arm: "go", Summary: "the ablation: go's sampling around its anchor, the network never updated", New: newSearchNoLearning},
		{Name: "go-scored", Kind: Learned, Summary: "anchored local search whose moves a learned head picks, over an untrained GO network's outputs and the schedule, learning from every evaluated move", New: newScored("go-scored")},
		{Name: "go-scored-no-learning", Kind: Learned, Arm: "go-scored", Summary: "the ablation: go-scored with its head never updated (uniform picks: anchored local search with go-scored's pool)", New: newScored("go-scored-no-learning")},
		{Name: "go-scored-pretrained-network", Kind: Learned, Arm: "go-scored", Summary: "go-scored whose features read the pre-trained GO network (the default model) instead of an untrained one", Pretrained: true, New: newScored("go-scored-pretrained-network")},
		{Name: "go-scored-no-network", Kind: Learned, Arm: "go-scored", Summary: "the control: go-scored with no GO network features (the head reads the move and the schedule only)", New: newScored("go-scored-no-network")},
		{Name: "go-scored-pretrained", Kind: Learned, Arm: "go-scored", Summary: "go-scored from a pre-trained move head (placer pretrain --scored), learning on", Pretrained: true, New: newScored("go-scored-pretrained")},
		{Name: "go-scored-prior", Kind: Learned, Arm: "go-scored", Summary: "go-scored with a pre-trained move head as a frozen prior: a new head learns online what the prior gets wrong here", Pretrained: true, New: newScored("go-scored-prior")},
		{Name: "go-scored-zero-shot", Kind: Learned, Arm: "go-scored", Summary: "go-scored's pre-trained move head, never updated: zero-shot picks", Pretrained: true, New: newScored("go-scored-zero-shot")},
		{Name: "go-zero-shot", Kind: Learned, Arm: "go", Summary: "a pre-trained GO policy, no training", Pretrained: true, New: newZeroShot},
		{Name: "rl17", Kind: Learned, Summary: "the 2017 RL placer: co-location groups, attentional LSTM seq2seq, REINFORCE", New: newRL17},
		{Name: "regal", Kind: Learned, Summary: "REGAL: a pre-trained graph network picks each gene's Beta distribution for BRKGA's mutants", Pretrained: true, New: newRegal},
		{Name: "regal-zero-shot", Kind: Learned, Arm: "regal", Summary: "REGAL's network without genetic search: its Beta means decoded, best of a few samples", Pretrained: true, New: newRegalZeroShot},
		{Name: "hdp", Kind: Learned, Summary: "HDP: a feed-forward grouper and rl17's seq2seq placer over its groups, trained jointly with REINFORCE", New: newHDP},
	}
	seen := map[string]bool{}
	for _, e := range registry {
		if seen[e.Name] {
			panic("methods: two entries named " + e.Name)
		}
		seen[e.Name] = true
	}
	for _, e := range registry {
		if e.Arm != "" && !seen[e.Arm] {
			panic("methods: " + e.Name + " is an arm of " + e.Arm + ", which is not registered")
		}
	}
}

// plain is the factory of a method without options.
func plain(o optimize.Optimizer) func(Options) (optimize.Optimizer, error) {
	return func(Options) (optimize.Optimizer, error) { return o, nil }
}

func newLocalSearch(o Options) (optimize.Optimizer, error) {
	if o.Start == "anchored" {
		return newAnchoredLocalSearch(o)
	}
	if err := checkStart(o.Start); err != nil {
		return nil, err
	}
	return classical.LocalSearch{Start: o.Start}, nil
}

func newAnnealing(o Options) (optimize.Optimizer, error) {
	if o.Start == "anchored" {
		return newAnchoredAnnealing(o)
	}
	if err := checkStart(o.Start); err != nil {
		return nil, err
	}
	return classical.Annealing{Start: o.Start}, nil
}

func newAnchoredLocalSearch(o Options) (optimize.Optimizer, error) {
	an, err := anchorOf(o)
	return classical.AnchoredLocalSearch{Anchor: an}, err
}

func newAnchoredAnnealing(o Options) (optimize.Optimizer, error) {
	an, err := anchorOf(o)
	return classical.AnchoredAnnealing{Anchor: an}, err
}

// anchorOf is where an anchored search starts: the options' Reference,
// else the best of its Anchors, else the best of the quick methods.
func anchorOf(o Options) (classical.Anchor, error) {
	if o.Reference != nil {
		return classical.Anchor{From: o.Reference}, nil
	}
	if o.Anchors != nil {
		return classical.Anchor{Candidates: o.Anchors}, nil
	}
	var an classical.Anchor
	for _, e := range registry {
		if e.Quick {
			q, err := e.New(Options{})
			if err != nil {
				return an, err
			}
			an.Quick = append(an.Quick, q)
		}
	}
	return an, nil
}

// CheckStart checks a start of local-search and sa (--start): a
// command checks it before any work.
func CheckStart(s string) error {
	if s == "anchored" {
		return nil
	}
	return checkStart(s)
}

func checkStart(s string) error {
	switch s {
	case "", "random", "base", "m-topo", "m-etf", "metis":
		return nil
	}
	return fmt.Errorf("start %q: want random, base, m-topo, m-etf, metis or anchored", s)
}

func newSearch(o Options) (optimize.Optimizer, error) {
	if o.Samples < 0 {
		return nil, fmt.Errorf("go: samples %d: want at least 1", o.Samples)
	}
	s := &gdp.Search{Policy: o.Trained, Config: o.Policy, PPO: o.PPO, Samples: o.Samples, Warmup: o.Warmup}
	if o.Reference != nil {
		s.Reference, s.RefTime = o.Reference.Decision, o.Reference.Eval.StepTime
	}
	return s, nil
}

func newSearchNoLearning(o Options) (optimize.Optimizer, error) {
	opt, err := newSearch(o)
	if err != nil {
		return nil, err
	}
	s := opt.(*gdp.Search)
	s.NoLearning = true
	return namedAs{s, "go-no-learning"}, nil
}

// namedAs gives an optimizer the name of its registry entry.
type namedAs struct {
	optimize.Optimizer
	name string
}

func (n namedAs) Name() string { return n.name }

func (n namedAs) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	r, err := n.Optimizer.Optimize(ctx, p, s)
	if r != nil {
		r.Method = n.name
	}
	return r, err
}

// UsesHead reports whether method name starts from go-scored's
// pre-trained move head (Options.Head, else the embedded default head).
func UsesHead(name string) bool {
	switch name {
	case "go-scored-pretrained", "go-scored-zero-shot", "go-scored-prior":
		return true
	}
	return false
}

// newScored makes the go-scored variant called name, anchored as the
// anchored searches are. Every variant's features read go-scored's fixed
// untrained GO network (gdp.ScoredNetworkSeed), except
// go-scored-pretrained-network's, which reads the pre-trained one
// (Options.Trained, else the embedded default model), and the control's
// (go-scored-no-network), which reads none. The pretrained and zero-shot
// variants start from a pre-trained head (Options.Head, else the embedded
// default head).
func newScored(name string) func(Options) (optimize.Optimizer, error) {
	return func(o Options) (optimize.Optimizer, error) {
		an, err := anchorOf(o)
		if err != nil {
			return nil, err
		}
		s := &gdp.Scored{Config: o.Policy, Anchor: an, LearningRate: o.PPO.LearningRate, Label: name, NoNetwork: name == "go-scored-no-network"}
		if name == "go-scored-pretrained-network" {
			s.Policy = o.Trained
			if s.Policy == nil && defaultmodel.Available() {
				if s.Policy, err = defaultmodel.Load(); err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
			}
		}
		switch name {
		case "go-scored-no-learning", "go-scored-zero-shot":
			s.NoLearning = true
		}
		s.Prior = name == "go-scored-prior"
		if UsesHead(name) {
			if s.Head = o.Head; s.Head == nil {
				b, err := defaultmodel.Head()
				if err == nil {
					s.Head, err = gdp.DecodeMoveHead(b)
				}
				if err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
			}
		}
		return s, nil
	}
}

// trained is o.Trained, else the embedded default model.
func trained(o Options, name string) (*policy.Policy, error) {
	if o.Trained != nil {
		return o.Trained, nil
	}
	pol, err := defaultmodel.Load()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return pol, nil
}

func newZeroShot(o Options) (optimize.Optimizer, error) {
	pol, err := trained(o, "go-zero-shot")
	if err != nil {
		return nil, err
	}
	z := &gdp.ZeroShot{Policy: pol, Samples: o.Samples}
	if o.Reference != nil {
		z.Reference = o.Reference.Decision
	}
	return z, nil
}

// regalModelAvailable is the error of method name when it has no model:
// no Options.Regal and no embedded default model for any objective.
func regalModelAvailable(o Options, name string) error {
	if o.Regal == nil && !regaldefault.AvailableFor(optimize.StepTime) && !regaldefault.AvailableFor(optimize.PeakMemory) {
		return fmt.Errorf("%s: %w: build them with 'make regal-model regal-model-memory' and rebuild", name, regaldefault.ErrMissing)
	}
	return nil
}

// newRegal places with Options.Regal, else with the embedded default
// model for the problem's objective (picked when it runs). A model trained
// for another objective than the problem's is an error when it runs.
func newRegal(o Options) (optimize.Optimizer, error) {
	if err := regalModelAvailable(o, "regal"); err != nil {
		return nil, err
	}
	return &regal.REGAL{Model: o.Regal, ModelFor: regaldefault.LoadFor}, nil
}

// newRegalZeroShot takes Options.Samples decisions (0 = 16), with the
// model newRegal would.
func newRegalZeroShot(o Options) (optimize.Optimizer, error) {
	if o.Samples < 0 {
		return nil, fmt.Errorf("regal-zero-shot: samples %d: want at least 1", o.Samples)
	}
	if err := regalModelAvailable(o, "regal-zero-shot"); err != nil {
		return nil, err
	}
	return &regal.ZeroShot{Model: o.Regal, ModelFor: regaldefault.LoadFor, Samples: o.Samples}, nil
}

// newRL17 is the 2017 RL placer with K = Options.Samples and Adam's step
// size Options.PPO.LearningRate (0 = rl17's defaults).
func newRL17(o Options) (optimize.Optimizer, error) {
	if o.Samples < 0 {
		return nil, fmt.Errorf("rl17: samples %d: want at least 1", o.Samples)
	}
	return &rl17.RL17{Samples: o.Samples, LearningRate: o.PPO.LearningRate}, nil
}

// newHDP is the hierarchical placer with K = Options.Samples and Adam's
// step size Options.PPO.LearningRate (0 = hdp's defaults).
func newHDP(o Options) (optimize.Optimizer, error) {
	if o.Samples < 0 {
		return nil, fmt.Errorf("hdp: samples %d: want at least 1", o.Samples)
	}
	return &hdp.HDP{Samples: o.Samples, LearningRate: o.PPO.LearningRate}, nil
}

// ErrUnknown is New's error for a name not in the registry.
var ErrUnknown = errors.New("methods: unknown method")

// New makes the method called name with options o.
func New(name string, o Options) (optimize.Optimizer, error) {
	e, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
	}
	return e.New(o)
}

// Lookup returns the registry's entry for name.
func Lookup(name string) (Entry, bool) {
	for _, e := range registry {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// All returns every entry, in table order.
func All() []Entry { return append([]Entry(nil), registry...) }

// Names lists every method's name, in table order.
func Names() []string { return names(func(Entry) bool { return true }) }

// Compared lists the methods `placer baselines` runs by default, in
// table order.
func Compared() []string { return names(func(e Entry) bool { return e.Compared }) }

// Splitting lists the methods that split the batch (Entry.Splits), in
// table order.
func Splitting() []string { return names(func(e Entry) bool { return e.Splits }) }

// Quick lists the quick reference methods a learned search runs first,
// in table order.
func Quick() []string { return names(func(e Entry) bool { return e.Quick }) }

func names(keep func(Entry) bool) []string {
	var n []string
	for _, e := range registry {
		if keep(e) {
			n = append(n, e.Name)
		}
	}
	return n
}

// Check returns an error naming the first of names not in the registry.
func Check(names []string) error {
	for _, n := range names {
		if _, ok := Lookup(n); !ok {
			return fmt.Errorf("%w %q (known: %s)", ErrUnknown, n, strings.Join(Names(), ", "))
		}
	}
	return nil
}

// Searches are the methods placer's search (methods/anchored) runs after
// its references: the distinct algorithms (Methods) that search or learn,
// not the fixed references and one-shot heuristics.
func Searches() []string {
	return names(func(e Entry) bool { return e.Arm == "" && (e.Kind == Search || e.Kind == Learned) })
}

// IsSearch reports whether name is one of Searches.
func IsSearch(name string) bool {
	e, ok := Lookup(name)
	return ok && e.Arm == "" && (e.Kind == Search || e.Kind == Learned)
}

// CheckSearch is nil when name is one of Searches, else an error
// (ErrUnknown) naming them, in one line.
func CheckSearch(name string) error {
	if IsSearch(name) {
		return nil
	}
	return fmt.Errorf("%w %q: not a search (searches: %s)", ErrUnknown, name, strings.Join(Searches(), ", "))
}

// Methods lists the distinct algorithms a user chooses among (the
// entries that are no experiment's arm), in table order.
func Methods() []string { return names(func(e Entry) bool { return e.Arm == "" }) }

// CheckMethods returns an error naming the first of names that is not
// one of Methods: unknown, or an experiment arm (named only in the report
// commands, which compare it with its method).
func CheckMethods(names []string) error {
	for _, n := range names {
		e, ok := Lookup(n)
		if !ok {
			return fmt.Errorf("%w %q (known: %s)", ErrUnknown, n, strings.Join(Methods(), ", "))
		}
		if e.Arm != "" {
			return fmt.Errorf("%w %q: an experiment arm of %s, named only in the report commands (placer report equal-time --methods %s)", ErrUnknown, n, e.Arm, n)
		}
	}
	return nil
}
