// Package opcheck says, for an op graph, what placer's op-level figures
// were checked against (docs/performance-model.md, "Checked against, at
// op level"): which of the graph's op kinds
// (class, the precision its arithmetic runs at, and a variant such as
// depthwise convolution or a serial RNN) have measured references in the
// project, how close the roofline came to them, and where the graph leaves
// them, so that `placer eval` on a graph no one here profiled says which
// part of its step rests on measurement and which on the datasheet.
//
// The references are the profiled training steps lent GPUs measured
// (measurements/DATE-MACHINE/graphs: every op's kernel time, torchexport
// --profile), summarised per kind: how many ops, their measured kernel
// time and the roofline's time for the same ops. The summary is embedded
// (references.json) so that an installed binary carries it; its test
// derives it again from measurements/ and fails when they differ (go test
// ./evaluate/opcheck -update writes it anew).
//
// May import: graph, evaluate/roofline
package opcheck
