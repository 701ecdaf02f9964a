package gdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/gdp/policy"
	"github.com/placer/placer/optimize"
)

// ScoredPretrain trains go-scored's move head over many graphs, so that a
// search on a graph it never saw picks better moves from its first round
// (go-scored-pretrained, go-scored-zero-shot). Each visit runs go-scored
// on one graph from that graph's reference for PerVisit, learning as
// go-scored learns (every evaluated move a labelled example), and carries
// the head on to the next graph, in turn. A visit starts from the
// reference, so the head learns the moves that pay in a search's first
// minutes, where a short or zero-shot search spends its time.
//
// The features read the GO network Policy (nil = go-scored's fixed
// untrained network, which the methods with a pre-trained head read). Runs are deterministic: visit i's
// seed depends only on Seed and i. The head is checkpointed after every
// visit (with its visit count, so that a resumed run goes on with the next
// visit) and at the end.
type ScoredPretrain struct {
	Graphs []TrainGraph
	Policy *policy.Policy
	// Head to train further; nil = a new one (or the checkpoint's with
	// Resume).
	Head *MoveHead
	// PerVisit is each visit's budget; zero = 2,000 evaluations.
	PerVisit optimize.Budget
	Seed     uint64
	// Visits is the total number of visits, counted across resumed runs;
	// Time bounds this run's wall time. Both zero = 3 per graph.
	Visits int
	Time   time.Duration
	// Checkpoint is the head's file ("" = none); its progress goes to
	// Checkpoint + ".state.json".
	Checkpoint string
	// Resume continues from a checkpoint written by a run with the same
	// graphs.
	Resume string
	// LearningRate is the head's Adam step size (0 = go-scored's).
	LearningRate float64
	// OnVisit, if set, sees every visit.
	OnVisit func(ScoredVisit)
	// Rounds, if set, runs the visits in synchronous rounds shared by
	// worker processes (scoredrounds.go); nil = one process, in turn.
	Rounds *Rounds
}

// ScoredVisit is one visit of a ScoredPretrain run.
type ScoredVisit struct {
	Visit       int     `json:"visit"` // 1-based, counted across resumed runs
	Graph       string  `json:"graph"`
	Elapsed     float64 `json:"elapsed_s"` // this run's
	Ratio       float64 `json:"step_over_reference"`
	Evaluations int     `json:"evaluations"`
	Updates     int     `json:"head_updates"` // in all, after the visit
}

// ScoredPretrainResult is what a run produced.
type ScoredPretrainResult struct {
	Head    *MoveHead
	Seed    uint64 // the run's seed (the checkpoint's, when resumed)
	Visits  int    // in all, resumed runs included
	Elapsed time.Duration
	Curve   []ScoredVisit
	Status  optimize.Status
}

// scoredState is a checkpoint's progress file.
type scoredState struct {
	Format  string  `json:"format"`
	Visits  int     `json:"visits"`
	Seed    uint64  `json:"seed"`
	Elapsed float64 `json:"elapsed_s"`
	Graphs  int     `json:"graphs"`
}

const scoredStateFormat = "placer-move-head-state"

// Run trains until Visits or Time; a cancelled ctx stops it after the
// visit in flight (which keeps what it learned), and the checkpoint is
// written in every case.
func (sp *ScoredPretrain) Run(ctx context.Context) (*ScoredPretrainResult, error) {
	if len(sp.Graphs) == 0 {
		return nil, errors.New("pretrain: no graphs")
	}
	if sp.Rounds != nil {
		return sp.runRounds(ctx)
	}
	head, done, seed, prior := sp.Head, 0, sp.Seed, 0.0
	if sp.Resume != "" {
		h, err := LoadMoveHead(sp.Resume)
		if err != nil {
			return nil, err
		}
		b, err := bounded.ReadFile(sp.Resume+".state.json", bounded.Model, "a training state file")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sp.Resume, err)
		}
		var st scoredState
		if err := json.Unmarshal(b, &st); err != nil || st.Format != scoredStateFormat || st.Visits < 0 {
			return nil, fmt.Errorf("%s.state.json: not a go-scored pre-training state", sp.Resume)
		}
		if st.Graphs != len(sp.Graphs) {
			return nil, fmt.Errorf("%s: the checkpoint trained on %d graphs, this run has %d", sp.Resume, st.Graphs, len(sp.Graphs))
		}
		head, done, seed, prior = h, st.Visits, st.Seed, st.Elapsed
	}
	if head == nil {
		head = NewMoveHead(seed)
	}
	visits := sp.Visits
	if visits == 0 && sp.Time == 0 {
		visits = 3 * len(sp.Graphs)
	}
	r := &ScoredPretrainResult{Head: head, Seed: seed, Visits: done}
	start := time.Now()
	save := func() error {
		if sp.Checkpoint == "" {
			return nil
		}
		if err := head.Save(sp.Checkpoint); err != nil {
			return err
		}
		st := scoredState{Format: scoredStateFormat, Visits: r.Visits, Seed: seed, Elapsed: prior + time.Since(start).Seconds(), Graphs: len(sp.Graphs)}
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		return atomicfile.WriteBytes(sp.Checkpoint+".state.json", b)
	}
	r.Status = optimize.BudgetReached
	for visits == 0 || r.Visits < visits {
		if ctx.Err() != nil {
			r.Status = optimize.Cancelled
			break
		}
		if sp.Time > 0 && time.Since(start) >= sp.Time {
			r.Status = optimize.TimeUp
			break
		}
		res, err := sp.visit(ctx, head, seed, r.Visits)
		if err != nil {
			return nil, err
		}
		r.Visits++
		v := res
		v.Elapsed = time.Since(start).Seconds()
		r.Curve = append(r.Curve, v)
		if sp.OnVisit != nil {
			sp.OnVisit(v)
		}
		if err := save(); err != nil {
			return nil, err
		}
	}
	r.Elapsed = time.Duration((prior + time.Since(start).Seconds()) * float64(time.Second))
	return r, save()
}

// visit runs visit i (0-based) on head, trained in place: go-scored on
// graph i mod len(Graphs) from its reference, seeded by seed and i alone.
// The visit's Elapsed is the caller's to fill.
func (sp *ScoredPretrain) visit(ctx context.Context, head *MoveHead, seed uint64, i int) (ScoredVisit, error) {
	g := sp.Graphs[i%len(sp.Graphs)]
	ref, refTime := g.Reference, g.RefTime
	p := g.Problem
	if ref.Device == nil {
		ref = p.Complete(ref)
	}
	eval, err := p.Evaluator.Evaluate(context.WithoutCancel(ctx), p.Complete(ref))
	if err != nil {
		return ScoredVisit{}, fmt.Errorf("pretrain: %s: %w", g.Name, err)
	}
	if refTime <= 0 {
		refTime = eval.StepTime
	}
	s := &Scored{Policy: sp.Policy, LearningRate: sp.LearningRate, Pool: pretrainPool, Anchor: classical.Anchor{From: &optimize.Result{Decision: ref, Eval: eval}}}
	s.head = head // train this head in place, across graphs
	res, err := s.Optimize(context.WithoutCancel(ctx), p, &optimize.Settings{Budget: sp.budget(), Seed: seed + uint64(i)*0x9e3779b9})
	if err != nil {
		return ScoredVisit{}, fmt.Errorf("pretrain: %s: %w", g.Name, err)
	}
	v := ScoredVisit{Visit: i + 1, Graph: g.Name, Evaluations: res.Stats.Evaluations, Updates: head.Updates}
	if res.Eval.Valid() && refTime > 0 {
		v.Ratio = res.Eval.StepTime / refTime
	}
	return v, nil
}

// budget is a visit's budget: PerVisit, or 2,000 evaluations.
func (sp *ScoredPretrain) budget() optimize.Budget {
	if sp.PerVisit == (optimize.Budget{}) {
		return optimize.Budget{Evaluations: 2000}
	}
	return sp.PerVisit
}

// pretrainPool is the pool of a pre-training visit: the pool go-scored had
// when the embedded default head was trained (before ScoredPoolFactor
// grew it), so that make default-head still rebuilds that head. What the
// head learns, a move's gain from its features, does not depend on the
// pool; only which moves it sees does.
const pretrainPool = 8 * DefaultScoredBatch
