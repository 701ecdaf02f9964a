// Package clusterflags binds the cluster planner's flags of the commands
// that serve both products (eval, search, export:
// cmd/placer/internal/worldflags): each command's flags for a
// transformer at cluster scale, bound into that command's options at
// cluster scale alone (jobs.ScaleOptions, export.ScaleOptions).
//
// May import: cmd/placer/internal/worldflags, jobs/...
package clusterflags
