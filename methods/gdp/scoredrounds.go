package gdp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/claim"
	"github.com/placer/placer/internal/rounds"
	"github.com/placer/placer/optimize"
)

// Rounds runs a ScoredPretrain in synchronous rounds that any number of
// worker processes share through a folder (on one machine, or on a
// cluster's shared file system): round r's Workers visits (r*Workers ...
// r*Workers+Workers-1, each on its graph with its seed as in a sequential
// run) all start from round r's head; each visit is claimed (package
// claim: one worker runs it; a dead worker's visit is taken over) and
// kept as a file; when the round's visits are all kept, the next round's
// head is their mean, parameter by parameter in visit order (in float64,
// rounded once), with their updates summed. So the same seed and the same
// Workers give the same head whichever process ran which visit and however
// many processes there were; with Workers = 1 it is the sequential run's
// head, to the bit. The folder is the checkpoint: a worker started later
// (or again) goes on from its last round.
type Rounds struct {
	// Workers is the visits of a round (1 or more): the scheme's worker
	// count, which decides the head (not how many processes run it).
	Workers int
	// Dir holds the rounds: round-R.head (the head round R starts from),
	// round-R/visit-I.head (its visits' heads, each with its claims) and
	// rounds.json (the run's seed, worker count and graphs; another run's
	// folder is refused).
	Dir string
	// Owner claims the visits (zero = this process); Lease is a claim's
	// lease (0 = claim.DefaultLease); Poll is how often a worker waiting
	// for other workers' visits looks again (0 = 1 s).
	Owner claim.Owner
	Lease time.Duration
	Poll  time.Duration
	// One makes this process one cell of an array job (a task of a Slurm
	// job array, a pod of a Kubernetes Indexed Job): the cells are the
	// visits 0 ... Visits-1, and the process runs visit Cell, helping
	// with the rounds before Cell's (any of their visits that no live
	// worker holds) while they are not done, and leaving the other
	// visits of Cell's round to their own cells. It returns once visit
	// Cell is kept, having written the next round's head if Cell's round
	// is complete and the Checkpoint if that was the last round
	// (ScoredPretrainResult.Head is nil when it was not). Running every
	// cell, in any order or at once, gives the head of one worker
	// process.
	One  bool
	Cell int
}

// ErrCellRange says a cell index is not one of the run's visits.
var ErrCellRange = rounds.ErrCellRange

// Cell is a cell of a Rounds run: a visit, its round and its file
// (relative to Dir).
type Cell = rounds.Cell

// Cells lists the cells of a Rounds run of a move head's visits visits
// (ScoredPretrain): one per visit, in visit order.
func (rd *Rounds) Cells(visits int) []Cell { return rounds.Cells(rd.Workers, visits, "visit-%d.head") }

// PolicyCells lists the cells of a Rounds run of the GO policy's steps
// steps (Pretrain): one per step, in step order.
func (rd *Rounds) PolicyCells(steps int) []Cell {
	return rounds.Cells(rd.Workers, steps, "step-%d.policy")
}

// driverOf is rd as the rounds driver of a run of steps steps (unit
// names them in errors) whose states are S, with its files' names; the
// caller gives the rest.
func driverOf[S any](rd *Rounds, steps int, unit, roundFile, stepFile string) *rounds.Run[S] {
	return &rounds.Run[S]{Workers: rd.Workers, Dir: rd.Dir, Owner: rd.Owner, Lease: rd.Lease, Poll: rd.Poll, One: rd.One, Cell: rd.Cell,
		Steps: steps, What: "pretrain", Unit: unit, RoundFile: roundFile, StepFile: stepFile}
}

// roundsFile is Dir's rounds.json.
type roundsFile struct {
	Format  string   `json:"format"`
	Seed    uint64   `json:"seed"`
	Workers int      `json:"workers"`
	Graphs  []string `json:"graphs"`
}

const roundsFormat = "placer-move-head-rounds"

// encodeHead is h as Save writes it.
func encodeHead(h *MoveHead) ([]byte, error) {
	dir, err := os.MkdirTemp("", "placer-head-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "h")
	if err := h.Save(path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// meanHead is the mean of heads (parameter by parameter, in order, in
// float64, rounded once to float32) with start's updates plus theirs.
func meanHead(start *MoveHead, heads []*MoveHead) *MoveHead {
	out := start.Clone()
	for pi, p := range out.Params() {
		for j := range p.W {
			sum := 0.0
			for _, h := range heads {
				sum += float64(h.Params()[pi].W[j])
			}
			p.W[j] = float32(sum / float64(len(heads)))
		}
	}
	for _, h := range heads {
		out.Updates += h.Updates - start.Updates
	}
	return out
}

// runRounds is Run with sp.Rounds: this process works on the rounds in
// Dir until Visits visits are done (by whichever workers), then writes
// the last round's head to Checkpoint.
func (sp *ScoredPretrain) runRounds(ctx context.Context) (*ScoredPretrainResult, error) {
	rd := sp.Rounds
	if rd.Workers < 1 || rd.Dir == "" {
		return nil, errors.New("pretrain: rounds need a worker count of 1 or more and a folder")
	}
	if sp.Visits < 1 || sp.Time > 0 {
		return nil, errors.New("pretrain: rounds need a visit count (--steps) and no time limit: the head must not depend on how fast a worker is")
	}
	d := driverOf[*MoveHead](rd, sp.Visits, "visit", "round-%d.head", "visit-%d.head")
	if err := d.CheckCell(); err != nil {
		return nil, err
	}
	start := time.Now()
	head, seed := sp.Head, sp.Seed
	if sp.Resume != "" {
		h, err := LoadMoveHead(sp.Resume)
		if err != nil {
			return nil, err
		}
		head = h
	}
	if head == nil {
		head = NewMoveHead(seed)
	}
	// The folder's run: its seed, worker count and graphs must be this
	// one's.
	want := roundsFile{Format: roundsFormat, Seed: seed, Workers: rd.Workers}
	for _, g := range sp.Graphs {
		want.Graphs = append(want.Graphs, g.Name)
	}
	d.Header, _ = json.Marshal(want)
	d.Start, d.Encode, d.Read = head, encodeHead, LoadMoveHead
	res := &ScoredPretrainResult{Seed: seed, Status: optimize.BudgetReached}
	d.Step = func(ctx context.Context, i int, cur *MoveHead) (*MoveHead, func(), error) {
		h := cur.Clone()
		v, err := sp.visit(ctx, h, seed, i)
		if err != nil {
			return nil, nil, err
		}
		return h, func() {
			v.Elapsed = time.Since(start).Seconds()
			res.Curve = append(res.Curve, v)
			if sp.OnVisit != nil {
				sp.OnVisit(v)
			}
		}, nil
	}
	d.Mean = func(_ int, cur *MoveHead, heads []*MoveHead) *MoveHead { return meanHead(cur, heads) }
	o, err := d.Go(ctx)
	if err != nil {
		return nil, err
	}
	if o.Cancelled {
		res.Status = optimize.Cancelled
		return res, nil
	}
	if !o.Done {
		// One cell, whose round or a later one is not done: the head is
		// the last cell's to write.
		res.Visits, res.Elapsed = o.Rounds*rd.Workers, time.Since(start)
		return res, nil
	}
	final := o.Final
	res.Head, res.Visits, res.Elapsed = final, sp.Visits, time.Since(start)
	if sp.Checkpoint != "" {
		if err := final.Save(sp.Checkpoint); err != nil {
			return nil, err
		}
		st := scoredState{Format: scoredStateFormat, Visits: sp.Visits, Seed: seed, Elapsed: res.Elapsed.Seconds(), Graphs: len(sp.Graphs)}
		b, err := json.Marshal(st)
		if err != nil {
			return nil, err
		}
		if err := atomicfile.WriteBytes(sp.Checkpoint+".state.json", b); err != nil {
			return nil, err
		}
	}
	return res, nil
}
