// Package brkga is the biased random-key genetic algorithm (Gonçalves &
// Resende, "Biased random-key genetic algorithms for combinatorial
// optimization", J. Heuristics 2011) with REGAL's chromosome for joint
// placement and scheduling (seeds/regal-iclr2020.txt §3.2, A.5): o x d
// op-device affinities, o scheduling priorities and t x d tensor transfer
// priorities, decoded by maximum affinity and a priority-broken
// topological sort. It is registered as "brkga" in the optimize registry.
//
// REGAL's policy steers it by choosing, per gene, the Beta distribution
// its mutants are drawn from (BRKGA.Mutants, laid out by NewLayout) and
// the crossover bias (BRKGA.GeneBias); left unset, mutants are uniform and
// the bias is EliteBias everywhere, as in "BRKGA 5K", REGAL's reference.
//
// May import: graph/..., decision, evaluate, optimize, internal/...
package brkga
