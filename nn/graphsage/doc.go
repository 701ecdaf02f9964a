// Package graphsage is the inductive graph encoder of the GO/GDP policy
// (GDP §3.1, GO §4.1): per-node features that transfer between graphs, and
// GraphSAGE layers with the max-pool aggregator
//
//	h_N(v) = max_{u in N(v)} sigmoid(W h_u + b)
//	h_v'   = relu(concat(h_v, h_N(v)) F + c)
//
// over up to K neighbours sampled (seeded) from both edge directions.
//
// Nodes are the ops of a graph, or with co-location coarsening the
// co-location groups (an op outside every group is a group of its own), so
// that a decision made for a group applies to all of its ops. Nodes are
// numbered in topological order (a group by its first op), which is the
// order the attention layers read them in.
//
// Features carry no node ids: op class, dtype and hashed op type
// (histograms over a group's ops), the output shape (fixed size, padded,
// log-scaled), FLOPs, bytes read and written, parameter and scratch bytes,
// in- and out-degree, group size, the caller's per-op cost hints (for
// example roofline times on the target hardware), and the fraction of
// backward-pass and measured ops. Magnitudes are log-scaled and then
// standardized per graph; the per-graph means are handed on separately as
// graph-level statistics so that absolute scale is not lost. The fixed
// part of the normalization (units, clipping) is a Normalization value
// that is saved with the weights.
//
// The layers are generic over float32 (fast path) and float64 (gradient
// checks) and have hand-derived backward passes.
//
// May import: nn, graph
package graphsage
