package regal

import (
	"context"
	"testing"

	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/brkga"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// benchModel is the embedded default model's file when it is there (the
// Beta shapes it picks set the sampling cost), else an untrained one.
func benchModel(b *testing.B) *Model {
	if m, err := Load("defaultmodel/data/default.regal"); err == nil {
		return m
	}
	m, err := NewModel(Config{}, 1)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func bench1000(b *testing.B) *optimize.Problem {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 1000, Width: 8, Seed: 1})
	p, err := methodstest.NewProblem(g, 2, 0)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkInfer1000 is the network's inference on a 1,000-node graph
// with the default configuration (the bound: 100 ms): features,
// neighbour samples and the forward pass (Logits), then the action and
// its per-gene Betas (Mutants).
func BenchmarkInfer1000(b *testing.B) {
	p := bench1000(b)
	m := benchModel(b)
	b.Run("logits", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, _, err := m.Logits(p, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mutants", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, _, err := m.Mutants(p, 1, false); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkREGAL5000 is regal at its default budget, 5,000 evaluations,
// on a 1,000-op graph on 2 GPUs (the bound: 5 s), beside BRKGA
// with uniform mutants at the same budget.
func BenchmarkREGAL5000(b *testing.B) {
	p := bench1000(b)
	m := benchModel(b)
	s := &optimize.Settings{Budget: optimize.Budget{Evaluations: 5000}, Seed: 1}
	for _, c := range []struct {
		name string
		o    optimize.Optimizer
	}{{"regal", &REGAL{Model: m}}, {"brkga-uniform", &brkga.BRKGA{}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				r, err := c.o.Optimize(context.Background(), p, s)
				if err != nil || r.Stats.Evaluations != 5000 {
					b.Fatalf("%v, %d evaluations", err, r.Stats.Evaluations)
				}
			}
		})
	}
}
