// Package hardware holds the figures of the accelerators the roofline
// model (evaluate/roofline) costs on: Hardware (peaks by arithmetic kind,
// memory, launch overhead, efficiencies, interconnect), the presets by
// name with their sources (hardware.go: P100 to H200; blackwell.go:
// B200, GB200, B300, GB300; geforce.go: RTX 3090; pcie.go: the A100
// SXM4 40 GB and the PCIe cards H100, A100, L40S, L40, L4, A30), a profile file's
// reading and ranges (LoadHardware, DecodeHardware, Validate), which f32
// ops run on TF32 tensor cores (TF32), and the convolutions measured on
// a GPU (grouped.go, dense.go) a preset names. It is data and its
// checks: how an op is costed on it is roofline's.
//
// May import: graph, internal/bounded
package hardware
