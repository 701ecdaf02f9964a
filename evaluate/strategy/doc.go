// Package strategy evaluates a decision's strategy (decision.Strategy):
// the replicas, micro-batches and pipeline schedule around one replica's
// placement, costed from one replica's simulation and the cluster's
// collectives, never one simulation per GPU (DESIGN §10). This file set
// holds the pipeline schedules: given each stage's time per micro-batch,
// the time a micro-batch's activations and gradients take between stages,
// and the schedule (GPipe, 1F1B), the step's makespan, each stage's idle
// time (the bubble) and its peak of micro-batches in flight (whose
// activations it holds).
//
// May import: graph/..., decision, evaluate/..., internal/...
package strategy
