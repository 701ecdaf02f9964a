package hardware

// AMD Instinct presets: the MI300X and MI325X (CDNA 3, gfx942) and the
// MI355X (CDNA 4, gfx950), each an OAM module of the 8-GPU AMD Instinct
// platform. Every peak is dense (AMD's tables give structured-sparsity
// figures beside them, twice the dense rate), each its compute units x
// peak engine clock x FLOPs a clock and unit, as AMD's own "peak"
// definition writes it (ROCm blog "Understanding Peak, Max-Achievable &
// Delivered FLOPs, Part 1", Ben Sander, 2025-02-14,
// https://rocm.blogs.amd.com/software-tools-optimization/
// Understanding_Peak_and_Max-Achievable_FLOPS/README.html, read
// 2026-11-29):
//
//   - MI300X and MI325X: 304 CUs at 2,100 MHz, 2,048 dense BF16 FLOPs a
//     clock and CU: BF16/FP16 1,307.4 TF, FP8 (OCP FP8; e4m3fnuz on the
//     MI300 series) and INT8 2,614.9, TF32 653.7, FP32 163.4 (vector and
//     matrix), FP64 81.7 vector; the same die, the MI325X's memory and
//     power apart (MI325X specification table at
//     https://awesomeagents.ai/hardware/amd-mi325x: "FP8 Performance
//     2,614.9 TFLOPS", "FP16 / BF16 1,307.4 TFLOPS", "TF32 653.7 TFLOPS",
//     256 GB HBM3E, 6 TB/s; the MI300X's 1,307.4 / 2,614.9 TF, 5.3 TB/s,
//     192 GB and 750 W TBP in
//     https://raw.githubusercontent.com/alpharomercoma/MI300X-vs-H200/
//     6077fdc7bfc215171c33435b7cd76ca4c5f2b236/METHODOLOGY.md; the
//     MI325X's 1,000 W TBP and unchanged 304 CUs at 2,100 MHz,
//     https://www.svethardware.cz/amd-predstavilo-instinct-mi325x-s-256gb-
//     pameti-hbm3e-slibuje-i-vykonnejsi-mi355x/61224; all read
//     2026-11-29).
//   - MI355X: 256 CUs (8 XCDs of 32) at 2,400 MHz, 8,192 dense FP8 FLOPs
//     a clock and CU (ISSCC 2026, as reported at
//     https://www.world-today-news.com/?p=7253162: "doubled the per-CU FP8
//     throughput - from 4,096 FLOPS per clock to 8,192", "five
//     petaflops"): FP8 5,033.2 TF, BF16/FP16 2,516.6, MXFP6 and MXFP4
//     10,066.3 (HipKittens, arXiv 2511.08083, Table 2: "BF16 compute 2.5
//     PFLOPs", "MXFP4 compute 10.1 PFLOPs", 288 GB, 8.0 TB/s), FP64 78.6
//     vector (https://humeconsulting.co/amd-mi355x-strong-node-level-
//     inference-but-not-yet-rack-scale: "78.6 TFLOPS FP64"), FP32 157.3
//     (twice FP64, as on the MI300X), no TF32 tensor rate (hipBLASLt
//     rocm-7.0.0's release notes: "Added TF32 emulation on gfx950"): 0,
//     FP32 stands for it; 1,400 W TBP (Tom's Hardware, "AMD's Instinct
//     MI355X accelerator will reportedly consume 1,400 watts", 2025).
//
// Memory is written in decimal gigabytes as AMD's tables write it (192,
// 256, 288 GB), as the Blackwell presets are: if anything less than the
// HBM stacks hold. FP16 without the matrix cores is twice FP32, as on
// the NVIDIA presets.
//
// Infinity Fabric (xGMI) in the NVLink fields, which are the roofline's
// names for a GPU-to-GPU fabric: 7 links a GPU, one to each of the
// platform's 7 other GPUs, no switch (a fully connected mesh: "Each AMD
// Instinct MI300X system GPU is connected to its seven peer GPUs via
// xGMI links, forming a fully connected mesh", ROCm blog "Understanding
// RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X",
// 2025-03-02, https://rocm.blogs.amd.com/software-tools-optimization/
// mi300x-rccl-xgmi/README.html, read 2026-11-29), each link "rated up to
// 64 GB/s" a direction on CDNA 3 (the same blog); 153.6 GB/s both ways
// (76.8 a direction) on the MI355X (humeconsulting.co above: "~153 GB/s
// of bidirectional bandwidth"). The op-level roofline has no mesh
// topology: "nvswitch" prices a transfer between two GPUs at all 7
// links, where a mesh gives a pair one; the cluster planner's pods
// (planner/plan/pod's instinct.go) price the mesh. The host link is PCIe
// Gen5 x16 at the 50 GB/s the NVIDIA presets assume attained; the
// latencies are the H100 preset's (assumed, not measured on AMD).
var instinctPresets = map[string]Hardware{
	"mi300x": {
		Name: "mi300x", FP64: 81.7 * tera, FP32: 163.4 * tera, FP16: 326.8 * tera, TF32: 653.7 * tera, FP16Tensor: 1307.4 * tera,
		INT8Tensor: 2614.9 * tera, FP8Tensor: 2614.9 * tera,
		MemBandwidth: 5300 * giga, Memory: 192 * giga,
		NVLinkGen: 1, NVLinkBandwidth: 64 * giga, NVLinks: 7, NVLinkLatency: 6e-6,
		PCIeGen: 5, PCIeBandwidth: 50 * giga, PCIeLatency: 12e-6, Topology: "nvswitch",
		Source: "AMD Instinct MI300X (CDNA 3, 304 CUs at 2,100 MHz, 750 W): 192 GB HBM3 at 5.3 TB/s, 7 x 64 GB/s Infinity Fabric links (dense peaks)",
	},
	"mi325x": {
		Name: "mi325x", FP64: 81.7 * tera, FP32: 163.4 * tera, FP16: 326.8 * tera, TF32: 653.7 * tera, FP16Tensor: 1307.4 * tera,
		INT8Tensor: 2614.9 * tera, FP8Tensor: 2614.9 * tera,
		MemBandwidth: 6000 * giga, Memory: 256 * giga,
		NVLinkGen: 1, NVLinkBandwidth: 64 * giga, NVLinks: 7, NVLinkLatency: 6e-6,
		PCIeGen: 5, PCIeBandwidth: 50 * giga, PCIeLatency: 12e-6, Topology: "nvswitch",
		Source: "AMD Instinct MI325X (CDNA 3, 304 CUs at 2,100 MHz, 1,000 W): 256 GB HBM3E at 6 TB/s, 7 x 64 GB/s Infinity Fabric links (dense peaks)",
	},
	"mi355x": {
		Name: "mi355x", FP64: 78.6 * tera, FP32: 157.3 * tera, FP16: 314.6 * tera, FP16Tensor: 2516.6 * tera,
		INT8Tensor: 5033.2 * tera, FP8Tensor: 5033.2 * tera, FP4Tensor: 10066.3 * tera,
		MemBandwidth: 8000 * giga, Memory: 288 * giga,
		NVLinkGen: 1, NVLinkBandwidth: 76.8 * giga, NVLinks: 7, NVLinkLatency: 6e-6,
		PCIeGen: 5, PCIeBandwidth: 50 * giga, PCIeLatency: 12e-6, Topology: "nvswitch",
		Source: "AMD Instinct MI355X (CDNA 4, 256 CUs at 2,400 MHz, 1,400 W): 288 GB HBM3E at 8 TB/s, 7 x 76.8 GB/s Infinity Fabric links (dense peaks; FP4 is MXFP4)",
	},
}

// init adds the Instinct presets with every preset's defaults (the
// launch overhead and the per-class efficiencies: hardware.go's init).
func init() {
	for k, h := range instinctPresets {
		h.Launch = defaultLaunch
		h.ComputeEff = defaultComputeEff
		h.MemEff = defaultMemEff
		presets[k] = h
	}
}
