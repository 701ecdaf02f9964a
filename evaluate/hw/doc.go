// Package hw is placer's bridge to real NVIDIA hardware.
//
// It has three layers, split so that everything except the thinnest one
// builds and is tested on a machine without a GPU:
//
//   - Discovery (Discover, Info): the GPUs of this machine read through NVML
//     (github.com/NVIDIA/go-nvml): names, memory, clocks, compute
//     capability, driver and CUDA versions, PCIe links and the NVLink/PCIe
//     topology matrix. NVML is reached through the NVML interface, so the
//     formatting and the topology logic are tested with a fake. Without a
//     driver, Discover returns an error that matches ErrNoDriver.
//
//   - Pure planning and fitting: KernelPlan turns a graph, a cluster and a
//     decision.Decision into the kernels, streams, events and peer copies
//     that would run it on GPUs; FitEfficiencies turns measured kernel
//     times into the per-class efficiencies of a roofline.Hardware profile;
//     BenchReport.Profile turns micro-benchmark results into a profile.
//
//   - Execution (files with the `cuda` build tag, gorgonia.org/cu and
//     cuBLAS): the micro-benchmarks (Bench), the calibration (Calibrate)
//     and the measuring Evaluator (NewEvaluator). In a binary built
//     without the tag these return ErrNoCUDA; build the CUDA binary with
//     `make cuda` (bin/placer-cuda).
//
// See docs/hardware.md for the commands, the profile format and how each
// figure is measured.
//
// May import: graph, decision, evaluate, evaluate/roofline, internal/...
package hw
