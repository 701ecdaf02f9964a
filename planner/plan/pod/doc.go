// Package pod is the pod of nodes a plan (planner/plan) runs on:
// Pod, read by ParsePod, PodOf and PodFor (parse.go) from the presets
// (pod.go; the Blackwell nodes and racks in blackwell.go; the 40 GB DGX
// A100 and the PCIe servers in pcie.go), with what its node
// measures beyond the roofline (Pod.Kernels, planner/kernels'
// data) or what a profile measured (profiled.go: WithProfile,
// ProfilePod); the time of a collective over a group of its GPUs
// (Group; collective.go: Pod.Collective, Pod.AllToAll), what a collective takes from
// the compute beside it (contention.go: Comm, Window), the clock a
// power limit holds (power.go), the memory a GPU has for a plan
// (memory_fit.go: Pod.Usable, the margin and the regime's error) and the
// constants chosen with rows (tuned.go). plan names each of these as
// its own (plan.Pod, plan.ParsePod, ...).
//
// May import: graph/..., evaluate/roofline, evaluate/profile, planner/kernels, internal/...
package pod
