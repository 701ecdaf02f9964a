package brkga_test

import (
	"context"
	"fmt"

	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/brkga"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// BRKGA with REGAL's default budget finds the split of two independent
// chains. Six ops and six tensors on two devices make 6x2 affinities, 6
// priorities, 6x2 transfer priorities and 6 fusion priorities: 36 genes.
// Per-gene Beta mutants (BRKGA.Mutants) would steer the search.
func ExampleBRKGA() {
	p, err := methodstest.NewProblem(graphtest.Chains(2, 3, 1e-3, 16), 2, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println("genes:", brkga.NewLayout(p).Len())
	res, err := (&brkga.BRKGA{}).Optimize(context.Background(), p, &optimize.Settings{Seed: 7})
	if err != nil {
		panic(err)
	}
	fmt.Printf("step %.1f ms after %d evaluations (%s)\n", res.Eval.StepTime*1e3, res.Stats.Evaluations, res.Stats.Status)
	// Output:
	// genes: 36
	// step 3.0 ms after 5000 evaluations (budget reached)
}
