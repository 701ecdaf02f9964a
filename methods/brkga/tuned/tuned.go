package tuned

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/placer/placer/methods/brkga"
	"github.com/placer/placer/optimize"
)

// Format and Version identify a tuned-parameters file.
const (
	Format  = "placer-brkga-tuned"
	Version = 1
)

// Path is where `make brkga-tune` writes the file, relative to the module
// root.
const Path = "methods/brkga/tuned/params.json"

//go:embed params.json
var embedded []byte

// Params is one BRKGA setting: the population size, the shares of elites
// and of mutants in it, the crossover's elite bias, and the Beta
// distribution every mutant gene is drawn from (1, 1 = uniform).
type Params struct {
	Population int     `json:"population"`
	Elites     float64 `json:"elite_fraction"`
	Mutants    float64 `json:"mutant_fraction"`
	EliteBias  float64 `json:"elite_bias"`
	BetaAlpha  float64 `json:"beta_alpha"`
	BetaBeta   float64 `json:"beta_beta"`
}

// Default is brkga.BRKGA's zero-value setting in these terms: 100
// chromosomes, 20% elites, 15% mutants, bias 0.7, uniform mutants.
var Default = Params{Population: 100, Elites: 0.2, Mutants: 0.15, EliteBias: 0.7, BetaAlpha: 1, BetaBeta: 1}

// Counts turns the fractions into numbers of elites and children for
// brkga.BRKGA (at least one elite and one mutant).
func (q Params) Counts() (elites, children int) {
	elites = max(1, int(math.Round(q.Elites*float64(q.Population))))
	mutants := max(1, int(math.Round(q.Mutants*float64(q.Population))))
	return elites, q.Population - elites - mutants
}

// Check reports a setting BRKGA cannot run, naming the field.
func (q Params) Check() error {
	switch {
	case q.Population < 3:
		return fmt.Errorf("population %d: want at least 3", q.Population)
	case !(q.Elites > 0 && q.Elites < 1):
		return fmt.Errorf("elite_fraction %g: want (0, 1)", q.Elites)
	case !(q.Mutants > 0 && q.Mutants < 1):
		return fmt.Errorf("mutant_fraction %g: want (0, 1)", q.Mutants)
	case !(q.EliteBias >= 0.5 && q.EliteBias < 1):
		return fmt.Errorf("elite_bias %g: want [0.5, 1)", q.EliteBias)
	case !(q.BetaAlpha > 0 && q.BetaBeta > 0) || math.IsInf(q.BetaAlpha, 0) || math.IsInf(q.BetaBeta, 0):
		return fmt.Errorf("beta (%g, %g): want positive and finite", q.BetaAlpha, q.BetaBeta)
	}
	if e, c := q.Counts(); c < 0 || e+c >= q.Population {
		return fmt.Errorf("elite_fraction %g + mutant_fraction %g leave no room for the population of %d", q.Elites, q.Mutants, q.Population)
	}
	return nil
}

// BRKGA is the genetic algorithm with setting q on problem p (the mutant
// distributions laid out for p).
func (q Params) BRKGA(p *optimize.Problem) *brkga.BRKGA {
	e, c := q.Counts()
	o := &brkga.BRKGA{Population: q.Population, Elites: e, Children: c, EliteBias: q.EliteBias}
	if q.BetaAlpha != 1 || q.BetaBeta != 1 {
		n := brkga.NewLayout(p).Len()
		o.Mutants = make([]brkga.Beta, n)
		for i := range o.Mutants {
			o.Mutants[i] = brkga.Beta{Alpha: q.BetaAlpha, Beta: q.BetaBeta}
		}
	}
	return o
}

// Grid is the hyperparameter grid Tune searches: every combination.
type Grid struct {
	Population []int        `json:"population"`
	Elites     []float64    `json:"elite_fraction"`
	Mutants    []float64    `json:"mutant_fraction"`
	EliteBias  []float64    `json:"elite_bias"`
	Beta       [][2]float64 `json:"beta"` // (alpha, beta) pairs
}

// DefaultGrid is 3 x 3 x 3 x 3 = 81 settings around Gonçalves &
// Resende's recommendations (elites 10-25%, mutants 10-30%, bias
// 0.5-0.8), uniform mutants. (BetaGrid adds REGAL's Beta scalars: at
// 1,000 evaluations U-shaped Beta(0.5, 0.5) mutants won for neither
// objective, and they double the tuning time.)
var DefaultGrid = Grid{
	Population: []int{50, 100, 200},
	Elites:     []float64{0.1, 0.2, 0.3},
	Mutants:    []float64{0.1, 0.2, 0.3},
	EliteBias:  []float64{0.6, 0.7, 0.8},
	Beta:       [][2]float64{{1, 1}},
}

// BetaGrid is DefaultGrid with uniform or U-shaped Beta(0.5, 0.5) mutant
// genes: 162 settings.
var BetaGrid = Grid{
	Population: DefaultGrid.Population,
	Elites:     DefaultGrid.Elites,
	Mutants:    DefaultGrid.Mutants,
	EliteBias:  DefaultGrid.EliteBias,
	Beta:       [][2]float64{{1, 1}, {0.5, 0.5}},
}

// Settings lists the grid's valid settings, in a fixed order.
func (g Grid) Settings() []Params {
	var out []Params
	for _, pop := range g.Population {
		for _, e := range g.Elites {
			for _, m := range g.Mutants {
				for _, b := range g.EliteBias {
					for _, ab := range g.Beta {
						q := Params{Population: pop, Elites: e, Mutants: m, EliteBias: b, BetaAlpha: ab[0], BetaBeta: ab[1]}
						if q.Check() == nil {
							out = append(out, q)
						}
					}
				}
			}
		}
	}
	return out
}

// Tuning is one objective's outcome: the setting chosen and how it and
// the default scored on the training set (mean over the graphs of the
// objective value over default BRKGA's at the same budget and seed;
// lower is better, the default scores 1).
type Tuning struct {
	Params       Params  `json:"params"`
	Score        float64 `json:"mean_ratio_to_default"`
	DefaultScore float64 `json:"default_mean_ratio"`
	Settings     int     `json:"settings_tried"`
}

// File is the tuned-parameters file: the tuning's recipe and a setting
// per objective (keyed by optimize.Objective's spelling).
type File struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Command is the command line that wrote the file.
	Command string `json:"command"`
	Grid    Grid   `json:"grid"`
	// The training set: Graphs synthetic graphs of Family with Seed
	// (workloads.SyntheticSet) on Devices GPUs of Memory bytes, deciding
	// Tasks, with Transfers ("sync" or "async"), each run with
	// Evaluations evaluations and seed RunSeed.
	Family      string  `json:"family"`
	Graphs      int     `json:"graphs"`
	Seed        uint64  `json:"seed"`
	Devices     int     `json:"devices"`
	Memory      int64   `json:"memory_per_device"`
	Tasks       string  `json:"tasks"`
	Transfers   string  `json:"transfers"`
	Evaluations int     `json:"evaluations"`
	RunSeed     uint64  `json:"run_seed"`
	WallSeconds float64 `json:"wall_s"`
	CPUSeconds  float64 `json:"cpu_s"`
	// Objectives maps "step-time" and "peak-memory" to their tuning.
	Objectives map[string]Tuning `json:"objectives"`
}

// ErrFile is Decode's error for a file that is not a valid tuned-parameters
// file.
var ErrFile = errors.New("tuned: bad parameters file")

// Decode reads a tuned-parameters file; name says where it came from in
// errors. Every setting is checked (Params.Check).
func Decode(data []byte, name string) (*File, error) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrFile, name, err)
	}
	if f.Format != Format || f.Version != Version {
		return nil, fmt.Errorf("%w %s: format %q version %d, want %q version %d", ErrFile, name, f.Format, f.Version, Format, Version)
	}
	if len(f.Objectives) == 0 {
		return nil, fmt.Errorf("%w %s: no objectives", ErrFile, name)
	}
	for k, t := range f.Objectives {
		if _, err := optimize.ParseObjective(k); err != nil || k == "" {
			return nil, fmt.Errorf("%w %s: objectives: %q is not an objective", ErrFile, name, k)
		}
		if err := t.Params.Check(); err != nil {
			return nil, fmt.Errorf("%w %s: objectives.%s: %v", ErrFile, name, k, err)
		}
	}
	return &f, nil
}

// Load decodes the embedded file (params.json).
func Load() (*File, error) { return Decode(embedded, Path) }

// For is the setting tuned for objective o.
func (f *File) For(o optimize.Objective) (Params, error) {
	t, ok := f.Objectives[o.String()]
	if !ok {
		return Params{}, fmt.Errorf("brkga-tuned: %s has no setting for objective %s (rerun make brkga-tune)", Path, o)
	}
	return t.Params, nil
}

// Optimizer is "brkga-tuned": BRKGA with the setting File holds for the
// problem's objective. It implements optimize.Optimizer.
type Optimizer struct {
	File *File // nil = the embedded file
}

var _ optimize.Optimizer = (*Optimizer)(nil)

// Name returns "brkga-tuned".
func (*Optimizer) Name() string { return "brkga-tuned" }

// Optimize runs BRKGA with the tuned setting for p.Objective.
func (o *Optimizer) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	f := o.File
	if f == nil {
		var err error
		if f, err = Load(); err != nil {
			return nil, err
		}
	}
	q, err := f.For(p.Objective)
	if err != nil {
		return nil, err
	}
	res, err := q.BRKGA(p).Optimize(ctx, p, s)
	if res != nil {
		res.Method = o.Name()
	}
	return res, err
}
