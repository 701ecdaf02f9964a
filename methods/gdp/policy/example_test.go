package policy_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/methods/gdp/policy"
)

// A tiny chain a -> b -> c placed on two devices: one forward pass, four
// sampled decisions, and one PPO step's gradients.
func Example() {
	b := graph.NewBuilder("chain")
	prev := -1
	for _, name := range []string{"a", "b", "c"} {
		op := b.AddOp(graph.Op{Name: name, Type: "MatMul", Class: graph.ClassMatMul, Shape: []int64{64, 64}, FLOPs: 1 << 19})
		if prev >= 0 {
			b.AddTensor(prev, 1<<14, op)
		}
		prev = op
	}
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	p, err := policy.New(nil, 1) // GDP's hyperparameters
	if err != nil {
		panic(err)
	}
	in, err := p.Prepare(g, 2, []float64{1e-5, 2e-5, 1e-5}) // per-op cost hints
	if err != nil {
		panic(err)
	}
	out, err := p.Forward(in)
	if err != nil {
		panic(err)
	}
	defer out.Release()
	ds := out.Sample(rand.New(rand.NewPCG(1, 2)), 4)
	batch := policy.PPOBatch{Decisions: ds, Advantages: []float64{1, -1, 0.5, -0.5}, EntropyCoef: 0.05}
	for _, d := range ds {
		lp, _ := out.LogProb(d)
		batch.OldLogProbs = append(batch.OldLogProbs, lp)
	}
	if _, err := policy.PPOLoss(out, batch); err != nil {
		panic(err)
	}
	fmt.Println(len(ds), "decisions of", len(ds[0].Device), "ops;", len(p.Params()), "parameter matrices with gradients")
	// Output: 4 decisions of 3 ops; 79 parameter matrices with gradients
}
