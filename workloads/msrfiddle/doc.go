// Package msrfiddle imports the JSON graphs of msr-fiddle's dnn-partitioning
// code ("Efficient Algorithms for Device Placement of DNN Graph Operators",
// NeurIPS 2020, MIT licence) into placer's graph IR.
//
// A file holds a machine (maxSizePerFPGA, maxFPGAs, maxCPUs), nodes with a
// measured accelerator latency (fpgaLatency, milliseconds; the authors
// measured it on a GPU), a resident size in bytes and a co-location class
// (colorClass), and edges with a measured time to move the source's output
// between accelerator and host (cost, milliseconds) and its size in bytes.
//
// Each node becomes an op of class graph.ClassUnknown with a measured time
// (Op.HasTime) in seconds; its size becomes the op's resident memory
// (Op.ParamBytes), because the format counts every node's size against the
// memory of the device it is placed on for the whole step. That size
// already holds the node's outputs (the edges' sizes are the same bytes, a
// debugging aid in the format), so every op is marked as an alias
// (Op.Alias): its output tensors take no memory of their own on the
// producer's device, and a copy sent to another device is held there at
// its full size while its consumers run. A colorClass
// shared by two or more nodes becomes the co-location group "color-<n>".
// Edges from one source with the same size (and cost) become one tensor
// with several consumers; its transfer time (Tensor.HasTransferTime) is the
// edge cost in seconds. DecodeWithMeta also returns the file's device count
// and per-device memory so that callers can default to the machine the
// graph was profiled for. docs/importers.md describes the mapping in full.
// The graphs have no batch information (graph.Graph.Batch is 0): layers
// profiled at one batch, with no shapes to tell activations from weights.
//
// Malformed input (bad JSON, a missing or duplicate node id, a negative,
// NaN or infinite number, a cycle) is reported as a one-line error that
// names the node or edge and the field; the decoder never panics.
//
// May import: graph
package msrfiddle
