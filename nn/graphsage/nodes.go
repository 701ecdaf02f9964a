package graphsage

import (
	"fmt"

	"github.com/placer/placer/graph"
)

// Nodes is the graph the encoder sees: the ops of a graph, or its
// co-location groups, numbered in topological order.
type Nodes struct {
	N      int     // number of nodes
	NumOps int     // number of ops of the graph
	UnitOf []int32 // op -> node

	memberStart, members []int32 // node -> its ops, in topological order
	adjStart, adj        []int32 // node -> distinct neighbour nodes (both directions)
	inDeg, outDeg        []int32 // distinct predecessor / successor nodes
}

// Members returns the ops of node v in topological order.
func (nd *Nodes) Members(v int) []int32 { return nd.members[nd.memberStart[v]:nd.memberStart[v+1]] }

// Neighbors returns the distinct nodes adjacent to v in either direction.
func (nd *Nodes) Neighbors(v int) []int32 { return nd.adj[nd.adjStart[v]:nd.adjStart[v+1]] }

// InDegree is the number of distinct nodes v depends on.
func (nd *Nodes) InDegree(v int) int { return int(nd.inDeg[v]) }

// OutDegree is the number of distinct nodes that depend on v.
func (nd *Nodes) OutDegree(v int) int { return int(nd.outDeg[v]) }

// NewNodes returns the nodes of g: one per op, or, if coarsen is set, one
// per co-location group (ops in no group stay single). Node ids follow the
// topological order of each node's first op.
func NewNodes(g *graph.Graph, coarsen bool) *Nodes {
	n := g.NumOps()
	unit := make([]int32, n)
	groupUnit := make([]int32, g.NumColocationGroups())
	for i := range groupUnit {
		groupUnit[i] = -1
	}
	next := int32(0)
	for op := range n {
		gid := -1
		if coarsen {
			gid = g.Colocation(op)
		}
		if gid >= 0 && groupUnit[gid] >= 0 {
			unit[op] = groupUnit[gid]
			continue
		}
		unit[op] = next
		if gid >= 0 {
			groupUnit[gid] = next
		}
		next++
	}
	return build(g, unit)
}

// NewNodesFrom returns the nodes of g given by unit, the unit of each op
// (any ids; ops sharing an id form one node). Node ids follow the
// topological order of each node's first op. A node need not be convex:
// edges may run both ways between two nodes.
func NewNodesFrom(g *graph.Graph, unit []int32) (*Nodes, error) {
	if len(unit) != g.NumOps() {
		return nil, fmt.Errorf("graphsage: %d units for graph %q of %d ops", len(unit), g.Name(), g.NumOps())
	}
	for op, u := range unit {
		if u < 0 {
			return nil, fmt.Errorf("graphsage: op %q has negative unit %d", g.Op(op).Name, u)
		}
	}
	return build(g, unit), nil
}

// build numbers the units of unit (op -> any non-negative id) in the
// topological order of their first op and fills the node structure.
func build(g *graph.Graph, unit []int32) *Nodes {
	n := g.NumOps()
	nd := &Nodes{NumOps: n, UnitOf: make([]int32, n)}
	topo := g.Topo()
	renum := map[int32]int32{}
	count := []int32{}
	for _, op := range topo {
		u, ok := renum[unit[op]]
		if !ok {
			u = int32(len(count))
			renum[unit[op]] = u
			count = append(count, 0)
		}
		nd.UnitOf[op] = u
		count[u]++
	}
	nd.N = len(count)
	nd.memberStart = make([]int32, nd.N+1)
	for u, c := range count {
		nd.memberStart[u+1] = nd.memberStart[u] + c
	}
	nd.members = make([]int32, n)
	fill := append([]int32(nil), nd.memberStart[:nd.N]...)
	for _, op := range topo {
		u := nd.UnitOf[op]
		nd.members[fill[u]] = op
		fill[u]++
	}

	// Distinct neighbour nodes, predecessors first, deduplicated with a
	// stamp array.
	nd.inDeg = make([]int32, nd.N)
	nd.outDeg = make([]int32, nd.N)
	stamp := make([]int32, nd.N)
	for i := range stamp {
		stamp[i] = -1
	}
	nd.adjStart = make([]int32, nd.N+1)
	adj := make([]int32, 0, 2*g.NumEdges())
	for u := range nd.N {
		mark := func(list func(int) []int32, deg *int32) {
			for _, op := range nd.Members(u) {
				for _, o := range list(int(op)) {
					w := nd.UnitOf[o]
					if int(w) == u || stamp[w] == int32(u) {
						continue
					}
					stamp[w] = int32(u)
					adj = append(adj, w)
					*deg++
				}
			}
		}
		mark(g.Preds, &nd.inDeg[u])
		// Successors: a node that is both predecessor and successor (a
		// cycle between groups) counts once in adj but in both degrees.
		for _, op := range nd.Members(u) {
			for _, o := range g.Succs(int(op)) {
				w := nd.UnitOf[o]
				if int(w) == u || stamp[w] == -2-int32(u) {
					continue
				}
				if stamp[w] != int32(u) {
					adj = append(adj, w)
				}
				stamp[w] = -2 - int32(u)
				nd.outDeg[u]++
			}
		}
		nd.adjStart[u+1] = int32(len(adj))
	}
	nd.adj = adj
	return nd
}
