package regal

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/placer/placer/methods/brkga"
	"github.com/placer/placer/optimize"
)

// REGAL is BRKGA steered by a trained network (REGAL §4): one forward
// pass over the problem's graph, one draw of the bucket choices per node
// and gene group (or their most likely buckets with Greedy), and BRKGA
// with its mutants drawn from the resulting Beta distributions. Its
// budget is BRKGA's (default optimize.DefaultEvaluations, REGAL's 5,000);
// every evaluation goes to BRKGA (REGAL's 400 evaluations of BRKGA
// features are not spent: the network reads the graph only).
//
// The model must have been trained for the problem's objective
// (Model.Objective == Problem.Objective): a model trained for step time
// has learnt nothing about peak memory and the other way round, so REGAL
// returns an error rather than run with it. With no Model, ModelFor picks
// one by the problem's objective.
type REGAL struct {
	Model *Model
	// ModelFor, used when Model is nil, returns the model for an
	// objective (the methods regal and regal-zero-shot: the embedded
	// default model for it).
	ModelFor func(optimize.Objective) (*Model, error)
	// GA holds BRKGA's knobs (population, elites, children, bias); its
	// Mutants are replaced by the network's. Zero = BRKGA's defaults.
	GA brkga.BRKGA
	// Greedy takes each categorical's most likely bucket instead of a
	// sample (the paper samples).
	Greedy bool
}

var _ optimize.Optimizer = (*REGAL)(nil)

// Name returns "regal".
func (*REGAL) Name() string { return "regal" }

// Settings are what a REGAL run records of its knobs.
type Settings struct {
	Config Config `json:"config"`
	Seed   uint64 `json:"model_seed"`
	// Objective is what the model was trained for (the problem's).
	Objective optimize.Objective `json:"model_objective"`
	Greedy    bool               `json:"greedy"`
	// Uniform is the fraction of genes whose Beta is the uniform one.
	Uniform float64 `json:"uniform_fraction"`
}

// KnobsOf is Settings's name (optimize.Knobs).
func (Settings) KnobsOf() string { return "regal" }

// Mutants returns the per-gene mutant distributions the model proposes
// for p (the action drawn from seed, or the greedy one).
func (m *Model) Mutants(p *optimize.Problem, seed uint64, greedy bool) ([]brkga.Beta, Action, error) {
	in, logits, err := m.Logits(p, seed)
	if err != nil {
		return nil, Action{}, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x616374696f6e))
	a := Sample(m.Net.Cfg, logits, in.N, rng, greedy)
	return Betas(m.Net.Cfg, a, in.UnitOf, brkga.NewLayout(p)), a, nil
}

// modelFor is m, else the model pick returns for p's objective, checked to
// have been trained for it.
func modelFor(m *Model, pick func(optimize.Objective) (*Model, error), p *optimize.Problem) (*Model, error) {
	if m == nil {
		if pick == nil {
			return nil, fmt.Errorf("no model")
		}
		var err error
		if m, err = pick(p.Objective); err != nil {
			return nil, err
		}
	}
	if m.Objective != p.Objective {
		return nil, fmt.Errorf("the model was trained for %s, the problem's objective is %s: give a model trained for %s (placer regal train --objective %s)",
			m.Objective, p.Objective, p.Objective, p.Objective)
	}
	return m, nil
}

func uniformFraction(bs []brkga.Beta) float64 {
	if len(bs) == 0 {
		return 1
	}
	u := 0
	for _, b := range bs {
		if b == brkga.Uniform {
			u++
		}
	}
	return float64(u) / float64(len(bs))
}

// Optimize runs BRKGA with the model's mutant distributions.
func (r *REGAL) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	m, err := modelFor(r.Model, r.ModelFor, p)
	if err != nil {
		return nil, fmt.Errorf("regal: %w", err)
	}
	var seed uint64
	if s != nil {
		seed = s.Seed
	}
	bs, _, err := m.Mutants(p, seed, r.Greedy)
	if err != nil {
		return nil, fmt.Errorf("regal: %w", err)
	}
	ga := r.GA
	ga.Mutants = bs
	res, err := ga.Optimize(ctx, p, s)
	if err != nil {
		return nil, err
	}
	res.Method = r.Name()
	res.Learning = &optimize.Learning{Model: m,
		Settings: Settings{Config: m.Config(), Seed: m.Seed, Objective: m.Objective, Greedy: r.Greedy, Uniform: uniformFraction(bs)}}
	return res, nil
}

// ZeroShot is the workshop paper's zero-shot variant: the network's
// distributions decoded without a genetic search. It takes each gene
// group's most likely buckets, decodes the chromosome of their Beta means
// (uniform genes at 1/2), draws Samples-1 more chromosomes from the same
// Betas, and returns the best of the Samples decisions; Samples
// evaluations in all, whatever the settings' budget.
// Like REGAL, it needs a model trained for the problem's objective.
type ZeroShot struct {
	Model *Model
	// ModelFor, used when Model is nil, returns the model for an
	// objective.
	ModelFor func(optimize.Objective) (*Model, error)
	// Samples is the number of decisions evaluated, the means' chromosome
	// included. 0 = 16.
	Samples int
}

var _ optimize.Optimizer = (*ZeroShot)(nil)

// Name returns "regal-zero-shot".
func (*ZeroShot) Name() string { return "regal-zero-shot" }

// Optimize places p with the model's distributions.
func (z *ZeroShot) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	m, err := modelFor(z.Model, z.ModelFor, p)
	if err != nil {
		return nil, fmt.Errorf("regal-zero-shot: %w", err)
	}
	k := z.Samples
	if k == 0 {
		k = 16
	}
	if k < 1 {
		return nil, fmt.Errorf("regal-zero-shot: samples %d, want at least 1", k)
	}
	set := optimize.Settings{Budget: optimize.Budget{Evaluations: k}}
	if s != nil {
		set.Seed, set.Recorder = s.Seed, s.Recorder
	}
	bs, _, err := m.Mutants(p, set.Seed, true)
	if err != nil {
		return nil, fmt.Errorf("regal-zero-shot: %w", err)
	}
	mean := make([]float64, len(bs))
	for i, b := range bs {
		mean[i] = b.Alpha / (b.Alpha + b.Beta)
	}
	// One generation of BRKGA: the means' chromosome and k-1 mutants.
	ga := brkga.BRKGA{Population: max(k, 3), Elites: 1, Children: 1, Mutants: bs, Initial: [][]float64{mean}}
	if k < 3 {
		ga.Population, ga.Children = 2, 0
	}
	res, err := ga.Optimize(ctx, p, &set)
	if err != nil {
		return nil, err
	}
	res.Method = z.Name()
	res.Learning = &optimize.Learning{Model: m,
		Settings: Settings{Config: m.Config(), Seed: m.Seed, Objective: m.Objective, Greedy: true, Uniform: uniformFraction(bs)}}
	return res, nil
}
