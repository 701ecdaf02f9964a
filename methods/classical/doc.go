// Package classical holds the classical methods the seed papers measure
// their optimizers against, each an optimize.Optimizer (listed by name,
// in table order, in package methods):
//
//   - single: every op on device 0;
//   - expert: the human expert's placement (Problem.Expert, filled where
//     the inputs are resolved);
//   - round-robin: ops dealt to devices in topological order;
//   - random: the best of k random placements (k = the evaluation budget);
//   - metis: METIS-style multilevel k-way partitioning (package partition)
//     balancing compute within 3% and minimising the bytes cut;
//   - gp-dfs: REGAL's XLA-like baseline, that partition plus a depth-first
//     schedule;
//   - m-topo and m-etf: Baechi's memory-constrained topological split and
//     earliest-task-first list scheduling;
//   - local-search and sa: REGAL's local search and GO's simulated
//     annealing over placement, priorities and fusion priorities;
//   - dp: the contiguous split of a topological order into at most one
//     block per device (PipeDream's dynamic program), costed with the
//     model and chosen by evaluation;
//   - gpipe and 1f1b: synchronous pipelines of one stage per GPU balanced
//     by forward time, the micro-batch count chosen by evaluation;
//   - pipedream: PipeDream's planner, a dynamic program over splits of
//     the layers into stages for every data-parallel degree (uniform over
//     the stages) and micro-batch count, under 1F1B;
//   - local-search-anchored and sa-anchored: local search and annealing
//     from the best of the quick baselines, with the learned policy's
//     move set (device, priority-level and fusion-level moves on its
//     decision units);
//   - tf-default: TensorFlow's defaults (FIFO scheduling, XLA-like
//     fusion in topological order) on the expert or single placement.
//
// (The genetic algorithm, brkga, has its own package.) Every method
// honours the problem's tasks, changing only the parts of a decision it
// may and taking the rest from the problem's Base; every placement it
// returns honours co-location. The memory-aware heuristics plan with an
// estimate of each op's memory (memoryEstimate) and leave MemoryHeadroom
// free; whether the result fits is the evaluator's verdict, reported in
// the result. docs/baselines.md gives each method's source, knobs and
// defaults.
//
// May import: graph/..., decision, evaluate, optimize, internal/...
package classical
