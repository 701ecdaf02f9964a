// Package graph is placer's computation-graph IR: the ops of one training
// step, the tensors that flow between them, control edges, and co-location
// groups.
//
// A Graph is built once through a Builder, validated, and is read-only
// afterwards; its adjacency is kept in compressed arrays (CSR) so that the
// simulator and the encoders can walk graphs of 80,000+ ops without
// allocating. Graph algorithms that more than one package needs
// (topological order, critical path) are plain functions or methods here.
//
// A graph may know its batch (Graph.Batch): then each tensor says which
// of its dimensions is the batch (Tensor.BatchDim) and each op which parts
// of its cost do not scale with it (Op.FixedFLOPs, ...), and AtBatch
// gives the graph at a micro-batch.
//
// The native file format is versioned JSON; see docs/graph-format.md and
// Read/Write.
//
// May import: internal/...
package graph
