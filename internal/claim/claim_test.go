package claim

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// other is an owner on another host: only its lease says whether it is
// alive.
func other(pid int) Owner {
	return Owner{Host: "elsewhere.example", PID: pid, Started: time.Unix(1, 0).UTC()}
}

// put writes a claim file as its owner would have.
func put(t *testing.T, path string, f File) {
	t.Helper()
	data, _ := json.Marshal(f)
	if err := os.WriteFile(Name(path, f.Generation), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// deadPID is the id of a process of this host that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

func TestTake(t *testing.T) {
	now := time.Now().UTC()
	dead := deadPID(t)
	me := Self()
	cases := []struct {
		name    string
		before  []File // claims there before Take
		wantGen int    // generation taken; -1 = ErrHeld
	}{
		{"none", nil, 0},
		{"live on another host", []File{{Owner: other(7), State: Running, Renewed: now, Lease: 60}}, -1},
		{"lease expired on another host", []File{{Owner: other(7), State: Running, Renewed: now.Add(-2 * time.Minute), Lease: 60}}, 1},
		{"owner of this host dead, lease live", []File{{Owner: Owner{Host: me.Host, PID: dead}, State: Running, Renewed: now, Lease: 3600}}, 1},
		{"owner of this host alive (the test's parent)", []File{{Owner: Owner{Host: me.Host, PID: os.Getppid()}, State: Running, Renewed: now, Lease: 3600}}, -1},
		{"released", []File{{Owner: other(7), State: Released, Renewed: now, Lease: 60}}, 1},
		{"done (its result not this run's)", []File{{Owner: other(7), State: Done, Renewed: now, Lease: 60}}, 1},
		{"third generation", []File{
			{Owner: other(7), State: Released, Renewed: now, Lease: 60},
			{Owner: other(8), Generation: 1, State: Running, Renewed: now.Add(-time.Hour), Lease: 60},
		}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cell.json")
			for _, f := range c.before {
				put(t, path, f)
			}
			cl, holder, err := Take(path, me, time.Minute)
			if c.wantGen < 0 {
				if !errors.Is(err, ErrHeld) || cl != nil || holder.Owner != c.before[len(c.before)-1].Owner {
					t.Fatalf("Take = %v, %+v, %v; want ErrHeld by the claim there", cl, holder, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := cl.File().Generation; g != c.wantGen {
				t.Fatalf("generation %d, want %d", g, c.wantGen)
			}
			h, _ := History(path)
			if len(h) != len(c.before)+1 || h[len(h)-1].Owner.PID != me.PID || h[len(h)-1].State != Running {
				t.Fatalf("history %+v", h)
			}
		})
	}
}

// TestTakeRace: workers racing for one expired claim (or none): exactly
// one wins each round.
func TestTakeRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cell.json")
	for round := 0; round < 20; round++ {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won []*Claim
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl, _, err := Take(path, other(w), time.Minute)
				if err == nil {
					mu.Lock()
					won = append(won, cl)
					mu.Unlock()
				} else if !errors.Is(err, ErrHeld) {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("round %d: %d winners, want 1", round, len(won))
		}
		if g := won[0].File().Generation; g != round {
			t.Fatalf("round %d: generation %d", round, g)
		}
		// The winner dies: its claim expires (other hosts' claims
		// expire by their lease only).
		f := won[0].File()
		f.Renewed = f.Renewed.Add(-time.Hour)
		put(t, path, f)
	}
}

func TestKeepRenewsAndLoses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cell.json")
	cl, _, err := Take(path, Self(), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	first := cl.File().Renewed
	lost := make(chan error, 1)
	stop := cl.Keep(func(err error) { lost <- err })
	time.Sleep(500 * time.Millisecond)
	h, _ := History(path)
	if len(h) != 1 || !h[0].Renewed.After(first) || !h[0].Live(time.Now()) {
		t.Fatalf("claim not renewed: %+v", h)
	}
	// Another worker takes it over (as if this one had stalled).
	put(t, path, File{Owner: other(9), Generation: 1, State: Running, Renewed: time.Now().UTC(), Lease: 60})
	select {
	case err := <-lost:
		if !errors.Is(err, ErrLost) {
			t.Fatalf("lost with %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the takeover was not noticed")
	}
	stop()
	if err := cl.Finish(); err != nil {
		t.Fatal(err)
	}
	h, _ = History(path)
	if len(h) != 2 || h[0].State != Done || h[1].Owner.Host != "elsewhere.example" {
		t.Fatalf("history %+v", h)
	}
}
