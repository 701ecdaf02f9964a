package regal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/placer/placer/internal/atomicfile"
	"github.com/placer/placer/internal/bounded"
	"github.com/placer/placer/methods/brkga"
	"github.com/placer/placer/nn"
	"github.com/placer/placer/optimize"
)

// TrainGraph is one graph of the training set: its problem (graph,
// cluster, evaluator, tasks).
type TrainGraph struct {
	Name    string
	Problem *optimize.Problem
}

// Point is one training step.
type Point struct {
	Step       int     `json:"step"` // 1-based, across resumed runs
	Graphs     string  `json:"graphs"`
	Elapsed    float64 `json:"elapsed_s"`
	MeanReward float64 `json:"mean_reward"` // over the step's samples; -1 = uniform BRKGA
	BestReward float64 `json:"best_reward"`
	Entropy    float64 `json:"entropy"`       // per gene group, nats
	Uniform    float64 `json:"uniform_share"` // share of sampled gene groups with the uniform buckets
}

// Train is REGAL's training (§4.1, A.14-A.16): a contextual bandit
// trained with REINFORCE. Every step takes Batch graphs (in turn); for
// each it runs the network once, draws Samples actions (bucket choices
// per node and gene group), runs BRKGA with each action's mutant
// distributions at Evaluations evaluations, and rewards each with
// Reward(objective, uniform BRKGA's objective at the same budget) (the
// reference is computed once per graph). The baseline of a sample is the
// mean reward of the graph's other samples (leave-one-out; REGAL learns a
// baseline network instead); advantages are divided by the step's
// root-mean-square advantage. One Adam step (gradients clipped to norm 10,
// as REGAL A.14) follows each step.
//
// Runs are deterministic: step i's randomness depends only on Seed and i,
// and the checkpoint holds the weights, Adam's moments and the curve, so
// a resumed run continues exactly as one that never stopped.
type Train struct {
	Graphs []TrainGraph
	// Model to train; nil = a new one from Config and Seed (or the
	// checkpoint's, with Resume).
	Model  *Model
	Config Config
	Seed   uint64
	// Objective is what the reward measures and the BRKGA runs rank by
	// (it is set on every training graph's problem, and recorded in the
	// model: Model.Objective).
	Objective optimize.Objective
	// Samples is the number of actions per graph and step; 0 = 4.
	Samples int
	// Batch is the number of graphs per step; 0 = 2.
	Batch int
	// Evaluations is BRKGA's budget during training; 0 = 1,000 (REGAL
	// A.14 trains at 1,000).
	Evaluations int
	// LearningRate is Adam's step size; 0 = 3e-3.
	LearningRate float64
	// Entropy is the entropy bonus per gene group; 0 = 0.01, negative =
	// none.
	Entropy float64
	// Steps is the total number of steps across resumed runs; Time bounds
	// this run's wall time. Both zero = 100 steps.
	Steps int
	Time  time.Duration
	// Checkpoint is the model file written (atomically, with the
	// training state) every CheckpointEvery steps (0 = 20), on
	// cancellation and at the end; "" = none.
	Checkpoint      string
	CheckpointEvery int
	// Resume continues from a checkpoint: its weights, Adam state, step,
	// seed, elapsed time and curve.
	Resume string
	// SelfImitation, when positive, adds self-imitation learning (Oh et
	// al., 2018) to REINFORCE: each graph's best action so far (by
	// reward) is replayed as one more sample whenever it beats the mean
	// of the step's samples of that graph, with advantage SelfImitation
	// times that margin (normalized as the others). REINFORCE's one
	// scalar per few hundred categorical choices is a sparse signal; the
	// replay keeps pulling the network towards the buckets that did
	// best. 0 = off (REGAL's training).
	SelfImitation float64
	// Workers is the number of BRKGA runs in flight; 0 = 2.
	Workers int
	// Rounds, if set, trains in synchronous rounds that any number of
	// processes share through a folder (see Rounds): Steps steps, no
	// Time, Resume or SelfImitation; the folder is the checkpoint, and
	// Checkpoint is written once, at the end.
	Rounds *Rounds
	// OnStep, if set, sees every step.
	OnStep func(Point)
	// OnReference, if set, sees each graph's uniform BRKGA objective.
	OnReference func(graph string, objective float64)
}

// TrainResult is what a training run produced.
type TrainResult struct {
	Model   *Model
	Seed    uint64
	Step    int
	Elapsed time.Duration
	Curve   []Point
	// Uniform is each graph's uniform BRKGA objective, by graph name.
	Uniform map[string]float64
	Status  optimize.Status
}

// trainState is the checkpoint's training state.
type trainState struct {
	Seed      uint64      `json:"seed"`
	Step      int         `json:"step"`
	Elapsed   float64     `json:"elapsed_s"`
	Graphs    []string    `json:"graphs"`
	Objective string      `json:"objective"`
	AdamM     [][]float32 `json:"adam_m"`
	AdamV     [][]float32 `json:"adam_v"`
	AdamT     int         `json:"adam_t"`
	Curve     []Point     `json:"curve"`
	// Best is each graph's best action so far and its reward
	// (SelfImitation; absent = none yet).
	Best []bestAction `json:"best,omitempty"`
}

// bestAction is a graph's best sampled action so far (self-imitation).
type bestAction struct {
	M      []uint8 `json:"m"`
	V      []uint8 `json:"v"`
	Reward float64 `json:"reward"`
}

// LoadCheckpoint reads a checkpoint written by Train.
func LoadCheckpoint(path string) (*Model, *trainState, error) {
	f, err := bounded.Open(path, bounded.Model, "a REGAL checkpoint")
	if err != nil {
		return nil, nil, fmt.Errorf("regal: checkpoint: %w", err)
	}
	defer f.Close()
	m, st, err := readFile(f, path)
	if err != nil {
		return nil, nil, err
	}
	if st == nil {
		return nil, nil, fmt.Errorf("regal: %s is a model without training state, not a checkpoint", path)
	}
	return m, st, nil
}

func (t *Train) defaults() (samples, batch, evals, every, workers int, lr, ent float64) {
	return cmp.Or(t.Samples, 4), cmp.Or(t.Batch, 2), cmp.Or(t.Evaluations, 1000), cmp.Or(t.CheckpointEvery, 20), cmp.Or(t.Workers, 2),
		cmp.Or(t.LearningRate, 3e-3), max(cmp.Or(t.Entropy, 0.01), 0)
}

// AugmentSeed is the seed of augmented copy k of workload w of a training
// set (the training job's workloads.Augment seeds); never 0, so every copy
// is augmented.
func AugmentSeed(seed uint64, w, k int) uint64 { return mix(seed, uint64(w), uint64(k)) | 1 }

// mix derives a seed from a seed and indices.
func mix(seed uint64, xs ...uint64) uint64 {
	for _, x := range xs {
		seed ^= x + 0x9e3779b97f4a7c15 + seed<<6 + seed>>2
		seed = (seed ^ seed>>30) * 0xbf58476d1ce4e5b9
		seed = (seed ^ seed>>27) * 0x94d049bb133111eb
		seed ^= seed >> 31
	}
	return seed
}

// Run trains. A cancelled ctx is not an error: the run stops, writes its
// checkpoint and returns the model so far (Status Cancelled).
func (t *Train) Run(ctx context.Context) (*TrainResult, error) {
	samples, batch, evals, every, workers, lr, entCoef := t.defaults()
	if len(t.Graphs) == 0 {
		return nil, errors.New("regal: train: no graphs")
	}
	if samples < 2 {
		return nil, fmt.Errorf("regal: train: samples %d, want at least 2 (the baseline is the other samples' mean)", samples)
	}
	if batch < 1 || evals < 1 || workers < 1 || every < 1 || t.Steps < 0 || t.Time < 0 {
		return nil, errors.New("regal: train: batch, evaluations, workers, checkpoint interval must be positive, steps and time not negative")
	}
	if t.Rounds != nil {
		if err := t.checkRounds(); err != nil {
			return nil, err
		}
	}
	names := make([]string, len(t.Graphs))
	for i, g := range t.Graphs {
		names[i] = g.Name
		g.Problem.Objective = t.Objective
	}
	r := &TrainResult{Model: t.Model, Seed: t.Seed, Uniform: map[string]float64{}}
	opt := &nn.Adam{}
	var elapsed0 time.Duration
	var best []bestAction
	if t.Resume != "" {
		m, st, err := LoadCheckpoint(t.Resume)
		if err != nil {
			return nil, err
		}
		if !slices.Equal(st.Graphs, names) {
			return nil, fmt.Errorf("regal: train: checkpoint %s was trained on %d graphs, this run has %d (or in another order); resume with the same graphs", t.Resume, len(st.Graphs), len(names))
		}
		if st.Objective != t.Objective.String() {
			return nil, fmt.Errorf("regal: train: checkpoint %s was trained for %s, this run asks for %s", t.Resume, st.Objective, t.Objective)
		}
		r.Model, r.Seed, r.Step, r.Curve = m, st.Seed, st.Step, st.Curve
		if len(st.Best) == len(names) {
			best = st.Best
		}
		elapsed0 = time.Duration(st.Elapsed * float64(time.Second))
		if st.AdamT > 0 {
			opt.SetState(st.AdamM, st.AdamV, st.AdamT)
		}
	}
	if r.Model == nil {
		m, err := NewModel(t.Config, r.Seed)
		if err != nil {
			return nil, err
		}
		r.Model = m
	}
	m := r.Model
	// The model is now trained for t.Objective (a given Model trained for
	// another is retrained for this one).
	m.Objective = t.Objective
	cfg := m.Net.Cfg
	params := m.Net.Params()
	save := func() error {
		if t.Checkpoint == "" {
			return nil
		}
		am, av, at := opt.State()
		st := &trainState{Seed: r.Seed, Step: r.Step, Elapsed: r.Elapsed.Seconds(), Graphs: names, Objective: t.Objective.String(),
			AdamM: am, AdamV: av, AdamT: at, Curve: r.Curve, Best: best}
		js, err := encode(m.file(st))
		if err != nil {
			return err
		}
		return atomicfile.WriteBytes(t.Checkpoint, js)
	}

	// The inputs (neighbour samples fixed per graph) and uniform BRKGA's
	// objective at the training budget, once per graph.
	inputs := make([]*Input, len(t.Graphs))
	uniform := make([]float64, len(t.Graphs))
	err := parallel(ctx, len(t.Graphs), workers, func(i int) error {
		g := t.Graphs[i]
		in, err := NewInput(g.Problem, cfg, mix(r.Seed, uint64(i), 1))
		if err != nil {
			return fmt.Errorf("regal: train: %s: %w", g.Name, err)
		}
		inputs[i] = in
		res, err := (&brkga.BRKGA{}).Optimize(ctx, g.Problem, &optimize.Settings{Budget: optimize.Budget{Evaluations: evals}, Seed: mix(r.Seed, uint64(i), 2)})
		if err != nil {
			return fmt.Errorf("regal: train: %s: uniform BRKGA: %w", g.Name, err)
		}
		uniform[i] = t.Objective.Cost(&res.Eval)
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			r.Status = optimize.Cancelled
			return r, nil
		}
		return nil, err
	}
	for i, g := range t.Graphs {
		r.Uniform[g.Name] = uniform[i]
		if t.OnReference != nil {
			t.OnReference(g.Name, uniform[i])
		}
	}

	if t.Rounds != nil {
		return t.runRounds(ctx, r, names, inputs, uniform, samples, batch, evals, workers, lr, entCoef)
	}
	if t.SelfImitation > 0 && best == nil {
		best = make([]bestAction, len(t.Graphs)) // no M: none yet
	}
	steps := t.Steps
	if steps == 0 && t.Time == 0 {
		steps = 100
	}
	start := time.Now()
	lastSave := r.Step
	r.Status = optimize.BudgetReached
	for steps == 0 || r.Step < steps {
		if ctx.Err() != nil {
			r.Status = optimize.Cancelled
			break
		}
		if t.Time > 0 && time.Since(start) >= t.Time {
			r.Status = optimize.TimeUp
			break
		}
		pt, err := t.step(ctx, m, params, opt, inputs, uniform, best, r.Seed, r.Step, samples, batch, evals, workers, lr, entCoef)
		if err != nil {
			if ctx.Err() != nil {
				r.Status = optimize.Cancelled
				break
			}
			return nil, err
		}
		r.Step++
		r.Elapsed = elapsed0 + time.Since(start)
		pt.Step, pt.Elapsed = r.Step, r.Elapsed.Seconds()
		r.Curve = append(r.Curve, pt)
		if t.OnStep != nil {
			t.OnStep(pt)
		}
		if r.Step-lastSave >= every {
			if err := save(); err != nil {
				return nil, err
			}
			lastSave = r.Step
		}
	}
	r.Elapsed = elapsed0 + time.Since(start)
	if err := save(); err != nil {
		return nil, err
	}
	return r, nil
}

// step is one REINFORCE step over batch graphs.
func (t *Train) step(ctx context.Context, m *Model, params nn.Params[float32], opt *nn.Adam, inputs []*Input, uniform []float64, best []bestAction,
	seed uint64, step, samples, batch, evals, workers int, lr, entCoef float64) (Point, error) {
	cfg := m.Net.Cfg
	type run struct {
		gi     int
		a      Action
		reward float64
	}
	type fwd struct {
		ar     *nn.Arena[float32]
		logits []float32
		cache  *Cache[float32]
	}
	var pt Point
	fw := make([]fwd, batch)
	runs := make([]run, 0, batch*samples)
	for b := range batch {
		gi := (step*batch + b) % len(t.Graphs)
		in := inputs[gi]
		ar := &nn.Arena[float32]{}
		logits, c := m.Net.Forward(ar, nn.Convert[float32](in.X), in.N, in.Nbrs)
		fw[b] = fwd{ar, logits, c}
		rng := rand.New(rand.NewPCG(mix(seed, uint64(step), uint64(b)), 3))
		for range samples {
			runs = append(runs, run{gi: gi, a: Sample(cfg, logits, in.N, rng, false)})
		}
		if b > 0 {
			pt.Graphs += ","
		}
		pt.Graphs += t.Graphs[gi].Name
	}
	err := parallel(ctx, len(runs), workers, func(i int) error {
		ru := &runs[i]
		g := t.Graphs[ru.gi]
		ga := &brkga.BRKGA{Mutants: Betas(cfg, ru.a, inputs[ru.gi].UnitOf, brkga.NewLayout(g.Problem))}
		// The samples of one graph share BRKGA's seed (common random
		// numbers): their rewards differ by their actions.
		res, err := ga.Optimize(ctx, g.Problem, &optimize.Settings{Budget: optimize.Budget{Evaluations: evals}, Seed: mix(seed, uint64(step), uint64(i/samples), 4)})
		if err != nil {
			return fmt.Errorf("regal: train: %s: %w", g.Name, err)
		}
		ru.reward = Reward(t.Objective.Cost(&res.Eval), uniform[ru.gi])
		return nil
	})
	if err != nil {
		return pt, err
	}
	pt.BestReward = math.Inf(-1)
	uniM, uniV, hasUni := uniformBuckets(cfg)
	groups := 0
	// Advantages: each reward less the mean of its graph's other samples,
	// divided by the step's root-mean-square advantage (so that the step
	// size, and the weight of the entropy bonus, do not depend on how far
	// rewards spread on these graphs).
	advs := make([]float64, len(runs))
	ms := 0.0
	for b := range batch {
		rs := runs[b*samples : (b+1)*samples]
		sum := 0.0
		for _, ru := range rs {
			sum += ru.reward
		}
		for i, ru := range rs {
			a := ru.reward - (sum-ru.reward)/float64(samples-1)
			advs[b*samples+i] = a
			ms += a * a / float64(len(runs))
		}
	}
	rms := math.Sqrt(ms)
	if rms > 1e-9 {
		for i := range advs {
			advs[i] /= rms
		}
	}
	// Self-imitation: each graph's best action so far, replayed with the
	// margin by which it beats this step's samples of the graph.
	silAdv := make([]float64, batch)
	if best != nil {
		for b := range batch {
			rs := runs[b*samples : (b+1)*samples]
			bb := &best[rs[0].gi]
			mean := 0.0
			for _, ru := range rs {
				mean += ru.reward / float64(samples)
				if len(bb.M) == 0 || ru.reward > bb.Reward {
					bb.M, bb.V, bb.Reward = slices.Clone(ru.a.M), slices.Clone(ru.a.V), ru.reward
				}
			}
			if margin := bb.Reward - mean; len(bb.M) > 0 && margin > 0 && rms > 1e-9 {
				silAdv[b] = t.SelfImitation * margin / rms
			}
		}
	}
	for b := range batch {
		rs := runs[b*samples : (b+1)*samples]
		in := inputs[rs[0].gi]
		dl := make([]float32, len(fw[b].logits))
		tmp := make([]float32, len(fw[b].logits))
		for i, ru := range rs {
			adv := advs[b*samples+i] / float64(batch*samples)
			_, ent := Grad(cfg, fw[b].logits, in.N, ru.a, adv, entCoef/float64(batch*samples), tmp)
			for j, v := range tmp {
				dl[j] += v
			}
			pt.MeanReward += ru.reward / float64(batch*samples)
			pt.BestReward = math.Max(pt.BestReward, ru.reward)
			pt.Entropy += ent / float64(batch*samples)
			if hasUni {
				for k := range ru.a.M {
					if int(ru.a.M[k]) == uniM && int(ru.a.V[k]) == uniV {
						pt.Uniform++
					}
				}
			}
			groups += len(ru.a.M)
		}
		if silAdv[b] > 0 {
			bb := &best[rs[0].gi]
			Grad(cfg, fw[b].logits, in.N, Action{M: bb.M, V: bb.V}, silAdv[b]/float64(batch*samples), 0, tmp)
			for j, v := range tmp {
				dl[j] += v
			}
		}
		m.Net.Backward(fw[b].ar, fw[b].cache, dl)
	}
	pt.Uniform /= float64(groups)
	nn.ClipGradNorm(params, 10)
	opt.Step(params, lr)
	return pt, nil
}

// parallel runs f(0..n-1) on up to workers goroutines and returns the
// first error (by index).
func parallel(ctx context.Context, n, workers int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i := range n {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = f(i)
		}(i)
	}
	wg.Wait()
	return errors.Join(errs...)
}
