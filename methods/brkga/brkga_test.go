package brkga_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"sync"
	"testing"

	"github.com/placer/placer/decision"
	"github.com/placer/placer/evaluate"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/brkga"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

func problem(t testing.TB, g *graph.Graph, devices int) *optimize.Problem {
	t.Helper()
	p, err := methodstest.NewProblem(g, devices, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConformance(t *testing.T) {
	cs, err := methodstest.StandardCases()
	if err != nil {
		t.Fatal(err)
	}
	methodstest.Run(t, "brkga", func() (optimize.Optimizer, error) { return &brkga.BRKGA{}, nil }, cs, optimize.Settings{Budget: optimize.Budget{Evaluations: 150}, Seed: 2})
}

func TestLayout(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 30, Width: 5, Seed: 1})
	p := problem(t, g, 3)
	l := brkga.NewLayout(p)
	o, tn, d := g.NumOps(), g.NumTensors(), 3
	if l.Len() != o*d+o+tn*d+o {
		t.Fatalf("len %d", l.Len())
	}
	seen := make([]bool, l.Len())
	mark := func(i int) {
		if i < 0 || i >= l.Len() || seen[i] {
			t.Fatalf("index %d out of range or used twice", i)
		}
		seen[i] = true
	}
	for v := 0; v < o; v++ {
		for k := 0; k < d; k++ {
			mark(l.Affinity(v, k))
		}
		mark(l.Priority(v))
		mark(l.FusionPriority(v))
	}
	for x := 0; x < tn; x++ {
		for k := 0; k < d; k++ {
			mark(l.Transfer(x, k))
		}
	}
	p.Tasks = optimize.Tasks{Placement: true}
	l = brkga.NewLayout(p)
	if l.Len() != o*d || l.Priority(0) != -1 || l.Transfer(0, 0) != -1 || l.FusionPriority(0) != -1 {
		t.Errorf("placement-only layout %+v len %d", l, l.Len())
	}
}

// TestMutantsSteer: Beta mutants that favour device 1's affinity put
// every op there (the initial population is drawn from them), which is how
// REGAL's policy steers the search.
func TestMutantsSteer(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 40, Width: 4, Seed: 2})
	p := problem(t, g, 2)
	p.Tasks = optimize.Tasks{Placement: true}
	l := brkga.NewLayout(p)
	mut := make([]brkga.Beta, l.Len())
	for v := 0; v < g.NumOps(); v++ {
		mut[l.Affinity(v, 0)] = brkga.Beta{Alpha: 1, Beta: 50}
		mut[l.Affinity(v, 1)] = brkga.Beta{Alpha: 50, Beta: 1}
	}
	o := &brkga.BRKGA{Mutants: mut}
	res, err := o.Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for v, d := range res.Decision.Device {
		if d != 1 {
			t.Fatalf("op %d on device %d", v, d)
		}
	}
	o.Mutants = mut[:3]
	if _, err := o.Optimize(context.Background(), p, nil); !errors.Is(err, brkga.ErrLength) {
		t.Errorf("short mutant list: %v", err)
	}
	mut[0] = brkga.Beta{Alpha: 0, Beta: 1}
	o.Mutants = mut
	if _, err := o.Optimize(context.Background(), p, nil); err == nil {
		t.Error("Beta(0, 1) accepted")
	}
}

func TestBetaFromMeanVar(t *testing.T) {
	b, err := brkga.BetaFromMeanVar(0.3, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	mean := b.Alpha / (b.Alpha + b.Beta)
	v := b.Alpha * b.Beta / ((b.Alpha + b.Beta) * (b.Alpha + b.Beta) * (b.Alpha + b.Beta + 1))
	if math.Abs(mean-0.3) > 1e-12 || math.Abs(v-0.01) > 1e-12 {
		t.Errorf("Beta%v has mean %g variance %g", b, mean, v)
	}
	if _, err := brkga.BetaFromMeanVar(0.5, 0.3); err == nil {
		t.Error("variance above mu(1-mu) accepted")
	}
}

func TestDeterministicAndChunkInvariant(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 80, Width: 8, Seed: 3})
	p := problem(t, g, 3)
	s := &optimize.Settings{Budget: optimize.Budget{Evaluations: 300}, Seed: 5}
	a, err := (&brkga.BRKGA{Chunk: 1}).Optimize(context.Background(), p, s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := (&brkga.BRKGA{Chunk: 16}).Optimize(context.Background(), p, s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Decision, b.Decision) || a.Stats.Evaluations != 300 {
		t.Errorf("chunk size changed the result or budget: %d evaluations", a.Stats.Evaluations)
	}
	if a.Stats.Steps < 3 {
		t.Errorf("%d generations in 300 evaluations", a.Stats.Steps)
	}
}

// countingEvaluator records the sizes of the batches it is given.
type countingEvaluator struct {
	evaluate.Evaluator
	mu      sync.Mutex
	batches []int
}

func (c *countingEvaluator) EvaluateBatch(ctx context.Context, ds []decision.Decision, out []evaluate.Result) error {
	c.mu.Lock()
	c.batches = append(c.batches, len(ds))
	c.mu.Unlock()
	return c.Evaluator.EvaluateBatch(ctx, ds, out)
}

func TestEvaluatesInBatches(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 50, Width: 5, Seed: 4})
	p := problem(t, g, 2)
	ce := &countingEvaluator{Evaluator: p.Evaluator}
	p.Evaluator = ce
	res, err := (&brkga.BRKGA{Population: 20, Elites: 4, Children: 12}).Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 100}})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, b := range ce.batches {
		total += b
		if b < 2 {
			t.Errorf("batch of %d", b)
		}
	}
	if total != 100 || res.Stats.Evaluations != 100 {
		t.Errorf("%d evaluated in batches, %d reported", total, res.Stats.Evaluations)
	}
}

func TestFindsChainSplit(t *testing.T) {
	p := problem(t, graphtest.Chains(2, 5, 1e-3, 16), 2)
	res, err := (&brkga.BRKGA{}).Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 2000}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !methodstest.Close(res.Eval.StepTime, 5e-3) {
		t.Errorf("step %g, want 5 ms", res.Eval.StepTime)
	}
}

func TestBadSizes(t *testing.T) {
	p := problem(t, graphtest.Chains(1, 3, 1e-3, 8), 2)
	for _, o := range []*brkga.BRKGA{
		{Population: 10, Elites: 5, Children: 5},
		{EliteBias: 0.3},
		{EliteBias: 1},
	} {
		if _, err := o.Optimize(context.Background(), p, nil); err == nil {
			t.Errorf("%+v accepted", *o)
		}
	}
}

func TestInitialChromosome(t *testing.T) {
	g := graphtest.Chains(2, 3, 1e-3, 16)
	p := problem(t, g, 2)
	p.Tasks = optimize.Tasks{Placement: true}
	l := brkga.NewLayout(p)
	c := make([]float64, l.Len())
	for v := 0; v < g.NumOps(); v++ {
		c[l.Affinity(v, v/3)] = 1 // chain 0 on device 0, chain 1 on device 1
	}
	res, err := (&brkga.BRKGA{Initial: [][]float64{c}}).Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Decision.Device, []int{0, 0, 0, 1, 1, 1}) {
		t.Errorf("placement %v", res.Decision.Device)
	}
}

// TestDecodeREGALStyle: the priority-broken topological sort and the
// transfer genes, on a -> {b, c}: with priority genes a 0.1, b 0.2, c 0.9
// the order is a, c, b (c outranks b once both are ready).
func TestDecodeREGALStyle(t *testing.T) {
	bld := graph.NewBuilder("fork")
	a := bld.AddOp(graph.Op{Name: "a", HasTime: true, Time: 1e-3})
	b := bld.AddOp(graph.Op{Name: "b", HasTime: true, Time: 1e-3})
	c := bld.AddOp(graph.Op{Name: "c", HasTime: true, Time: 1e-3})
	bld.AddTensor(a, 64, b, c)
	g, err := bld.Build()
	if err != nil {
		t.Fatal(err)
	}
	p := problem(t, g, 2)
	p.Tasks = optimize.Tasks{Placement: true, Scheduling: true}
	l := brkga.NewLayout(p)
	ch := make([]float64, l.Len())
	ch[l.Affinity(a, 0)], ch[l.Affinity(a, 1)] = 0.7, 0.3
	ch[l.Affinity(b, 0)], ch[l.Affinity(b, 1)] = 0.4, 0.45
	ch[l.Affinity(c, 0)], ch[l.Affinity(c, 1)] = 0.9, 0.1
	ch[l.Priority(a)], ch[l.Priority(b)], ch[l.Priority(c)] = 0.1, 0.2, 0.9
	ch[l.Transfer(0, 1)] = 0.5
	res, err := (&brkga.BRKGA{Initial: [][]float64{ch}}).Optimize(context.Background(), p, &optimize.Settings{Budget: optimize.Budget{Evaluations: 1}})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Decision
	if !reflect.DeepEqual(d.Device, []int{0, 1, 0}) {
		t.Errorf("placement %v, want [0 1 0]", d.Device)
	}
	if !(d.Priority[a] > d.Priority[c] && d.Priority[c] > d.Priority[b]) {
		t.Errorf("priorities %v, want a > c > b", d.Priority)
	}
	if len(d.Transfer) != 2 || d.Transfer[1] != 32768 {
		t.Errorf("transfer priorities %v", d.Transfer)
	}
}
