// Package costtable reads the measured-cost tables that placer's PyTorch
// exporter writes (torchexport --profile --cost-table FILE) and fills the
// ops of a graph that have no measured time from them.
//
// A table's key is what the graph format holds of an op, not the shapes
// of its inputs (the format does not record them): the op's type, dtype,
// first output's shape, FLOPs, bytes read and bytes written, and the
// device it was measured on. Two ops with the same key do the same work
// in every case the exporter records; an op whose inputs differ in ways
// these do not show (a transposed operand, a strided view) shares the
// measurement of the first. See docs/import.md, "Profiling".
//
// May import: graph, internal/...
package costtable
