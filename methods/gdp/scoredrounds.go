package gdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/claim"
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
var ErrCellRange = errors.New("out of range")

// Cell is a cell of a Rounds run: a visit, its round and its file
// (relative to Dir).
type Cell struct {
	Index int    `json:"index"`
	Round int    `json:"round"`
	File  string `json:"file"`
}

// Cells lists the cells of a Rounds run of a move head's visits visits
// (ScoredPretrain): one per visit, in visit order.
func (rd *Rounds) Cells(visits int) []Cell { return rd.cells(visits, "visit-%d.head") }

// PolicyCells lists the cells of a Rounds run of the GO policy's steps
// steps (Pretrain): one per step, in step order.
func (rd *Rounds) PolicyCells(steps int) []Cell { return rd.cells(steps, "step-%d.policy") }

func (rd *Rounds) cells(n int, name string) []Cell {
	out := make([]Cell, 0, n)
	for i := range n {
		r := i / max(rd.Workers, 1)
		out = append(out, Cell{Index: i, Round: r, File: filepath.Join(fmt.Sprintf("round-%d", r), fmt.Sprintf(name, i))})
	}
	return out
}

// roundsFile is Dir's rounds.json.
type roundsFile struct {
	Format  string   `json:"format"`
	Seed    uint64   `json:"seed"`
	Workers int      `json:"workers"`
	Graphs  []string `json:"graphs"`
}

const roundsFormat = "placer-move-head-rounds"

// createFile writes data to path unless a file is there (false then).
func createFile(path string, data []byte) (bool, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	os.Chmod(tmp.Name(), 0o644)
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func (rd *Rounds) head(r int) string { return filepath.Join(rd.Dir, fmt.Sprintf("round-%d.head", r)) }
func (rd *Rounds) visit(r, i int) string {
	return filepath.Join(rd.Dir, fmt.Sprintf("round-%d", r), fmt.Sprintf("visit-%d.head", i))
}

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
	cellRound := -1
	if rd.One {
		if rd.Cell < 0 || rd.Cell >= sp.Visits {
			return nil, fmt.Errorf("pretrain: cell %d: %w: this run has %d cells (0 to %d), one per visit", rd.Cell, ErrCellRange, sp.Visits, sp.Visits-1)
		}
		cellRound = rd.Cell / rd.Workers
	}
	if err := os.MkdirAll(rd.Dir, 0o755); err != nil {
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
	wb, _ := json.Marshal(want)
	if _, err := createFile(filepath.Join(rd.Dir, "rounds.json"), wb); err != nil {
		return nil, err
	}
	if hb, err := os.ReadFile(filepath.Join(rd.Dir, "rounds.json")); err != nil {
		return nil, err
	} else if string(hb) != string(wb) {
		return nil, fmt.Errorf("pretrain: %s holds the rounds of another run (%s; this run: %s): use another folder", rd.Dir, hb, wb)
	}
	hb, err := encodeHead(head)
	if err != nil {
		return nil, err
	}
	if _, err := createFile(rd.head(0), hb); err != nil {
		return nil, err
	}
	owner, poll := rd.Owner, rd.Poll
	if owner == (claim.Owner{}) {
		owner = claim.Self()
	}
	if poll <= 0 {
		poll = time.Second
	}
	res := &ScoredPretrainResult{Seed: seed, Status: optimize.BudgetReached}
	r := 0
	for {
		for exists(rd.head(r + 1)) {
			r++
		}
		first := r * rd.Workers
		if first >= sp.Visits || (rd.One && r > cellRound) {
			break
		}
		n := min(rd.Workers, sp.Visits-first)
		cur, err := LoadMoveHead(rd.head(r))
		if err != nil {
			return nil, err
		}
		missing := 0
		for k := 0; k < n; k++ {
			i := first + k
			path := rd.visit(r, i)
			if exists(path) || (rd.One && r == cellRound && i != rd.Cell) {
				continue
			}
			if ctx.Err() != nil {
				res.Status = optimize.Cancelled
				return res, nil
			}
			cl, _, err := claim.Take(path, owner, rd.Lease)
			if errors.Is(err, claim.ErrHeld) {
				missing++
				continue
			}
			if err != nil {
				return nil, err
			}
			if exists(path) {
				cl.Release("kept by another worker")
				continue
			}
			lost := false
			stop := cl.Keep(func(error) { lost = true })
			h := cur.Clone()
			v, err := sp.visit(ctx, h, seed, i)
			stop()
			if err != nil {
				cl.Release(err.Error())
				return nil, err
			}
			if lost || cl.Lost() {
				missing++
				continue
			}
			if err := h.Save(path); err != nil {
				return nil, err
			}
			if err := cl.Finish(); err != nil {
				return nil, err
			}
			v.Elapsed = time.Since(start).Seconds()
			res.Curve = append(res.Curve, v)
			if sp.OnVisit != nil {
				sp.OnVisit(v)
			}
		}
		for k := 0; k < n; k++ {
			if !exists(rd.visit(r, first+k)) {
				missing++
			}
		}
		if missing > 0 && rd.One && r == cellRound && exists(rd.visit(r, rd.Cell)) {
			break // this cell's visit is kept; its round is the other cells' to end
		}
		if missing > 0 {
			// Other workers' visits: wait for them (or for their claims
			// to expire, and take them over).
			select {
			case <-ctx.Done():
				res.Status = optimize.Cancelled
				return res, nil
			case <-time.After(poll):
			}
			continue
		}
		var heads []*MoveHead
		for k := 0; k < n; k++ {
			h, err := LoadMoveHead(rd.visit(r, first+k))
			if err != nil {
				return nil, err
			}
			heads = append(heads, h)
		}
		next, err := encodeHead(meanHead(cur, heads))
		if err != nil {
			return nil, err
		}
		// Every worker that gets here writes the same bytes; the first
		// one's stay.
		if _, err := createFile(rd.head(r+1), next); err != nil {
			return nil, err
		}
	}
	for exists(rd.head(r + 1)) {
		r++
	}
	if r*rd.Workers < sp.Visits {
		// One cell, whose round or a later one is not done: the head is
		// the last cell's to write.
		res.Visits, res.Elapsed = r*rd.Workers, time.Since(start)
		return res, nil
	}
	final, err := LoadMoveHead(rd.head(r))
	if err != nil {
		return nil, err
	}
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
