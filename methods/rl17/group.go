package rl17

import (
	"slices"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/graph/partition"
)

// Groups are the co-location groups the controller places: each op's
// group, numbered in the order of the groups' first ops in the graph's
// topological order, and each group's ops.
type Groups struct {
	Of      []int32   // op -> group
	Members [][]int32 // group -> its ops, in topological order
	// Merged is the number of groups the paper's heuristic left, before
	// any contraction to the bound.
	Merged int
}

// N is the number of groups.
func (gr *Groups) N() int { return len(gr.Members) }

// Group builds the 2017 placer's co-location groups (§3.3 of the paper):
// the graph's own co-location groups first (an op and its gradient's
// state), then, recursively, a group whose ops feed exactly one other group
// (through data or control edges) joins that group, until no group can be
// merged. When more than max groups remain (max > 0), heavy-edge matching
// on the bytes between groups (partition.Contract, seeded) contracts them
// to about max: the paper's model-specific rules (one LSTM cell, one
// embedding lookup, one attention step per group) are not generic, and
// the contraction is the generic stand-in that keeps the controller's
// sequence short. opTime weights the groups so that contraction keeps
// them balanced (nil = every op weighs 1).
func Group(g *graph.Graph, opTime []float64, max int, seed uint64) (*Groups, error) {
	n := g.NumOps()
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = int32(i)
	}
	var find func(int32) int32
	find = func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	union := func(a, b int32) bool {
		ra, rb := find(a), find(b)
		if ra == rb {
			return false
		}
		// The smaller index is the root: the result does not depend on
		// the order of the unions.
		if ra < rb {
			parent[rb] = ra
		} else {
			parent[ra] = rb
		}
		return true
	}
	first := make(map[int]int32)
	for i := range n {
		if c := g.Colocation(i); c >= 0 {
			if f, ok := first[c]; ok {
				union(f, int32(i))
			} else {
				first[c] = int32(i)
			}
		}
	}
	// Merge groups with exactly one successor group until none has.
	// Each pass computes every group's successors afresh.
	succ := make([]int32, n) // root -> its only successor root, -1 = none yet, -2 = several
	for {
		for i := range succ {
			succ[i] = -1
		}
		for i := range n {
			r := find(int32(i))
			for _, s := range g.Succs(i) {
				rs := find(s)
				switch {
				case rs == r || succ[r] == -2 || succ[r] == rs:
				case succ[r] == -1:
					succ[r] = rs
				default:
					succ[r] = -2
				}
			}
		}
		merged := false
		for i := range n {
			if parent[i] == int32(i) && succ[i] >= 0 && union(int32(i), succ[i]) {
				merged = true
			}
		}
		if !merged {
			break
		}
	}
	// Number the groups in topological order of their first op.
	id := make([]int32, n)
	for i := range id {
		id[i] = -1
	}
	of := make([]int32, n)
	k := int32(0)
	for _, v := range g.Topo() {
		r := find(v)
		if id[r] < 0 {
			id[r] = k
			k++
		}
		of[v] = id[r]
	}
	gr := &Groups{Of: of, Merged: int(k)}
	if max > 0 && int(k) > max {
		pg := quotient(g, of, int(k), opTime)
		cg, _, err := partition.Contract(pg, max, nil, seed)
		if err != nil {
			return nil, err
		}
		// Renumber in topological order again.
		ren := make([]int32, int(k))
		for i := range ren {
			ren[i] = -1
		}
		next := int32(0)
		for _, v := range g.Topo() {
			c := cg[of[v]]
			if ren[c] < 0 {
				ren[c] = next
				next++
			}
		}
		for v := range of {
			of[v] = ren[cg[of[v]]]
		}
		k = next
	}
	gr.Members = make([][]int32, k)
	for _, v := range g.Topo() {
		gr.Members[of[v]] = append(gr.Members[of[v]], v)
	}
	return gr, nil
}

// quotient is the partitioner's graph of groups: one vertex per group
// weighing its ops' times (or counts), an edge between two groups weighing
// the bytes of the tensors between them.
func quotient(g *graph.Graph, of []int32, k int, opTime []float64) *partition.Graph {
	pg := &partition.Graph{Weight: make([]float64, k)}
	for i, c := range of {
		w := 1.0
		if opTime != nil {
			w = opTime[i]
		}
		pg.Weight[c] += w
	}
	adj := make([]map[int32]int64, k)
	for t := range g.NumTensors() {
		ts := g.Tensor(t)
		a := of[ts.Producer]
		for _, c := range ts.Consumers {
			b := of[c]
			if a == b {
				continue
			}
			for _, e := range [2][2]int32{{a, b}, {b, a}} {
				if adj[e[0]] == nil {
					adj[e[0]] = map[int32]int64{}
				}
				adj[e[0]][e[1]] += ts.Bytes
			}
		}
	}
	pg.XAdj = make([]int32, k+1)
	for v := range k {
		nb := make([]int32, 0, len(adj[v]))
		for u := range adj[v] {
			nb = append(nb, u)
		}
		slices.Sort(nb)
		for _, u := range nb {
			pg.Adj = append(pg.Adj, u)
			pg.EdgeWeight = append(pg.EdgeWeight, adj[v][u])
		}
		pg.XAdj[v+1] = int32(len(pg.Adj))
	}
	return pg
}
