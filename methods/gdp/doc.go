// Package gdp holds the learned optimizer's loops: GO-one search on one
// graph (Search, an optimize.Optimizer named "go"), and the transfer loops
// built on it. A search samples K decisions from one forward pass of the
// policy, evaluates them in parallel, rewards each with
// -sqrt(step / reference step) (GDP §3; -10 when it does not fit or breaks
// co-location), keeps the best decision ever seen, and improves the
// policy with PPO.
//
// May import: graph/..., decision, evaluate, optimize, nn/...,
// internal/..., methods/gdp/..., methods/classical
package gdp
