package gdp

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/placer/placer/nn"
	"github.com/placer/placer/optimize"
)

// Pre-training the GO policy in synchronous rounds (Pretrain.Rounds):
// round r's Workers steps (r*Workers ... r*Workers+Workers-1, each its
// graph and randomness as in one process) all start from round r's state,
// the policy's parameters and Adam's moments and step count; each step
// is claimed and kept as a file, as Rounds does for the move head; the
// next round's state is their mean, parameter by parameter and moment by
// moment in step order (in float64, rounded once to float32), with the
// largest of their Adam step counts; a round that holds the last
// imitation step hands PPO a fresh Adam, as one process does. With
// Workers = 1 the mean of one state is that state, so the policy is the
// one-process run's, to the bit; with more, the same seed and Workers
// give the same policy whichever process ran which step.

// policyState is a round's or a step's state: the policy's parameters
// and its Adam optimizer's moments (nil = a fresh Adam) and step count.
type policyState = nn.TrainState

const policyStateMagic = "placer-policy-round-1\n"

// readPolicyState reads a file written from a policyState's Encode.
func readPolicyState(path string) (policyState, error) {
	return nn.ReadTrainState(path, policyStateMagic, "pretrain")
}

// runRounds is Run with pt.Rounds: this process works on the rounds in
// Dir until Steps steps are done (by whichever workers), then writes the
// last round's policy to Checkpoint. With Rounds.One it runs step Cell
// (see Rounds.One); the result's Policy is nil unless that ended the
// last round.
func (pt *Pretrain) runRounds(ctx context.Context) (*PretrainResult, error) {
	rd := pt.Rounds
	if rd.Workers < 1 || rd.Dir == "" {
		return nil, errors.New("pretrain: rounds need a worker count of 1 or more and a folder")
	}
	if pt.Steps < 1 || pt.Time > 0 || pt.Resume != "" {
		return nil, errors.New("pretrain: rounds need a step count (--steps), no time limit and no --resume (the folder is the checkpoint): the policy must not depend on how fast a worker is")
	}
	d := driverOf[policyState](rd, pt.Steps, "step", "round-%d.policy", "step-%d.policy")
	if err := d.CheckCell(); err != nil {
		return nil, err
	}
	res, names, warm, err := pt.start()
	if err != nil {
		return nil, err
	}
	pol := res.Policy
	gs := make([]prepared, len(pt.Graphs))
	for i := range pt.Graphs {
		if gs[i], err = pt.prepareGraph(ctx, pol, &pt.Graphs[i], res.Seed); err != nil {
			return nil, err
		}
	}
	d.Header, _ = json.Marshal(roundsFile{Format: "placer-policy-rounds", Seed: res.Seed, Workers: rd.Workers, Graphs: names})
	d.Start = nn.TrainStateOf(pol.Params(), &nn.Adam{})
	d.Encode = func(s policyState) ([]byte, error) { return s.Encode(policyStateMagic), nil }
	d.Read = readPolicyState
	kn := pt.knobs()
	start := time.Now()
	d.Step = func(ctx context.Context, i int, cur policyState) (policyState, func(), error) {
		opt, err := cur.Apply("pretrain", pol.Params())
		if err != nil {
			return policyState{}, nil, err
		}
		pp, gi, opt, err := pt.stepAt(ctx, i, res.Seed, warm, pol, opt, gs, kn)
		if err != nil {
			return policyState{}, nil, err
		}
		return nn.TrainStateOf(pol.Params(), opt), func() {
			pp.Step, pp.Graph, pp.Elapsed = i+1, gs[gi].g.Name, time.Since(start).Seconds()
			res.Curve = append(res.Curve, pp)
			if pt.OnStep != nil {
				pt.OnStep(pp)
			}
		}, nil
	}
	d.Stopped = func(err error) bool { return errors.Is(err, optimize.ErrStopped) }
	// The round that holds the last imitation step hands PPO a fresh
	// Adam, as one process does.
	d.Mean = func(first int, _ policyState, states []policyState) policyState {
		return nn.MeanTrainState(states, first <= warm-1 && warm-1 < first+len(states))
	}
	// The round's steps (three times the policy's size each, with Adam's
	// moments) are in the next round's state once it is written.
	d.Prune = true
	res.Status = optimize.BudgetReached
	o, err := d.Go(ctx)
	if err != nil {
		return nil, err
	}
	if o.Cancelled {
		res.Status = optimize.Cancelled
		return res, nil
	}
	res.Elapsed = time.Since(start)
	if !o.Done {
		res.Policy, res.Step = nil, o.Rounds*rd.Workers
		return res, nil
	}
	if _, err := o.Final.Apply("pretrain", pol.Params()); err != nil {
		return nil, err
	}
	res.Step = pt.Steps
	if pt.Checkpoint != "" {
		if err := SaveCheckpoint(pt.Checkpoint, pol, Checkpoint{Step: res.Step, Seed: res.Seed, Graphs: names, Elapsed: res.Elapsed.Seconds(), Warmup: warm}); err != nil {
			return nil, err
		}
	}
	return res, nil
}
