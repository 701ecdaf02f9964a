// Package partition is a METIS-style multilevel k-way graph partitioner in
// pure Go (Karypis & Kumar, "A fast and high quality multilevel scheme for
// partitioning irregular graphs", SIAM J. Sci. Comput. 1998; the kmetis
// scheme): the graph is coarsened by heavy-edge matching until it is
// small, the coarsest graph is split by recursive bisection (greedy graph
// growing, then Fiduccia-Mattheyses refinement), and the partition is
// projected back level by level with greedy k-way boundary refinement at
// each. It minimises the weight of the cut edges while keeping every
// part's vertex weight within a tolerance of the average and, optionally,
// every part's memory under a capacity.
//
// FromComputation turns a computation graph into the partitioner's input:
// one vertex per op, or per co-location group (contracted before anything
// else, so a group is never split), edges weighted by tensor bytes.
//
// May import: graph, internal/...
package partition
