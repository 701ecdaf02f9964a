// Package ppo trains a policy network with Proximal Policy Optimization
// (Schulman et al. 2017), as GDP does (seeds/gdp-generalized-device-
// placement.md §3 and table 4): a clipped surrogate objective, an entropy
// bonus, a value head or a per-rollout baseline, advantage normalization,
// gradient clipping by global norm, Adam, and several epochs of
// minibatches over each rollout.
//
// May import: nn
package ppo
