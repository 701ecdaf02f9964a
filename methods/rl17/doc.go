// Package rl17 is the 2017 RL placer of Mirhoseini et al., "Device
// Placement Optimization with Reinforcement Learning" (ICML 2017;
// seeds/device-placement-rl-icml2017.txt §3): co-location groups (Group),
// their features and op-type embedding, which feed the attentional LSTM
// sequence-to-sequence controller, and REINFORCE on -sqrt(step time) with a
// moving-average baseline. The controller and the REINFORCE training are
// methods/internal/seq2seq's, which hdp shares. RL17 is the method "rl17"
// of the registry (package methods).
//
// May import: graph/..., decision, evaluate, optimize, nn/...,
// internal/..., methods/internal/...
package rl17
