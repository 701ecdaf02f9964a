package graphsage

import "math/rand/v2"

// SampleNeighbors draws, for each of layers encoder layers, up to k
// distinct neighbours of every node (all of them when it has at most k),
// as an N x k matrix padded with -1. The draw depends only on the nodes,
// k, layers and seed.
func SampleNeighbors(nd *Nodes, k, layers int, seed uint64) [][]int32 {
	out := make([][]int32, layers)
	var pick []int32
	for l := range out {
		r := rand.New(rand.NewPCG(seed, uint64(l)+0x9e3779b97f4a7c15))
		s := make([]int32, nd.N*k)
		for v := range nd.N {
			row := s[v*k : (v+1)*k]
			nb := nd.Neighbors(v)
			if len(nb) <= k {
				n := copy(row, nb)
				for i := n; i < k; i++ {
					row[i] = -1
				}
				continue
			}
			pick = append(pick[:0], nb...)
			for i := range k { // partial Fisher-Yates
				j := i + r.IntN(len(pick)-i)
				pick[i], pick[j] = pick[j], pick[i]
			}
			copy(row, pick[:k])
		}
		out[l] = s
	}
	return out
}
