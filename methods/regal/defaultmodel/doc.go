// Package defaultmodel embeds the default REGAL models that the methods
// regal and regal-zero-shot use when none is given, one per objective:
// data/default.regal (step time, written by `make regal-model`) and
// data/peak-memory.regal (peak memory, `make regal-model-memory`). A build
// without one has no default model for its objective, and LoadFor says how
// to get one.
//
// May import: methods/regal, optimize
package defaultmodel
