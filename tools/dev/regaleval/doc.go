// Command regaleval compares REGAL with BRKGA at the same evaluation
// budget and seeds (1, 2, 3) on graph files or built-in workloads, on 2
// V100s with REGAL's synchronous transfers, placement and scheduling:
// regal with sampled buckets, with the most likely buckets (greedy), and
// regal-zero-shot, each as the mean % improvement over BRKGA (positive =
// better), beside the single-GPU step time. -untrained uses a fresh
// network (the control); -model a model file; -objective peak-memory
// compares the largest per-GPU peak instead of the step time (the model
// must have been trained for it). docs/regal.md records its runs.
//
// May import: graph/..., decision, evaluate/..., workloads/..., optimize,
// nn/..., methods/..., jobs/..., inputs, report, internal/...
package main
