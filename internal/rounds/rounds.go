package rounds

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/internal/claim"
)

// ErrCellRange says a cell index is not one of the run's steps.
var ErrCellRange = errors.New("rounds: out of range")

// Cell is a cell of a run: a step, its round and its file (relative to
// the run's folder).
type Cell struct {
	Index int    `json:"index"`
	Round int    `json:"round"`
	File  string `json:"file"`
}

// Cells lists the cells of a run of n steps in rounds of workers: one per
// step, in step order, step i's file round-R/ plus name with i (a
// fmt format with one %d).
func Cells(workers, n int, name string) []Cell {
	out := make([]Cell, 0, n)
	for i := range n {
		r := i / max(workers, 1)
		out = append(out, Cell{Index: i, Round: r, File: filepath.Join(fmt.Sprintf("round-%d", r), fmt.Sprintf(name, i))})
	}
	return out
}

// Run is a run of Steps steps in rounds of Workers, in Dir, of a model
// whose states are S.
type Run[S any] struct {
	// Workers is the steps of a round (1 or more): the scheme's worker
	// count, which decides the model (not how many processes run it).
	Workers int
	Dir     string
	// Owner claims the steps (zero = this process); Lease is a claim's
	// lease (0 = claim.DefaultLease); Poll is how often a worker waiting
	// for other workers' steps looks again (0 = 1 s).
	Owner claim.Owner
	Lease time.Duration
	Poll  time.Duration
	// One makes this process one cell of an array job: it runs step
	// Cell, helping with the rounds before Cell's (any of their steps
	// that no live worker holds) while they are not done, and leaving
	// the other steps of Cell's round to their own cells. It returns
	// once step Cell is kept, having written the next round's state if
	// Cell's round is then complete.
	One  bool
	Cell int
	// Steps is the run's step count.
	Steps int
	// What names the run in errors ("pretrain"), Unit its steps in them
	// ("step", "visit").
	What, Unit string
	// Header is Dir's rounds.json: the run's kind, seed, worker count and
	// graphs (a folder holding another is refused).
	Header []byte
	// RoundFile and StepFile name round r's state and step i's (of round
	// r) under Dir: "round-%d.head", "visit-%d.head" (in round-R/).
	RoundFile, StepFile string
	// Start is round 0's state.
	Start S
	// Encode and Read are a state's file.
	Encode func(S) ([]byte, error)
	Read   func(path string) (S, error)
	// Step runs step i from round state cur and returns its state and,
	// if not nil, what to do once that is kept (a progress point).
	Step func(ctx context.Context, i int, cur S) (S, func(), error)
	// Stopped, if set, says a step's error is a stop (ctx), not a
	// failure: the run returns Cancelled.
	Stopped func(error) bool
	// Mean is the next round's state from round state cur and the
	// states of its steps first ... first+len(steps)-1, in step order.
	Mean func(first int, cur S, steps []S) S
	// Prune removes a round's step files once the next round's state is
	// written (their claims stay, the history of who ran each step).
	Prune bool
}

// Outcome is where a Run stopped: Final is the last round's state when
// every step is done (Done); Rounds is the number of rounds done.
type Outcome[S any] struct {
	Final     S
	Done      bool
	Cancelled bool
	Rounds    int
}

// CheckCell says whether Cell is one of the run's steps (with One).
func (d *Run[S]) CheckCell() error {
	if d.One && (d.Cell < 0 || d.Cell >= d.Steps) {
		return fmt.Errorf("%s: cell %d: %w: this run has %d cells (0 to %d), one per %s", d.What, d.Cell, ErrCellRange, d.Steps, d.Steps-1, d.Unit)
	}
	return nil
}

func (d *Run[S]) round(r int) string { return filepath.Join(d.Dir, fmt.Sprintf(d.RoundFile, r)) }
func (d *Run[S]) step(r, i int) string {
	return filepath.Join(d.Dir, fmt.Sprintf("round-%d", r), fmt.Sprintf(d.StepFile, i))
}

// Go works on the rounds in Dir until Steps steps are done (by whichever
// workers), or with One until step Cell is kept.
func (d *Run[S]) Go(ctx context.Context) (Outcome[S], error) {
	var out Outcome[S]
	if err := d.CheckCell(); err != nil {
		return out, err
	}
	cellRound := -1
	if d.One {
		cellRound = d.Cell / d.Workers
	}
	if err := os.MkdirAll(d.Dir, 0o755); err != nil {
		return out, err
	}
	if _, err := CreateFile(filepath.Join(d.Dir, "rounds.json"), d.Header); err != nil {
		return out, err
	}
	if hb, err := bounded.ReadFile(filepath.Join(d.Dir, "rounds.json"), bounded.Config, "a rounds header"); err != nil {
		return out, err
	} else if !bytes.Equal(hb, d.Header) {
		return out, fmt.Errorf("%s: %s holds the rounds of another run (%s; this run: %s): use another folder", d.What, d.Dir, hb, d.Header)
	}
	sb, err := d.Encode(d.Start)
	if err != nil {
		return out, err
	}
	if _, err := CreateFile(d.round(0), sb); err != nil {
		return out, err
	}
	owner, poll := d.Owner, d.Poll
	if owner == (claim.Owner{}) {
		owner = claim.Self()
	}
	if poll <= 0 {
		poll = time.Second
	}
	r := 0
	for {
		for exists(d.round(r + 1)) {
			r++
		}
		first := r * d.Workers
		if first >= d.Steps || (d.One && r > cellRound) {
			break
		}
		n := min(d.Workers, d.Steps-first)
		cur, err := d.Read(d.round(r))
		if err != nil {
			return out, err
		}
		missing := 0
		for k := 0; k < n; k++ {
			i := first + k
			path := d.step(r, i)
			if exists(path) || (d.One && r == cellRound && i != d.Cell) {
				continue
			}
			if ctx.Err() != nil {
				out.Cancelled = true
				return out, nil
			}
			cl, _, err := claim.Take(path, owner, d.Lease)
			if errors.Is(err, claim.ErrHeld) {
				missing++
				continue
			}
			if err != nil {
				return out, err
			}
			// With Prune, a step's file is gone once its round is over:
			// the next round's state says the step is done.
			if exists(path) || exists(d.round(r+1)) {
				cl.Release("kept by another worker")
				continue
			}
			lost := false
			stop := cl.Keep(func(error) { lost = true })
			s, kept, err := d.Step(ctx, i, cur)
			stop()
			if err != nil && d.Stopped != nil && d.Stopped(err) {
				cl.Release("cancelled")
				out.Cancelled = true
				return out, nil
			}
			if err != nil {
				cl.Release(err.Error())
				return out, err
			}
			if lost || cl.Lost() {
				missing++
				continue
			}
			if exists(d.round(r + 1)) {
				cl.Release("the round ended without it")
				continue
			}
			b, err := d.Encode(s)
			if err != nil {
				return out, err
			}
			if _, err := CreateFile(path, b); err != nil {
				return out, err
			}
			if err := cl.Finish(); err != nil {
				return out, err
			}
			if kept != nil {
				kept()
			}
		}
		if exists(d.round(r + 1)) {
			continue
		}
		for k := 0; k < n; k++ {
			if !exists(d.step(r, first+k)) {
				missing++
			}
		}
		if missing > 0 && d.One && r == cellRound && exists(d.step(r, d.Cell)) {
			break // this cell's step is kept; its round is the other cells' to end
		}
		if missing > 0 {
			// Other workers' steps: wait for them (or for their claims
			// to expire, and take them over).
			select {
			case <-ctx.Done():
				out.Cancelled = true
				return out, nil
			case <-time.After(poll):
			}
			continue
		}
		states := make([]S, n)
		for k := range n {
			states[k], err = d.Read(d.step(r, first+k))
			if errors.Is(err, fs.ErrNotExist) && exists(d.round(r+1)) {
				break // another worker wrote the next round and removed its steps
			}
			if err != nil {
				return out, err
			}
		}
		if err != nil {
			continue
		}
		next, err := d.Encode(d.Mean(first, cur, states))
		if err != nil {
			return out, err
		}
		// Every worker that gets here writes the same bytes; the first
		// one's stay.
		made, err := CreateFile(d.round(r+1), next)
		if err != nil {
			return out, err
		}
		if made && d.Prune {
			for k := range n {
				os.Remove(d.step(r, first+k))
			}
		}
	}
	for exists(d.round(r + 1)) {
		r++
	}
	out.Rounds = r
	if r*d.Workers < d.Steps {
		// One cell, whose round or a later one is not done: the model is
		// the last cell's to write.
		return out, nil
	}
	final, err := d.Read(d.round(r))
	if err != nil {
		return out, err
	}
	out.Final, out.Done = final, true
	return out, nil
}

// CreateFile writes data to path unless a file is there (false then),
// atomically: a reader sees all of it or no file.
func CreateFile(path string, data []byte) (bool, error) {
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
