package workloads

import (
	"fmt"

	"github.com/placer/placer/graph"
)

// SyntheticSet generates count REGAL synthetic graphs in memory: graph i
// is of family (one of SyntheticFamilies, or "all" to cycle through them)
// with seed splitmix64(seed+i), named "<family>-s<seed>-<i>". The same
// arguments give the same graphs. Two sets whose seeds differ by at least
// count share no graph seed: a held-out test set takes a seed far from
// the training set's.
func SyntheticSet(family string, count int, seed uint64) ([]*graph.Graph, error) {
	if count < 1 {
		return nil, fmt.Errorf("workloads: synthetic count %d, want at least 1", count)
	}
	fams := []string{family}
	if family == "all" {
		fams = SyntheticFamilies()
	}
	gs := make([]*graph.Graph, 0, count)
	for i := 0; i < count; i++ {
		f := fams[i%len(fams)]
		g, err := synthetic(f, splitmix64(seed+uint64(i)), fmt.Sprintf("%s-s%d-%d", f, seed, i))
		if err != nil {
			return nil, err
		}
		gs = append(gs, g)
	}
	return gs, nil
}
