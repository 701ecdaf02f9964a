// Package hdp is the hierarchical device placer of Mirhoseini et al., "A
// Hierarchical Model for Device Placement" (ICLR 2018): a feed-forward
// grouper assigns every op to one of a fixed number of groups, rl17's
// attentional LSTM sequence-to-sequence placer places the groups, and both
// are trained jointly with REINFORCE on -sqrt(step time). HDP is the
// method "hdp" of the registry (package methods).
//
// May import: graph/..., decision, evaluate, optimize, nn/...,
// internal/..., methods/rl17
package hdp
