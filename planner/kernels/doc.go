// Package kernels is what a node's GPUs, host and links were measured to
// reach inside a training step beyond the roofline's per-class
// efficiencies: the GEMMs' share of the tensor peak, the FP8 and grouped
// GEMMs' speedups, the SMs an overlapped collective takes, the bus
// bandwidth collectives reach (Node; the H100's measured, H100, the
// A100's, A100, and Blackwell's modelled from published kernel
// benchmarks: BlackwellGEMM, BlackwellFP8, BlackwellBlockScaled,
// BlackwellAttention), the fused attention kernels timed by shape and their fit
// to kernelbench's cases (Attention, FitAttention, CheckAttention), the
// host thread that issues the kernels (Host) and the SM clock held under
// a power limit (HeldClock). Each figure names the measurement it comes
// from. It knows nothing of a plan: planner/plan's Pod holds a
// Node, and the cost model (planner) reads it.
//
// May import: internal/...
package kernels
