package gdp

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placer/placer/internal/claim"
	"github.com/placer/placer/optimize"
)

// roundsRun pre-trains visits visits in rounds of workers in dir with
// procs workers at once (goroutines, each with its own graphs and an
// owner of its own: they meet only through dir's files and claims) and
// returns the head's bytes.
func roundsRun(t *testing.T, dir string, workers, procs, visits int, seed uint64) []byte {
	t.Helper()
	var wg sync.WaitGroup
	heads := make([][]byte, procs)
	errs := make([]error, procs)
	for w := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			graphs, pol := pretrainGraphs(t, 40, 5, 6)
			sp := &ScoredPretrain{Graphs: graphs, Policy: pol, PerVisit: optimize.Budget{Evaluations: 150}, Seed: seed, Visits: visits,
				Rounds: &Rounds{Workers: workers, Dir: dir, Owner: claim.Owner{Host: fmt.Sprintf("worker-%d", w), PID: 1}, Poll: 20 * time.Millisecond}}
			r, err := sp.Run(context.Background())
			if err != nil {
				errs[w] = err
				return
			}
			heads[w], errs[w] = encodeHead(r.Head)
		}()
	}
	wg.Wait()
	for w := range procs {
		if errs[w] != nil {
			t.Fatal(errs[w])
		}
		if !bytes.Equal(heads[w], heads[0]) {
			t.Fatalf("worker %d ended with another head than worker 0", w)
		}
	}
	return heads[0]
}

// TestRounds: rounds of one worker give the sequential run's head to the
// bit; rounds of three give the same head run to run, whether one
// process or three run them, each visit run once; a folder of another
// run is refused.
func TestRounds(t *testing.T) {
	graphs, pol := pretrainGraphs(t, 40, 5, 6)
	seq, err := (&ScoredPretrain{Graphs: graphs, Policy: pol, PerVisit: optimize.Budget{Evaluations: 150}, Seed: 7, Visits: 4}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := encodeHead(seq.Head)
	if got := roundsRun(t, t.TempDir(), 1, 1, 4, 7); !bytes.Equal(got, want) {
		t.Fatal("rounds of 1 worker: not the sequential head")
	}
	if got := roundsRun(t, t.TempDir(), 1, 2, 4, 7); !bytes.Equal(got, want) {
		t.Fatal("rounds of 1 worker run by 2 processes: not the sequential head")
	}
	one := roundsRun(t, t.TempDir(), 3, 1, 6, 7)
	if bytes.Equal(one, want) {
		t.Fatal("rounds of 3 workers gave the sequential head: nothing was averaged")
	}
	if again := roundsRun(t, t.TempDir(), 3, 1, 6, 7); !bytes.Equal(again, one) {
		t.Fatal("rounds of 3 workers: another head run to run")
	}
	dir := t.TempDir()
	if three := roundsRun(t, dir, 3, 3, 6, 7); !bytes.Equal(three, one) {
		t.Fatal("rounds of 3 workers run by 3 processes: not the head of one process")
	}
	owners := map[string]int{}
	for i := range 6 {
		h, err := claim.History(filepath.Join(dir, fmt.Sprintf("round-%d", i/3), fmt.Sprintf("visit-%d.head", i)))
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, c := range h {
			if c.State == claim.Done {
				done++
				owners[c.Owner.Host]++
			}
		}
		if done != 1 {
			t.Errorf("visit %d: %d claims done, want 1: %+v", i, done, h)
		}
	}
	t.Logf("visits per worker: %v", owners)
	// More visits in the same folder go on from its last round: the head
	// of 6 and then 9 visits is the head of 9 at once.
	nine := roundsRun(t, t.TempDir(), 3, 1, 9, 7)
	if resumed := roundsRun(t, dir, 3, 2, 9, 7); !bytes.Equal(resumed, nine) {
		t.Fatal("9 visits resumed from a folder of 6: not the head of 9 at once")
	}
	graphs, pol = pretrainGraphs(t, 40, 5, 6)
	_, err = (&ScoredPretrain{Graphs: graphs, Policy: pol, Seed: 8, Visits: 3, Rounds: &Rounds{Workers: 3, Dir: dir}}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "holds the rounds of another run") {
		t.Fatalf("another seed in the folder: %v", err)
	}
}

// cellRun runs cell i of a Rounds run of 3 workers and visits visits in
// dir as its own worker (owner) and returns the result.
func cellRun(t *testing.T, dir string, i, visits int, owner string) (*ScoredPretrainResult, error) {
	graphs, pol := pretrainGraphs(t, 40, 5, 6)
	sp := &ScoredPretrain{Graphs: graphs, Policy: pol, PerVisit: optimize.Budget{Evaluations: 150}, Seed: 7, Visits: visits,
		Rounds: &Rounds{Workers: 3, Dir: dir, Owner: claim.Owner{Host: owner, PID: 1}, Lease: 200 * time.Millisecond, Poll: 20 * time.Millisecond, One: true, Cell: i}}
	return sp.Run(context.Background())
}

// TestRoundsCells: the cells of a Rounds run (one per visit), run one by
// one in index order, in reverse order, or all at once, give the head of
// one worker process to the bit; only the cell that ends the last round
// returns the head; a dead worker's visit is taken over; an index out of
// range is refused.
func TestRoundsCells(t *testing.T) {
	want := roundsRun(t, t.TempDir(), 3, 1, 6, 7)
	if cells := (&Rounds{Workers: 3}).Cells(6); len(cells) != 6 || cells[4].Round != 1 || cells[4].File != filepath.Join("round-1", "visit-4.head") {
		t.Fatalf("cells: %+v", cells)
	}
	dir := t.TempDir()
	for i := range 6 {
		r, err := cellRun(t, dir, i, 6, fmt.Sprintf("cell-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if (r.Head != nil) != (i == 5) {
			t.Fatalf("cell %d: head returned: %v (only the last cell's)", i, r.Head != nil)
		}
		if i == 5 {
			if got, _ := encodeHead(r.Head); !bytes.Equal(got, want) {
				t.Fatal("cells in order: not the head of one worker process")
			}
		}
	}
	// Cells started at once, the later rounds' cells first: they wait for
	// (and help with) the rounds before theirs.
	dir = t.TempDir()
	var wg sync.WaitGroup
	heads := make([][]byte, 6)
	errs := make([]error, 6)
	for i := 5; i >= 0; i-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := cellRun(t, dir, i, 6, fmt.Sprintf("cell-%d", i))
			if err == nil && r.Head != nil {
				heads[i], err = encodeHead(r.Head)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	ended := 0
	for i := range 6 {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if heads[i] != nil {
			ended++
			if !bytes.Equal(heads[i], want) {
				t.Fatalf("cells at once: cell %d's head is not the head of one worker process", i)
			}
		}
	}
	if ended == 0 {
		t.Fatal("cells at once: no cell returned the head")
	}
	// A worker that died holding visit 1 (its claim is never renewed):
	// cell 1 takes it over once the lease is out, and the head is the same.
	dir = t.TempDir()
	if _, _, err := claim.Take(filepath.Join(dir, "round-0", "visit-1.head"), claim.Owner{Host: "dead", PID: 1}, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var last *ScoredPretrainResult
	for i := range 6 {
		r, err := cellRun(t, dir, i, 6, "alive")
		if err != nil {
			t.Fatal(err)
		}
		last = r
	}
	if got, _ := encodeHead(last.Head); !bytes.Equal(got, want) {
		t.Fatal("a dead worker's visit taken over: not the head of one worker process")
	}
	h, err := claim.History(filepath.Join(dir, "round-0", "visit-1.head"))
	if err != nil || len(h) != 2 || h[1].State != claim.Done || h[1].Owner.Host != "alive" {
		t.Fatalf("visit 1's claims: %+v, %v (want the dead one's, then alive's, done)", h, err)
	}
	if _, err := cellRun(t, t.TempDir(), 6, 6, "x"); err == nil || !strings.Contains(err.Error(), "cell 6: rounds: out of range: this run has 6 cells (0 to 5)") {
		t.Fatalf("cell 6 of 6: %v", err)
	}
}
