// Package decision holds the Decision type: everything an optimizer decides
// for one graph on one cluster (placement, scheduling priorities, fusion
// priorities, transfer priorities), its validation against a graph, the
// built-in simple decisions, the strategy around one replica's placement
// (Strategy: an op graph's replicas, micro-batches, schedule, sharding and
// bucket; a transformer's plan at cluster scale is planner's), and
// the versioned JSON decision file (docs/decision-format.md).
//
// May import: graph
package decision
