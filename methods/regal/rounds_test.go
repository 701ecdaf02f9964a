package regal

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
	"github.com/placer/placer/nn"
)

func roundsGraphs(t *testing.T) []TrainGraph {
	var gs []TrainGraph
	for i, f := range []string{"er", "sbm", "ws"} {
		gs = append(gs, TrainGraph{Name: f, Problem: synthProblem(t, f, uint64(10+i), 2)})
	}
	return gs
}

func roundsTrain(t *testing.T, steps int, ck string, rd *Rounds) *Train {
	return &Train{Graphs: roundsGraphs(t), Config: tiny, Seed: 3, Samples: 2, Batch: 1, Evaluations: 40, Steps: steps, Checkpoint: ck, Workers: 1, Rounds: rd}
}

// modelState is a checkpoint's weights and Adam state as a round's state
// file: what decides the model from here on (not its curve's times).
func modelState(t *testing.T, path string) []byte {
	t.Helper()
	m, st, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	s := nn.TrainStateOf(m.Net.Params(), &nn.Adam{})
	s.M, s.V, s.T = st.AdamM, st.AdamV, st.AdamT
	if st.Step == 0 {
		t.Fatal("no steps")
	}
	return s.Encode(roundStateMagic)
}

// regalRounds trains steps steps in rounds of workers in dir with procs
// workers at once (goroutines, each with its own graphs and owner: they
// meet only through dir) and returns the model's state, the same for
// every worker.
func regalRounds(t *testing.T, dir string, workers, procs, steps int) []byte {
	t.Helper()
	var wg sync.WaitGroup
	states := make([][]byte, procs)
	errs := make([]error, procs)
	outs := make([]string, procs)
	for w := range procs {
		outs[w] = filepath.Join(t.TempDir(), "m.model")
		tr := roundsTrain(t, steps, outs[w], &Rounds{Workers: workers, Dir: dir, Owner: claim.Owner{Host: fmt.Sprintf("worker-%d", w), PID: 1}, Poll: 10 * time.Millisecond})
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := tr.Run(context.Background())
			if err == nil && (r.Model == nil || r.Step != steps) {
				err = fmt.Errorf("ended with step %d, model %v", r.Step, r.Model != nil)
			}
			errs[w] = err
		}()
	}
	wg.Wait()
	for w := range procs {
		if errs[w] != nil {
			t.Fatalf("worker %d: %v", w, errs[w])
		}
		states[w] = modelState(t, outs[w])
		if !bytes.Equal(states[w], states[0]) {
			t.Fatalf("worker %d ended with another model than worker 0", w)
		}
	}
	return states[0]
}

// TestRegalRounds: REGAL's training in rounds of one worker is the model
// (weights and Adam's moments) of one plain process to the bit; rounds
// of 2 and 3 give the same model run to run, whether 1 or several
// processes share the folder, each step run once; a folder of fewer
// steps goes on from its last round; cells run one by one give the same
// model; another run's folder and a cell out of range are refused.
func TestRegalRounds(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.model")
	if _, err := roundsTrain(t, 6, plain, nil).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := modelState(t, plain)
	if got := regalRounds(t, t.TempDir(), 1, 1, 6); !bytes.Equal(got, want) {
		t.Fatal("rounds of 1 worker: not the plain run's model")
	}
	if got := regalRounds(t, t.TempDir(), 1, 2, 6); !bytes.Equal(got, want) {
		t.Fatal("rounds of 1 worker run by 2 processes: not the plain run's model")
	}
	for _, k := range []int{2, 3} {
		one := regalRounds(t, t.TempDir(), k, 1, 6)
		if bytes.Equal(one, want) {
			t.Fatalf("rounds of %d gave the plain model: nothing averaged", k)
		}
		if again := regalRounds(t, t.TempDir(), k, 1, 6); !bytes.Equal(again, one) {
			t.Fatalf("rounds of %d: another model run to run", k)
		}
		shared := t.TempDir()
		if many := regalRounds(t, shared, k, k, 6); !bytes.Equal(many, one) {
			t.Fatalf("rounds of %d run by %d processes: not the model of one process", k, k)
		}
		for i := range 6 {
			path := filepath.Join(shared, fmt.Sprintf("round-%d", i/k), fmt.Sprintf("step-%d.model", i))
			h, err := claim.History(path)
			done := 0
			for _, c := range h {
				if c.State == claim.Done {
					done++
				}
			}
			if err != nil || done != 1 {
				t.Errorf("K=%d step %d: %d claims done, want 1 (%v)", k, i, done, err)
			}
			if _, err := os.Stat(path); err == nil {
				t.Errorf("K=%d step %d: its state is kept after its round ended", k, i)
			}
		}
		if k != 3 {
			continue
		}
		nine := regalRounds(t, t.TempDir(), 3, 1, 9)
		if resumed := regalRounds(t, shared, 3, 2, 9); !bytes.Equal(resumed, nine) {
			t.Fatal("9 steps resumed from a folder of 6: not the model of 9 at once")
		}
		cells := t.TempDir()
		for i := range 6 {
			out := filepath.Join(t.TempDir(), "c.model")
			r, err := roundsTrain(t, 6, out, &Rounds{Workers: 3, Dir: cells, Owner: claim.Owner{Host: fmt.Sprint("cell-", i), PID: 1}, One: true, Cell: i}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if (r.Model != nil) != (i == 5) {
				t.Fatalf("cell %d returned a model: %v (only the last cell's)", i, r.Model != nil)
			}
			if i == 5 && !bytes.Equal(modelState(t, out), one) {
				t.Fatal("cells one by one: not the model of one process")
			}
		}
	}
	// A round's state is the mean of its steps' states: each step run
	// alone (a cell whose round stays open keeps its file) from round 0.
	var steps []nn.TrainState
	for i := range 2 {
		cell := t.TempDir()
		if _, err := roundsTrain(t, 2, "", &Rounds{Workers: 2, Dir: cell, One: true, Cell: i}).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		s, err := readRoundState(filepath.Join(cell, "round-0", fmt.Sprintf("step-%d.model", i)))
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, s)
	}
	both := t.TempDir()
	regalRounds(t, both, 2, 1, 2)
	if got, _ := os.ReadFile(filepath.Join(both, "round-1.model")); !bytes.Equal(got, nn.MeanTrainState(steps, false).Encode(roundStateMagic)) {
		t.Fatal("a round of 2: not the mean of its steps")
	}
	if c := (&Rounds{Workers: 2}).Cells(3); len(c) != 3 || c[2].Round != 1 || c[2].File != filepath.Join("round-1", "step-2.model") {
		t.Fatalf("cells: %+v", c)
	}
	if _, err := roundsTrain(t, 6, "", &Rounds{Workers: 3, Dir: dir, One: true, Cell: 6}).Run(context.Background()); err == nil || !strings.Contains(err.Error(), "cell 6: rounds: out of range") {
		t.Fatalf("cell 6 of 6: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "rounds.json"), []byte(`{"format":"placer-policy-rounds"}`), 0o644)
	if _, err := roundsTrain(t, 3, "", &Rounds{Workers: 3, Dir: dir}).Run(context.Background()); err == nil || !strings.Contains(err.Error(), "holds the rounds of another run") {
		t.Fatalf("another run's folder: %v", err)
	}
	for _, tr := range []*Train{
		{Steps: 0, Rounds: &Rounds{Workers: 1, Dir: dir}},
		{Steps: 3, Time: time.Second, Rounds: &Rounds{Workers: 1, Dir: dir}},
		{Steps: 3, SelfImitation: 1, Rounds: &Rounds{Workers: 1, Dir: dir}},
		{Steps: 3, Rounds: &Rounds{Workers: 0, Dir: dir}},
	} {
		tr.Graphs = roundsGraphs(t)
		if _, err := tr.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "rounds") {
			t.Errorf("%+v: %v", tr, err)
		}
	}
}
