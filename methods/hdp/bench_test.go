package hdp

import (
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/nn"
	"github.com/placer/placer/workloads"
)

// BenchmarkControllerGNMT4 is the controller's share of one hdp step on
// gnmt4 (4 GPUs, 41,088 ops, 80 groups) with the defaults: sampling K = 16
// groupings from the grouper, their group embeddings, K placements from
// the placer one decoder step at a time, and the joint REINFORCE forward
// and backward pass (no evaluations).
func BenchmarkControllerGNMT4(b *testing.B) {
	g, err := workloads.Build("gnmt4")
	if err != nil {
		b.Fatal(err)
	}
	d := newGraphData(g)
	if err := d.clusterBy(g, nil, Config{}.filled(4).Groups, 1); err != nil {
		b.Fatal(err)
	}
	m := newModel[float32](d, 4, Config{}, 1)
	n, k := m.cfg.Groups, DefaultSamples
	rng := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, k)
	for i := range w {
		w[i] = rng.Float64() - 0.5
	}
	var ar nn.Arena[float32]
	x := make([]float32, n*k*d.embedDim(n))
	var groupings [][]int32
	var devs [][]int
	for _, noisy := range []bool{true, false} {
		suffix := ""
		if !noisy {
			suffix = "-nonoise"
		}
		var nz *noise
		if noisy {
			nz = &noise{on: true, seed: 3}
		}
		b.Run("sample"+suffix, func(b *testing.B) {
			for b.Loop() {
				ar.Reset()
				groupings, _, _ = m.group(&ar, rng, k, nz)
				embed(d, n, groupings, x)
				devs, _, _ = m.sample(&ar, rng, x, k, nz)
			}
		})
		b.Run("reinforce"+suffix, func(b *testing.B) {
			for b.Loop() {
				ar.Reset()
				m.reinforce(&ar, x, groupings, devs, w, nz)
			}
		})
	}
	m.params().ZeroGrad()
}
