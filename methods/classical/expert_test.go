package classical_test

import (
	"context"
	"errors"
	"testing"

	"github.com/placer/placer/graph/graphtest"
	"github.com/placer/placer/methods/classical"
	"github.com/placer/placer/methods/methodstest"
	"github.com/placer/placer/optimize"
)

func TestExpertUnsetIsAClearError(t *testing.T) {
	p, err := methodstest.NewProblem(graphtest.Chains(2, 3, 1e-3, 8), 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = classical.Expert{}.Optimize(context.Background(), p, nil)
	if !errors.Is(err, classical.ErrNoExpert) {
		t.Fatalf("err = %v, want ErrNoExpert", err)
	}
}

func TestExpertRepairsColocation(t *testing.T) {
	g := graphtest.LayeredDAG(graphtest.Layered{Ops: 200, Width: 10, Seed: 4})
	p, err := methodstest.NewProblem(g, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	// An expert that alternates devices by op index ignores co-location.
	p.Expert = make([]int, g.NumOps())
	for i := range p.Expert {
		p.Expert[i] = i % p.Devices()
	}
	res, err := classical.Expert{}.Optimize(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	methodstest.Check(t, p, res, optimize.Budget{})
	// An expert that answers for the wrong graph is an error.
	p.Expert = []int{0}
	if _, err := (classical.Expert{}).Optimize(context.Background(), p, nil); err == nil {
		t.Error("a placement of the wrong length was accepted")
	}
}
