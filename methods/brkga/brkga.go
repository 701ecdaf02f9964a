package brkga

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/optimize"
)

// BRKGA is the genetic algorithm. The zero value uses the defaults.
//
// One generation: the population is sorted by fitness (the problem's
// Objective.Better: for step time a valid decision beats an invalid one,
// then the shorter step); the Elites
// best are kept unchanged; Children new chromosomes are each the crossover
// of an elite and a non-elite drawn uniformly, taking each gene from the
// elite with probability EliteBias; the remaining Population - Elites -
// Children are mutants drawn from the mutant distribution. Only new
// chromosomes are evaluated, as one batch per generation (in chunks, in
// parallel by the evaluator). The run stops at the evaluation budget
// (default optimize.DefaultEvaluations, REGAL's 5,000), the step budget
// (generations) or the time budget.
type BRKGA struct {
	// Population is the number of chromosomes. 0 = 100.
	Population int
	// Elites is the number of elite chromosomes. 0 = Population/5 (20).
	Elites int
	// Children is the number of crossover children per generation.
	// 0 = 65% of Population (65, so 15 mutants). Must leave room for at
	// least one mutant.
	Children int
	// EliteBias is the probability that a child takes a gene from its
	// elite parent, in [0.5, 1). 0 = 0.7.
	EliteBias float64
	// GeneBias, if set, is a per-gene elite bias (len = NewLayout(p).Len())
	// that replaces EliteBias (REGAL A.6 learns crossover probabilities).
	GeneBias []float64
	// Mutants, if set, is the per-gene Beta distribution mutants are
	// drawn from (len = NewLayout(p).Len()); nil = uniform everywhere.
	// The initial population is drawn from it too.
	Mutants []Beta
	// Initial holds chromosomes (keys in [0, 1], len = Layout.Len()) that
	// seed the first population in place of random ones.
	Initial [][]float64
	// Chunk is the number of chromosomes decoded and evaluated together;
	// it bounds the memory of decoded decisions. 0 = 8. It does not
	// change the result.
	Chunk int
}

var _ optimize.Optimizer = (*BRKGA)(nil)

// Name returns "brkga".
func (*BRKGA) Name() string { return "brkga" }

// Errors for bad settings.
var (
	// ErrSizes: the population cannot hold the elites, children and at
	// least one mutant.
	ErrSizes = errors.New("brkga: population, elites and children must satisfy 0 < elites, elites + children < population")
	// ErrBias: the elite bias is outside [0.5, 1).
	ErrBias = errors.New("brkga: elite bias must lie in [0.5, 1)")
	// ErrLength: per-gene parameters (Mutants, GeneBias, Initial) do not
	// match the chromosome layout.
	ErrLength = errors.New("brkga: per-gene parameters do not match the chromosome layout")
)

type params struct {
	pop, elites, children, chunk int
	bias                         float64
}

func (o *BRKGA) params(l Layout) (params, error) {
	q := params{pop: o.Population, elites: o.Elites, children: o.Children, chunk: o.Chunk, bias: o.EliteBias}
	if q.pop == 0 {
		q.pop = 100
	}
	if q.elites == 0 {
		q.elites = max(1, q.pop/5)
	}
	if q.children == 0 {
		q.children = q.pop * 65 / 100
	}
	if q.chunk <= 0 {
		q.chunk = 8
	}
	if q.bias == 0 {
		q.bias = 0.7
	}
	if q.elites < 1 || q.children < 0 || q.elites+q.children >= q.pop {
		return q, fmt.Errorf("%w (got %d, %d, %d)", ErrSizes, q.pop, q.elites, q.children)
	}
	if !(q.bias >= 0.5 && q.bias < 1) {
		return q, fmt.Errorf("%w (got %g)", ErrBias, q.bias)
	}
	if o.Mutants != nil {
		if len(o.Mutants) != l.Len() {
			return q, fmt.Errorf("%w: %d mutant distributions for %d genes", ErrLength, len(o.Mutants), l.Len())
		}
		for i, b := range o.Mutants {
			if !b.valid() {
				return q, fmt.Errorf("brkga: gene %d: Beta(%g, %g) is not a distribution", i, b.Alpha, b.Beta)
			}
		}
	}
	if o.GeneBias != nil {
		if len(o.GeneBias) != l.Len() {
			return q, fmt.Errorf("%w: %d biases for %d genes", ErrLength, len(o.GeneBias), l.Len())
		}
		for i, b := range o.GeneBias {
			if !(b >= 0 && b <= 1) {
				return q, fmt.Errorf("brkga: gene %d: bias %g outside [0, 1]", i, b)
			}
		}
	}
	for i, c := range o.Initial {
		if len(c) != l.Len() {
			return q, fmt.Errorf("%w: initial chromosome %d has %d genes, want %d", ErrLength, i, len(c), l.Len())
		}
	}
	return q, nil
}

// Optimize evolves decisions until the budget is spent or ctx is
// cancelled and returns the best.
func (o *BRKGA) Optimize(ctx context.Context, p *optimize.Problem, s *optimize.Settings) (*optimize.Result, error) {
	l := NewLayout(p)
	q, err := o.params(l)
	if err != nil {
		return nil, err
	}
	tr := optimize.NewTracker(o.Name(), p, s, optimize.DefaultEvaluations)
	tmpl := p.Complete(p.Base.Clone())
	if !p.EffectiveTasks().Scheduling {
		tmpl.Transfer = p.Base.Transfer
	}
	L := l.Len()
	if L == 0 { // nothing to search: the Base, evaluated once
		if _, err := tr.Evaluate(ctx, tmpl); err != nil && !errors.Is(err, optimize.ErrStopped) {
			return nil, err
		}
		tr.Step()
		return tr.Result(ctx, tmpl)
	}
	rng := rand.New(rand.NewPCG(tr.Seed(), 0x62726b6761))
	groups := make([][]int32, p.Graph.NumColocationGroups())
	for i := 0; i < p.Graph.NumOps(); i++ {
		if c := p.Graph.Colocation(i); c >= 0 {
			groups[c] = append(groups[c], int32(i))
		}
	}
	e := &evolver{o: o, q: q, l: l, L: L, tr: tr, rng: rng, obj: p.Objective,
		cur: make([]uint16, q.pop*L),
		fit: make([]evaluate.Result, q.pop), done: make([]bool, q.pop), nfit: make([]evaluate.Result, q.pop), ndone: make([]bool, q.pop),
		ds: make([]decision.Decision, q.chunk), out: make([]evaluate.Result, q.chunk)}
	for i := 0; i < q.chunk; i++ {
		e.dec = append(e.dec, newDecoder(l, p.Graph, tmpl, groups))
	}
	err = e.run(ctx)
	if err != nil && !errors.Is(err, optimize.ErrStopped) {
		return nil, err
	}
	return tr.Result(ctx, tmpl)
}

// evolver is one run's state.
type evolver struct {
	o     *BRKGA
	q     params
	l     Layout
	L     int
	tr    *optimize.Tracker
	obj   optimize.Objective // the problem's: the fitness order
	rng   *rand.Rand
	dec   []*decoder
	ds    []decision.Decision
	out   []evaluate.Result
	order []int

	cur, next   []uint16 // populations, chromosome i at [i*L:(i+1)*L]
	fit, nfit   []evaluate.Result
	done, ndone []bool // evaluated
}

func (e *evolver) chrom(pop []uint16, i int) []uint16 { return pop[i*e.L : (i+1)*e.L] }

// mutant draws a chromosome from the mutant distributions.
func (e *evolver) mutant(c []uint16) {
	if e.o.Mutants == nil {
		for i := 0; i < len(c); i += 4 {
			x := e.rng.Uint64()
			for k := 0; k < 4 && i+k < len(c); k++ {
				c[i+k] = uint16(x >> (16 * k))
			}
		}
		return
	}
	for i, b := range e.o.Mutants {
		c[i] = quantize(b.sample(e.rng))
	}
}

// crossover writes into c the child of elite a and non-elite b.
func (e *evolver) crossover(c, a, b []uint16) {
	if gb := e.o.GeneBias; gb != nil {
		for i := range c {
			if e.rng.Float64() < gb[i] {
				c[i] = a[i]
			} else {
				c[i] = b[i]
			}
		}
		return
	}
	th := uint32(e.q.bias * (1 << 32))
	for i := 0; i < len(c); i += 2 {
		x := e.rng.Uint64()
		for k := 0; k < 2 && i+k < len(c); k++ {
			if uint32(x>>(32*k)) < th {
				c[i+k] = a[i+k]
			} else {
				c[i+k] = b[i+k]
			}
		}
	}
}

// evaluate scores the chromosomes of pop at the indices idx, writing
// fitness and done; it stops early (ErrStopped) at the budget.
func (e *evolver) evaluate(ctx context.Context, pop []uint16, idx []int, fit []evaluate.Result, done []bool) error {
	for start := 0; start < len(idx); start += e.q.chunk {
		chunk := idx[start:min(start+e.q.chunk, len(idx))]
		k := min(len(chunk), e.tr.Remaining())
		if k == 0 {
			e.tr.Done(ctx)
			return optimize.ErrStopped
		}
		var wg sync.WaitGroup
		for j := 0; j < k; j++ {
			wg.Add(1)
			go func(j int) {
				defer wg.Done()
				e.dec[j].decode(e.chrom(pop, chunk[j]), &e.ds[j])
			}(j)
		}
		wg.Wait()
		got, err := e.tr.EvaluateBatch(ctx, e.ds[:k], e.out[:k])
		if err != nil {
			return err
		}
		for j := 0; j < got; j++ {
			fit[chunk[j]] = e.out[j].Clone()
			done[chunk[j]] = true
		}
	}
	return nil
}

// sortPopulation orders the population indices best first (unevaluated
// chromosomes last; ties by index).
func (e *evolver) sortPopulation() {
	e.order = e.order[:0]
	for i := 0; i < e.q.pop; i++ {
		e.order = append(e.order, i)
	}
	slices.SortStableFunc(e.order, func(a, b int) int {
		switch {
		case e.done[a] != e.done[b]:
			if e.done[a] {
				return -1
			}
			return 1
		case !e.done[a]:
			return 0
		case e.obj.Better(&e.fit[a], &e.fit[b]):
			return -1
		case e.obj.Better(&e.fit[b], &e.fit[a]):
			return 1
		}
		return 0
	})
}

func (e *evolver) run(ctx context.Context) error {
	q := e.q
	// Generation 0: the initial chromosomes, then mutants.
	idx := make([]int, 0, q.pop)
	for i := 0; i < q.pop; i++ {
		c := e.chrom(e.cur, i)
		if i < len(e.o.Initial) {
			for g, x := range e.o.Initial[i] {
				c[g] = quantize(x)
			}
		} else {
			e.mutant(c)
		}
		idx = append(idx, i)
	}
	if err := e.evaluate(ctx, e.cur, idx, e.fit, e.done); err != nil {
		return err
	}
	e.tr.Step()
	for !e.tr.Done(ctx) {
		if e.next == nil { // allocated only when a second generation runs
			e.next = make([]uint16, len(e.cur))
		}
		e.sortPopulation()
		// Elites keep their place at the front of the next population.
		for j := 0; j < q.elites; j++ {
			copy(e.chrom(e.next, j), e.chrom(e.cur, e.order[j]))
			e.nfit[j], e.ndone[j] = e.fit[e.order[j]], e.done[e.order[j]]
		}
		idx = idx[:0]
		for j := q.elites; j < q.pop; j++ {
			c := e.chrom(e.next, j)
			if j < q.elites+q.children {
				a := e.order[e.rng.IntN(q.elites)]
				b := e.order[q.elites+e.rng.IntN(q.pop-q.elites)]
				e.crossover(c, e.chrom(e.cur, a), e.chrom(e.cur, b))
			} else {
				e.mutant(c)
			}
			e.ndone[j] = false
			idx = append(idx, j)
		}
		e.cur, e.next = e.next, e.cur
		e.fit, e.nfit = e.nfit, e.fit
		e.done, e.ndone = e.ndone, e.done
		if err := e.evaluate(ctx, e.cur, idx, e.fit, e.done); err != nil {
			return err
		}
		e.tr.Step()
	}
	return nil
}
