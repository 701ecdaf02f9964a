package rl17

import (
	"math/rand/v2"
	"testing"

	"github.com/placer/placer/nn"
	"github.com/placer/placer/workloads"
)

// BenchmarkControllerGNMT4 is the controller's share of one rl17 step on
// gnmt4 (4 GPUs, 41,088 ops in 220 groups) with the defaults: drawing
// K = 16 placements one decoder step at a time, and the teacher-forced
// REINFORCE forward and backward pass over them (no evaluations).
func BenchmarkControllerGNMT4(b *testing.B) {
	g, err := workloads.Build("gnmt4")
	if err != nil {
		b.Fatal(err)
	}
	gr, err := Group(g, nil, DefaultMaxGroups, 0)
	if err != nil {
		b.Fatal(err)
	}
	m := newModel[float32](newFeatures(g, gr), 4, Config{}, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, DefaultSamples)
	for i := range w {
		w[i] = rng.Float64() - 0.5
	}
	var ar nn.Arena[float32]
	b.Run("sample", func(b *testing.B) {
		for b.Loop() {
			ar.Reset()
			m.sample(&ar, rng, DefaultSamples)
		}
	})
	devs, _, _ := m.sample(&ar, rng, DefaultSamples)
	b.Run("reinforce", func(b *testing.B) {
		for b.Loop() {
			ar.Reset()
			m.reinforce(&ar, devs, w)
		}
	})
}
