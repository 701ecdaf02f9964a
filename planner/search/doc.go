// Package search finds the fastest plan of a uniform transformer on a
// pod that fits its GPUs' memory (Search), by enumerating the plans of a
// Space (tensor, pipeline, context, data and expert parallelism, virtual
// stages, uneven splits, end stages of their own tensor-parallel degree,
// micro-batch sizes, recomputation; SpaceOf reads a partial plan as one)
// and, for a target framework (Target), only the plans it runs. Each
// plan is written and resolved in planner/plan and costed by the
// cost model's exported API (planner.EvaluateCached with one
// planner.PhaseCache a search, planner.FitsTight for the memory alone): a
// client of planner, nothing here reaches into it.
//
// May import: graph/..., decision, planner, planner/plan, internal/...
package search
