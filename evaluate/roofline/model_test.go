package roofline

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/decision"
)

// TestAloneTimeIsOpTime: the duration the simulator recomputes for an op
// that runs alone (aloneTime, from the op's compute time, traffic and
// class) is exactly the Model's stored one (OpTime), for ops with
// computed and with measured times, on every preset; and so is TimeOf,
// what a planner costs another graph's op with.
func TestAloneTimeIsOpTime(t *testing.T) {
	for _, name := range []string{"p100", "v100", "a100", "h100", "h200"} {
		h, _ := Preset(name)
		c, _ := NewCluster(h, 2, "")
		for seed := uint64(1); seed <= 6; seed++ {
			g := messyDAG(200, rand.New(rand.NewPCG(seed, 3)), seed%2 == 0)
			m := mustModel(t, g, c, Options{})
			for i := range g.NumOps() {
				if got, want := m.aloneTime(int(m.pos(i))), m.OpTime(i); got != want {
					t.Fatalf("%s seed %d op %q: aloneTime %v, OpTime %v", name, seed, g.Op(i).Name, got, want)
				}
				if got, want := m.TimeOf(g.Op(i)), m.OpTime(i); got != want {
					t.Fatalf("%s seed %d op %q: TimeOf %v, OpTime %v", name, seed, g.Op(i).Name, got, want)
				}
			}
		}
	}
}

// TestStrategyRefused: the simulator runs one replica; a decision with
// replicas or micro-batches is refused with ErrStrategy, not simulated as
// if it had none.
func TestStrategyRefused(t *testing.T) {
	h, _ := Preset("v100")
	c, _ := NewCluster(h, 2, "")
	g := messyDAG(50, rand.New(rand.NewPCG(1, 3)), false)
	m := mustModel(t, g, c, Options{})
	d := decision.Decision{Device: make([]int, g.NumOps()), Strategy: decision.Strategy{Replicas: 2}}
	if _, err := NewSimulator(m, nil).Run(d); !errors.Is(err, ErrStrategy) {
		t.Errorf("a 2-replica decision: %v, want ErrStrategy", err)
	}
}
