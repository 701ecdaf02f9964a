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
