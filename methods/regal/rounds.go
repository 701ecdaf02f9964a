package regal

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/claim"
	"github.com/placer/placer/internal/rounds"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/optimize"
)

// Rounds runs a Train in synchronous rounds that any number of worker
// processes share through a folder (package rounds): round r's Workers
// steps (r*Workers ... r*Workers+Workers-1, each one REINFORCE step on
// its graphs and with its randomness as in one process: graphs
// (i*Batch+b) mod G, seed f(Seed, i, b)) all start from round r's state,
// the network's parameters with Adam's moments and step count; each step
// is claimed and kept as a file; the next round's state is their mean,
// parameter by parameter and moment by moment in step order (in float64,
// rounded once to float32), with the largest of their Adam step counts
// (all the same: one more than the round's). With Workers = 1 the mean
// of one state is that state, so the model is the one-process run's, to
// the bit; with more, the same seed and Workers give the same model
// whichever process ran which step.
type Rounds struct {
	// Workers is the steps of a round (1 or more): the scheme's worker
	// count, which decides the model (not how many processes run it).
	Workers int
	// Dir holds the rounds: round-R.model (the state round R starts
	// from), round-R/step-I.model (its steps' states while the round
	// runs, with their claims) and rounds.json (the run's seed, worker
	// count, knobs and graphs; another run's folder is refused).
	Dir string
	// Owner claims the steps (zero = this process); Lease is a claim's
	// lease (0 = claim.DefaultLease); Poll is how often a worker waiting
	// for other workers' steps looks again (0 = 1 s).
	Owner claim.Owner
	Lease time.Duration
	Poll  time.Duration
	// One makes this process one cell of an array job: it runs step
	// Cell (helping with the rounds before its own), and returns once
	// that is kept; TrainResult.Model is nil unless that ended the last
	// round.
	One  bool
	Cell int
}

// Cells lists the cells of a Rounds run of steps steps: one per step, in
// step order.
func (rd *Rounds) Cells(steps int) []rounds.Cell {
	return rounds.Cells(rd.Workers, steps, "step-%d.model")
}

const roundStateMagic = "placer-regal-round-1\n"

// roundsFile is Dir's rounds.json.
type roundsFile struct {
	Format      string   `json:"format"`
	Seed        uint64   `json:"seed"`
	Workers     int      `json:"workers"`
	Objective   string   `json:"objective"`
	Samples     int      `json:"samples"`
	Batch       int      `json:"batch"`
	Evaluations int      `json:"evaluations"`
	Graphs      []string `json:"graphs"`
}

func readRoundState(path string) (nn.TrainState, error) {
	return nn.ReadTrainState(path, roundStateMagic, "regal: train")
}

// checkRounds says why t cannot run in rounds.
func (t *Train) checkRounds() error {
	rd := t.Rounds
	switch {
	case rd.Workers < 1 || rd.Dir == "":
		return errors.New("regal: train: rounds need a worker count of 1 or more and a folder")
	case t.Steps < 1 || t.Time > 0 || t.Resume != "":
		return errors.New("regal: train: rounds need a step count (--steps), no time limit and no --resume (the folder is the checkpoint): the model must not depend on how fast a worker is")
	case t.SelfImitation > 0:
		return errors.New("regal: train: rounds do not take --self-imitation (its best actions are not part of a round's state)")
	}
	return t.driver(0).CheckCell()
}

func (t *Train) driver(steps int) *rounds.Run[nn.TrainState] {
	rd := t.Rounds
	if steps == 0 {
		steps = t.Steps
	}
	return &rounds.Run[nn.TrainState]{Workers: rd.Workers, Dir: rd.Dir, Owner: rd.Owner, Lease: rd.Lease, Poll: rd.Poll, One: rd.One, Cell: rd.Cell,
		Steps: steps, What: "regal: train", Unit: "step", RoundFile: "round-%d.model", StepFile: "step-%d.model"}
}

// runRounds is Run's training loop with t.Rounds (checked by
// checkRounds): this process works on the rounds in Dir until Steps
// steps are done (by whichever workers), then writes the last round's
// model to Checkpoint, with its Adam state and this process's curve.
func (t *Train) runRounds(ctx context.Context, r *TrainResult, names []string, inputs []*Input, uniform []float64,
	samples, batch, evals, workers int, lr, entCoef float64) (*TrainResult, error) {
	m := r.Model
	params := m.Net.Params()
	d := t.driver(0)
	d.Header, _ = json.Marshal(roundsFile{Format: "placer-regal-rounds", Seed: r.Seed, Workers: t.Rounds.Workers, Objective: t.Objective.String(),
		Samples: samples, Batch: batch, Evaluations: evals, Graphs: names})
	d.Start = nn.TrainStateOf(params, &nn.Adam{})
	d.Encode = func(s nn.TrainState) ([]byte, error) { return s.Encode(roundStateMagic), nil }
	d.Read = readRoundState
	start := time.Now()
	d.Step = func(ctx context.Context, i int, cur nn.TrainState) (nn.TrainState, func(), error) {
		opt, err := cur.Apply("regal: train", params)
		if err != nil {
			return nn.TrainState{}, nil, err
		}
		pt, err := t.step(ctx, m, params, opt, inputs, uniform, nil, r.Seed, i, samples, batch, evals, workers, lr, entCoef)
		if err != nil {
			if ctx.Err() != nil {
				err = errors.Join(optimize.ErrStopped, err)
			}
			return nn.TrainState{}, nil, err
		}
		return nn.TrainStateOf(params, opt), func() {
			pt.Step, pt.Elapsed = i+1, time.Since(start).Seconds()
			r.Curve = append(r.Curve, pt)
			if t.OnStep != nil {
				t.OnStep(pt)
			}
		}, nil
	}
	d.Stopped = func(err error) bool { return errors.Is(err, optimize.ErrStopped) }
	d.Mean = func(_ int, _ nn.TrainState, states []nn.TrainState) nn.TrainState {
		return nn.MeanTrainState(states, false)
	}
	// A round's steps (three times the network's size each) are in the
	// next round's state once it is written.
	d.Prune = true
	r.Status = optimize.BudgetReached
	o, err := d.Go(ctx)
	if err != nil {
		return nil, err
	}
	r.Elapsed = time.Since(start)
	if o.Cancelled {
		r.Status, r.Model = optimize.Cancelled, nil
		return r, nil
	}
	if !o.Done {
		r.Model, r.Step = nil, o.Rounds*t.Rounds.Workers
		return r, nil
	}
	opt, err := o.Final.Apply("regal: train", params)
	if err != nil {
		return nil, err
	}
	r.Step = t.Steps
	if t.Checkpoint != "" {
		am, av, at := opt.State()
		st := &trainState{Seed: r.Seed, Step: r.Step, Elapsed: r.Elapsed.Seconds(), Graphs: names, Objective: t.Objective.String(),
			AdamM: am, AdamV: av, AdamT: at, Curve: r.Curve}
		js, err := encode(m.file(st))
		if err != nil {
			return nil, err
		}
		if err := atomicfile.WriteBytes(t.Checkpoint, js); err != nil {
			return nil, err
		}
	}
	return r, nil
}
