// Package regal is REGAL's policy (Paliwal et al., "Reinforced Genetic
// Algorithm Learning for Optimizing Computation Graphs", ICLR 2020,
// seeds/regal-iclr2020.txt §3-4, A.2-A.6, A.14-A.16; and the zero-shot
// workshop version): a graph neural network that reads a computation
// graph and predicts, for every op and every gene group of BRKGA's
// chromosome (one device affinity per device, the scheduling priority),
// the Beta distribution BRKGA draws that gene from when it makes a mutant.
//
// The network is placer's GraphSAGE encoder (package graphsage, on the nn
// toolkit) followed by a two-layer head shared by all nodes. For each node
// and gene group the head gives the logits of two categorical
// distributions: one over Config.MeanBuckets quantized means and one over
// Config.VarBuckets quantized variances (REGAL A.6):
//
//	mu     = (m + 1) / (k_m + 1)
//	sigma2 = mu (1 - mu) (v + 1) / (k_v + 1)
//
// mapped to Beta(alpha, beta) by brkga.BetaFromMeanVar. The tensor
// transfer priorities and fusion priorities stay uniform, as REGAL fixes
// its tensor genes to Beta(1, 1).
//
// Training (Train) is REGAL's contextual bandit with REINFORCE (§4.1): per
// graph, the bucket choices are sampled, BRKGA runs with those mutant
// distributions at a small evaluation budget, and the reward is
// -(objective / objective of uniform BRKGA at the same budget). Two
// methods use a trained Model: REGAL (the network steering BRKGA, 5,000
// evaluations by default) and ZeroShot (the workshop paper's variant: the
// network's distributions decoded without a genetic search).
//
// May import: graph/..., decision, evaluate, optimize, nn/...,
// internal/..., methods/brkga
package regal
