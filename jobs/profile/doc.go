// Package profile is placer profile's job: it measures on the machine at
// hand what eval and search at either scale read with --profile
// (evaluate/profile's format, docs/profile.md), by running placer_torch's
// measurements (embedded, python/placer_torch) in the torch virtualenv.
// With --workload (Run, profile.go) it times a transformer's layer at
// the shard shapes a plan can give it (Shapes), its embedding, loss and
// optimizer, the collectives and the host's issue; with --model
// (opprofile.go) a model's training step, exported as an op graph, op by
// op. What it measured is written whole, an incomplete profile beside an
// existing file rather than over it (profile_save.go). Options take
// values; a refusal names the flag that gave one (fail.Usagef), as the
// measurements' own refusals do.
//
// Nothing here imports package jobs: eval and search read the profile
// file this writes, not this package.
//
// May import: evaluate/hw, evaluate/profile, graph, graph/transformer,
// internal/..., python/...
package profile
