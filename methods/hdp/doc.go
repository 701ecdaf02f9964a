// Package hdp is the hierarchical device placer of Mirhoseini et al., "A
// Hierarchical Model for Device Placement" (ICLR 2018): a feed-forward
// grouper assigns every op to one of a fixed number of groups, rl17's
// attentional LSTM sequence-to-sequence placer places the groups, and both
// are trained jointly with REINFORCE on -sqrt(step time). This package
// holds the grouper, the group embeddings, the placer's TensorFlow logits
// (bound, temperature, noise) and the method; the placer and the
// REINFORCE training are methods/internal/seq2seq's, shared with rl17.
// HDP is the method "hdp" of the registry (package methods).
//
// May import: graph/..., decision, evaluate, optimize, nn/...,
// internal/..., methods/rl17, methods/internal/...
package hdp
