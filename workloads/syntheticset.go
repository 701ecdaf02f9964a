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
	return SyntheticSetNodes(family, count, seed, SynthNodes)
}

// SyntheticSetNodes is SyntheticSet with graphs of nodes random-graph
// nodes instead of REGAL's 50-200 (e.g. SynthNodes.Scale(2), test graphs
// up to twice the largest training graph). With SynthNodes it gives
// SyntheticSet's graphs.
func SyntheticSetNodes(family string, count int, seed uint64, nodes NodeRange) ([]*graph.Graph, error) {
	if err := nodes.Check(); err != nil {
		return nil, err
	}
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
		g, err := synthetic(f, splitmix64(seed+uint64(i)), fmt.Sprintf("%s-s%d-%d", f, seed, i), nodes)
		if err != nil {
			return nil, err
		}
		gs = append(gs, g)
	}
	return gs, nil
}
