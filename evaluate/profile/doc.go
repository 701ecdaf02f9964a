// Package profile holds a profile: what one machine measured of one
// model's training step (placer profile writes it; docs/profile.md is
// its format): the device and the software it ran on, one transformer
// layer's forward and backward at each shard shape, the embedding, the
// loss, the optimizer step, the collectives over the processes present
// and the host's issue of a kernel. Read validates a file; the lookups
// (Layer, Collective, ...) answer a shape with the measured figure, a
// figure composed from measured neighbours by the rules written beside
// them, or nothing (the caller's roofline then answers), and say which
// (Source).
//
// May import: graph, graph/transformer
package profile
