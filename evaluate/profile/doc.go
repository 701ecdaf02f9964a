// Package profile holds a profile: what one machine measured of one
// model's training step (placer profile writes it; docs/profile.md is
// its format). A layers profile (KindLayers) holds the device and the
// software it ran on, one transformer layer's forward and backward at
// each shard shape, the embedding, the loss, the optimizer step, the
// collectives over the processes present and the host's issue of a
// kernel; the lookups (Layer, Collective, ...) answer a shape with the
// measured figure, a figure composed from measured neighbours by the
// rules written beside them, or nothing (the caller's roofline then
// answers), and say which (Source). An ops profile (KindOps) holds a
// model's training step as an op graph whose ops carry the times
// measured on the device (Graph), with the exporter's meta. Read
// validates a file of either kind.
//
// May import: graph, graph/transformer, internal/bounded
package profile
