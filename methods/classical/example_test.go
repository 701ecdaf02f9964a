package classical_test

import (
	"context"
	"fmt"

	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

// Two independent chains of three 1 ms ops on two GPUs: m-ETF runs one
// chain on each.
func Example() {
	p, err := methodstest.NewProblem(graphtest.Chains(2, 3, 1e-3, 16), 2, 0)
	if err != nil {
		panic(err)
	}
	res, err := classical.METF{}.Optimize(context.Background(), p, &optimize.Settings{Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: step %.1f ms, placement %v, %s\n", res.Method, res.Eval.StepTime*1e3, res.Decision.Device, res.Stats.Status)
	// Output: m-etf: step 3.0 ms, placement [0 0 0 1 1 1], converged
}
