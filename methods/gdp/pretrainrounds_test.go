package gdp

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/placer/placer/internal/claim"
)

// policyRounds pre-trains the GO policy for steps steps (2 of them
// imitation) in rounds of workers in dir with procs workers at once
// (goroutines, each with its own graphs and owner: they meet only
// through dir) and returns the policy file's bytes, the same for every
// worker.
func policyRounds(t *testing.T, dir string, workers, procs, steps int) []byte {
	t.Helper()
	var wg sync.WaitGroup
	files := make([][]byte, procs)
	errs := make([]error, procs)
	for w := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := filepath.Join(t.TempDir(), "p.policy")
			pt := &Pretrain{Graphs: tinyGraphs(t), Config: small, Seed: 3, Samples: 4, Warmup: 2, Steps: steps, Checkpoint: out,
				Rounds: &Rounds{Workers: workers, Dir: dir, Owner: claim.Owner{Host: fmt.Sprintf("worker-%d", w), PID: 1}, Poll: 10 * time.Millisecond}}
			r, err := pt.Run(context.Background())
			if err == nil && (r.Policy == nil || r.Step != steps) {
				err = fmt.Errorf("ended with step %d, policy %v", r.Step, r.Policy != nil)
			}
			if err == nil {
				files[w], err = os.ReadFile(out)
			}
			errs[w] = err
		}()
	}
	wg.Wait()
	for w := range procs {
		if errs[w] != nil {
			t.Fatalf("worker %d: %v", w, errs[w])
		}
		if !bytes.Equal(files[w], files[0]) {
			t.Fatalf("worker %d ended with another policy than worker 0", w)
		}
	}
	return files[0]
}

// TestPolicyRounds: the GO policy in rounds of one worker is the policy
// of one plain process to the bit (the imitation steps, the fresh Adam
// for PPO and Adam's moments carried over the rounds included); rounds
// of 2 and 3 give the same policy run to run, whether 1 or several
// processes share the folder, each step run once; a folder that holds
// fewer steps goes on from its last round; cells run one by one give the
// same policy; a round's state file survives its encoding.
func TestPolicyRounds(t *testing.T) {
	dir := t.TempDir()
	plain := pretrain(t, filepath.Join(dir, "plain.policy"), "", 6)
	if plain.Step != 6 {
		t.Fatal(plain.Step)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "plain.policy"))
	if got := policyRounds(t, t.TempDir(), 1, 1, 6); !bytes.Equal(got, want) {
		t.Fatal("rounds of 1 worker: not the plain run's policy")
	}
	if got := policyRounds(t, t.TempDir(), 1, 2, 6); !bytes.Equal(got, want) {
		t.Fatal("rounds of 1 worker run by 2 processes: not the plain run's policy")
	}
	for _, k := range []int{2, 3} {
		one := policyRounds(t, t.TempDir(), k, 1, 6)
		if bytes.Equal(one, want) {
			t.Fatalf("rounds of %d gave the plain policy: nothing averaged", k)
		}
		if again := policyRounds(t, t.TempDir(), k, 1, 6); !bytes.Equal(again, one) {
			t.Fatalf("rounds of %d: another policy run to run", k)
		}
		shared := t.TempDir()
		if many := policyRounds(t, shared, k, k, 6); !bytes.Equal(many, one) {
			t.Fatalf("rounds of %d run by %d processes: not the policy of one process", k, k)
		}
		for i := range 6 {
			h, err := claim.History(filepath.Join(shared, fmt.Sprintf("round-%d", i/k), fmt.Sprintf("step-%d.policy", i)))
			done := 0
			for _, c := range h {
				if c.State == claim.Done {
					done++
				}
			}
			if err != nil || done != 1 {
				t.Errorf("K=%d step %d: %d claims done, want 1 (%v)", k, i, done, err)
			}
			if _, err := os.Stat(filepath.Join(shared, fmt.Sprintf("round-%d", i/k), fmt.Sprintf("step-%d.policy", i))); err == nil {
				t.Errorf("K=%d step %d: its state is kept after its round ended (it is in the next round's)", k, i)
			}
		}
		if k == 3 {
			// The folder of 6 steps, taken on to 9 by two workers started
			// later: the policy of 9 at once.
			nine := policyRounds(t, t.TempDir(), 3, 1, 9)
			if resumed := policyRounds(t, shared, 3, 2, 9); !bytes.Equal(resumed, nine) {
				t.Fatal("9 steps resumed from a folder of 6: not the policy of 9 at once")
			}
			// Cells one by one, each its own worker.
			cells := t.TempDir()
			for i := range 6 {
				out := filepath.Join(t.TempDir(), "c.policy")
				pt := &Pretrain{Graphs: tinyGraphs(t), Config: small, Seed: 3, Samples: 4, Warmup: 2, Steps: 6, Checkpoint: out,
					Rounds: &Rounds{Workers: 3, Dir: cells, Owner: claim.Owner{Host: fmt.Sprint("cell-", i), PID: 1}, One: true, Cell: i}}
				r, err := pt.Run(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if (r.Policy != nil) != (i == 5) {
					t.Fatalf("cell %d returned a policy: %v (only the last cell's)", i, r.Policy != nil)
				}
				if i == 5 {
					if got, _ := os.ReadFile(out); !bytes.Equal(got, one) {
						t.Fatal("cells one by one: not the policy of one process")
					}
				}
			}
		}
	}
	if c := (&Rounds{Workers: 2}).PolicyCells(3); len(c) != 3 || c[2].Round != 1 || c[2].File != filepath.Join("round-1", "step-2.policy") {
		t.Fatalf("policy cells: %+v", c)
	}
	if st, err := readPolicyState(filepath.Join(dir, "missing")); err == nil {
		t.Fatalf("a missing state read: %+v", st)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte(policyStateMagic+"xx"), 0o644)
	if _, err := readPolicyState(bad); err == nil || !strings.Contains(err.Error(), "not a round's state") {
		t.Fatalf("a truncated state: %v", err)
	}
	// Another run's folder (the move head's rounds) is refused.
	pt := &Pretrain{Graphs: tinyGraphs(t), Config: small, Seed: 4, Samples: 4, Warmup: 2, Steps: 3, Rounds: &Rounds{Workers: 3, Dir: filepath.Join(dir)}}
	os.WriteFile(filepath.Join(dir, "rounds.json"), []byte(`{"format":"placer-move-head-rounds"}`), 0o644)
	if _, err := pt.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "holds the rounds of another run") {
		t.Fatalf("another run's folder: %v", err)
	}
}
