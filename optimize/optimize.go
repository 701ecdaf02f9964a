package optimize

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph"
)

// Tasks says which parts of a decision an optimizer may change; the rest
// keep TensorFlow's defaults (FIFO scheduling, no fusion... or the
// problem's reference fusion).
type Tasks struct {
	Placement, Scheduling, Fusion bool
}

// AllTasks is placement, scheduling and fusion together.
var AllTasks = Tasks{Placement: true, Scheduling: true, Fusion: true}

// String lists the tasks, e.g. "placement,fusion".
func (t Tasks) String() string {
	var s []string
	if t.Placement {
		s = append(s, "placement")
	}
	if t.Scheduling {
		s = append(s, "scheduling")
	}
	if t.Fusion {
		s = append(s, "fusion")
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

// ParseTasks reads a comma-separated list of placement, scheduling, fusion.
func ParseTasks(s string) (Tasks, error) {
	var t Tasks
	for _, p := range strings.Split(s, ",") {
		switch strings.TrimSpace(strings.ToLower(p)) {
		case "placement", "place":
			t.Placement = true
		case "scheduling", "schedule":
			t.Scheduling = true
		case "fusion", "fuse":
			t.Fusion = true
		case "all":
			t = AllTasks
		case "":
		default:
			return t, fmt.Errorf("unknown task %q (want placement, scheduling, fusion)", p)
		}
	}
	return t, nil
}

// Problem is one instance: a graph on a cluster, the cost model methods
// plan with, and the evaluator that scores decisions. Cost and Evaluator
// are separate seams: a search on real GPUs plans with the roofline model
// and is scored by measurements.
type Problem struct {
	Graph     *graph.Graph
	Cost      evaluate.CostModel
	Evaluator evaluate.Evaluator
	Tasks     Tasks // zero value = AllTasks

	// Base is the decision whose parts an optimizer keeps for the tasks
	// it may not change (nil Device = single device, nil Priority = FIFO,
	// nil Fusion = no fusion).
	Base decision.Decision

	// Expert is the human expert's placement of the graph on the
	// cluster's devices (op -> device), nil when there is none (imported
	// graphs, synthetic ones). It is filled where the inputs are resolved.
	Expert []int

	// Objective is what methods minimise (zero value: StepTime). The
	// Tracker keeps the best decision by it, and Objective.Of is the
	// value rewards and tables read.
	Objective Objective

	// Realize, when set, maps a decision to the one the graph's framework
	// executes (a graph from PyTorch: contiguous module-level stages, ops
	// in program order, no fusion; workloads/export.Realizer), and
	// Evaluator already scores every decision through it
	// (evaluate.Realizing). A search reports the realized decision of its
	// answer and rows (Realized): the same score, and what runs. Nil: the
	// decision is what runs (TensorFlow's world).
	Realize evaluate.Realize
}

// Realized is d as it runs: p.Realize(d), or d itself when the problem
// has no realization (or d cannot be realized: its evaluation failed
// the same way).
func (p *Problem) Realized(d decision.Decision) decision.Decision {
	if p.Realize == nil {
		return d
	}
	r, err := p.Realize(d)
	if err != nil {
		return d
	}
	return r
}

// NewProblem builds a problem for g that plans with cost and is scored by
// ev, with every task (AllTasks). The roofline model is both:
//
//	m, err := roofline.NewModel(g, c, opts)
//	p := optimize.NewProblem(g, m, roofline.NewEvaluator(m))
func NewProblem(g *graph.Graph, cost evaluate.CostModel, ev evaluate.Evaluator) *Problem {
	return &Problem{Graph: g, Cost: cost, Evaluator: ev, Tasks: AllTasks}
}

// Devices is the number of devices of the problem's cluster.
func (p *Problem) Devices() int { return p.Cost.Devices() }

// Capacity is the memory capacity of one device in bytes.
func (p *Problem) Capacity() int64 { return p.Cost.Capacity() }

// EffectiveTasks is p.Tasks, with the zero value read as AllTasks.
func (p *Problem) EffectiveTasks() Tasks {
	if p.Tasks == (Tasks{}) {
		return AllTasks
	}
	return p.Tasks
}

// Complete fills the parts of d that the problem's tasks do not let a
// method change from Base: the placement (and any missing one), the
// scheduling (priorities and transfer priorities) and the fusion. A Base
// without a placement means every op on device 0. The parts taken from Base
// are copies, so that the result never aliases Base; the parts kept from d
// are d's own slices, not copied.
func (p *Problem) Complete(d decision.Decision) decision.Decision {
	t := p.EffectiveTasks()
	if !t.Placement || d.Device == nil {
		d.Device = clone(p.Base.Device)
		if d.Device == nil {
			d.Device = decision.Single(p.Graph)
		}
	}
	if !t.Scheduling {
		d.Priority, d.Transfer = clone(p.Base.Priority), clone(p.Base.Transfer)
	}
	if !t.Fusion {
		d.Fusion = clone(p.Base.Fusion)
	}
	return d
}

// Start is the decision a method starts from: a copy of Base, with every
// op on device 0 when Base has no placement.
func (p *Problem) Start() decision.Decision {
	d := p.Base.Clone()
	if d.Device == nil {
		d.Device = decision.Single(p.Graph)
	}
	return d
}

func clone(s []int) []int {
	if s == nil {
		return nil
	}
	return append([]int(nil), s...)
}

// Budget bounds a search. Zero fields are unlimited; an optimizer that
// needs a bound and gets none uses its documented default.
type Budget struct {
	Evaluations int           // decisions evaluated
	Steps       int           // iterations of the optimizer's main loop
	Time        time.Duration // wall time
	// CPU is CPU time: this process's, all threads, from the run's start
	// (ProcessCPU). It is the fair budget on a shared machine, where wall
	// time depends on what else runs; it counts the whole process, so it
	// means one method's time only when one method runs at a time.
	CPU time.Duration
}

// Settings configure one run. A nil *Settings means defaults.
type Settings struct {
	Budget Budget
	Seed   uint64 // same seed, same result
	// Recorder, if set, sees the run's progress: a Step event after each
	// step with the statistics so far, a Point event for each point of a
	// learned method's curve (Recorder).
	Recorder Recorder
}

// Status says why a run stopped.
type Status int

// The statuses.
const (
	Converged     Status = iota // the method finished by itself (heuristics; optimum proven)
	BudgetReached               // evaluations or steps used up
	TimeUp                      // wall time used up
	Cancelled                   // the context was cancelled (Ctrl-C); Best is still valid
)

func (s Status) String() string {
	return [...]string{"converged", "budget reached", "time up", "cancelled"}[s]
}

// Err is the status as an error: nil for a run that ended by itself or
// spent its budget or time (its result is what was asked for), ErrCancelled
// for a cancelled one (its result is the best so far).
func (s Status) Err() error {
	if s == Cancelled {
		return ErrCancelled
	}
	return nil
}

// ErrCancelled is Status.Err of a cancelled run; it wraps
// context.Canceled.
var ErrCancelled = fmt.Errorf("optimize: run cancelled: %w", context.Canceled)

// Stats describe a run.
type Stats struct {
	Evaluations int
	Steps       int
	Elapsed     time.Duration
	BestStep    float64 // step time of the best valid decision so far (seconds); 0 if none
	// Best is the best valid decision's objective value so far
	// (Problem.Objective.Of: seconds or bytes); 0 if none.
	Best   float64
	Status Status
}

// Result is an optimizer's answer.
type Result struct {
	Method   string
	Decision decision.Decision
	Eval     evaluate.Result // the evaluator's result for Decision
	Stats    Stats
	Seed     uint64
	// Learning is what a learned method produced besides its decision;
	// nil for the classical methods.
	Learning *Learning
}

// Learning is a learned method's output besides its decision: everything
// a caller reports or keeps, so that nothing is read off the optimizer
// after the call.
type Learning struct {
	// RefStep is the step time the method's rewards were normalized by
	// (seconds; 0 = none).
	RefStep float64
	// Curve is the learning curve, one point per training step.
	Curve []CurvePoint
	// Settings are the knobs the method ran with, its defaults resolved,
	// as result files record them (nil = none).
	Settings Knobs
	// Model is the trained model (nil = none).
	Model Model
	// OnePass is the step time of the policy's own most likely decision
	// (one forward pass, no sampling; 0 = not evaluated), beside the
	// result's best, so a report can tell the policy from its samples.
	OnePass float64
	// OnePassValid says whether that decision fits in memory and honours
	// co-location.
	OnePassValid bool
}

// Knobs are a learned method's settings, its defaults resolved, as
// result files record them (encoded as JSON): each method's own struct
// (gdp.SearchSettings for go, gdp.ScoredSettings, rl17.Settings,
// hdp.Settings, regal.Settings).
type Knobs interface {
	// KnobsOf names the method the knobs are for.
	KnobsOf() string
}

// Model is a learned method's trained model (a GO policy, go-scored's
// move head, REGAL's network), which saves itself to a file.
type Model interface {
	Save(path string) error
}

// CurvePoint is one training step of a learned method's curve.
type CurvePoint struct {
	Step        int     `json:"step"`
	Elapsed     float64 `json:"elapsed_s"`
	Evaluations int     `json:"evaluations"`
	MeanReward  float64 `json:"mean_reward"`
	BestReward  float64 `json:"best_reward"` // best of this step's samples
	BestStep    float64 `json:"best_step_s"` // step time of the best valid decision so far
	// Best is the best valid decision's objective value so far (Stats.Best).
	Best     float64 `json:"best_value,omitempty"`
	Entropy  float64 `json:"entropy"`    // per node
	Valid    float64 `json:"valid"`      // fraction of the samples that were valid
	Epochs   int     `json:"ppo_epochs"` // PPO epochs run (a KL target may stop them early)
	ClipFrac float64 `json:"clip_fraction"`
	ApproxKL float64 `json:"approx_kl"`
	// HeadHit and ExploreHit are, for a method that evaluates moves some
	// picked by a learned scorer and some drawn uniformly (go-scored), the
	// share of each kind that improved on the current decision in this
	// point's rounds: the scorer helps while HeadHit is above ExploreHit.
	// Zero when the point has no moves of the kind.
	HeadHit    float64 `json:"head_hit,omitempty"`
	ExploreHit float64 `json:"explore_hit,omitempty"`
}

// Optimizer is one method. Optimize must return the best decision found
// even when ctx is cancelled (with Status Cancelled), and must honour the
// problem's tasks.
type Optimizer interface {
	Name() string
	Optimize(ctx context.Context, p *Problem, s *Settings) (*Result, error)
}
