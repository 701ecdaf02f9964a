// Package layers is placer report layers' job: transformer blocks and
// kernels measured on a GPU (a layerbench or kernelbench file) against
// placer's prediction of each, and the GEMM efficiency the blocks give.
//
// May import: graph, planner/..., report/plans, internal/...
package layers
