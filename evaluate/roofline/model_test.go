package roofline

import (
	"math/rand/v2"
	"testing"
)

// TestAloneTimeIsOpTime: the duration the simulator recomputes for an op
// that runs alone (aloneTime, from the op's compute time, traffic and
// class) is exactly the Model's stored one (OpTime), for ops with
// computed and with measured times, on every preset.
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
			}
		}
	}
}
