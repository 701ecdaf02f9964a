// Package rl17 is the 2017 RL placer of Mirhoseini et al., "Device
// Placement Optimization with Reinforcement Learning" (ICML 2017;
// seeds/device-placement-rl-icml2017.txt §3): co-location groups, an
// attentional LSTM sequence-to-sequence controller built of nn's LSTM and
// attention layers, and REINFORCE on -sqrt(step time) with a moving-average
// baseline. RL17 is the method "rl17" of the registry (package methods).
//
// May import: graph/..., decision, evaluate, optimize, nn/...,
// internal/...
package rl17
