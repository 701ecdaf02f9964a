package hardware

// The A100 SXM4 40 GB and the PCIe cards MLPerf Training's BERT rows ran
// on (A100 PCIe 80 GB, H100 PCIe, L40S, L40, L4, A30). Every peak is
// dense: NVIDIA's datasheets mark their 2:4 sparse figures with an
// asterisk, twice the dense rate, and the figures below are those halved
// where only the sparse one is printed. Each from the source named
// beside it:
//
//   - [a100]: NVIDIA A100 Tensor Core GPU datasheet, its four columns
//     (A100 40GB PCIe, A100 80GB PCIe, A100 40GB SXM, A100 80GB SXM), as
//     https://www.thundercompute.com/blog/nvidia-a100-specs-full-guide
//     tabulates them: the same GA100 (6,912 CUDA cores, 432 tensor
//     cores, 1,410 MHz boost) in each, 40 GB HBM2 at 1,555 GB/s, 80 GB
//     HBM2e at 1,935 GB/s (PCIe) and 2,039 GB/s (SXM); 250 / 300 / 400 W;
//     PCIe 4.0 x16 on the cards, NVLink 3.0 (600 GB/s) on the SXM. The
//     40 GB SXM's peaks (FP64 9.7, FP32 19.5, TF32 156, BF16 312 TF, INT8
//     624 TOPS; 1,555 GB/s, 400 W) as
//     https://upb-pc2.atlassian.net/wiki/spaces/PC2DOK/pages/1900609
//     lists them for its 4 x A100 40GB NVLink nodes (its deviceQuery:
//     108 SMs, 42,405,855,232 bytes).
//   - [h100pcie]: NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe column:
//     FP64 26 TF, FP32 51, TF32 756*, BF16 and FP16 1,513*, FP8 3,026*,
//     INT8 3,026* TOPS; 80 GB HBM2e at 2 TB/s; 300-350 W; NVLink bridge
//     600 GB/s, PCIe Gen5 128 GB/s; and NVIDIA's H100 PCIe product brief
//     (PB-11133-001_v02, as https://manuals.plus/m/d4b5dc21484df3ba8fbe84918338461cc074a3fcebcc13423eadc2b10ac3bda4
//     copies it): "a dual-slot 10.5 inch PCI Express Gen5 card", "maximum
//     thermal design power (TDP) level of 350 W", "memory bandwidth
//     greater than 2,000 gigabytes per second".
//   - [l40]: NVIDIA's L40 / L40S datasheet table, as
//     https://www.mullet.se/product.html?product_id=355414 reproduces it
//     (L40 | L40S): 48 GB GDDR6 with ECC, 864 GB/s, PCIe Gen4 x16 64 GB/s
//     both ways, 142 SMs' worth of cores (18,176 CUDA cores, 568 tensor
//     cores), FP32 90.5 | 91.6 TF, TF32 90.5 | 181* and 183 | 366*, BF16
//     and FP16 181.05 | 362.1* and 362.05 | 733*, FP8 362 | 724* and 733 |
//     1,466*, INT8 362 | 724* (L40), 300 W | 350 W. FP16 without tensor
//     cores and FP64 (1:1 and 1:64 of FP32 on Ada): TechPowerUp's
//     figures as https://www.itcreations.com/nvidia-gpu/nvidia-l40s-gpu-accelerator
//     quotes them for the L40S ("FP16 (half) ... 91.61 TFLOPS (1:1),
//     FP32 (float) at 91.61 and FP64 (double) at 1,431 GFLOPS (1:64)"),
//     the same ratios on the L40 and L4.
//   - [l4]: NVIDIA L4 datasheet, as https://store.sourcecode.com/en-us/bg-bucket-compare/125/9820
//     and https://grokipedia.com/page/NVIDIA_L4_vs_L40S copy it: 24 GB
//     GDDR6 at 300 GB/s, PCIe 4.0 x16, FP32 30.3 TF, TF32 120*, FP16 and
//     BF16 242*, FP8 and INT8 485*, 72 W; 7,424 CUDA cores (58 SMs of 128)
//     ([tpu-l4]: https://fpsbench.com/compare/gpu/nvidia-l4-vs-nvidia-tesla-m40,
//     FP32 30.29 TF, FP16 1:1, FP64 473.3 GF).
//   - [a30]: NVIDIA A30 Tensor Core GPU datasheet: FP64 5.2 TF (10.3 on
//     its tensor cores), FP32 10.3, TF32 82 | 165*, BF16 and FP16 165 |
//     330*, INT8 330 | 661* TOPS, 24 GB HBM2 at 933 GB/s, 165 W, PCIe Gen4
//     64 GB/s, third-generation NVLink 200 GB/s (a bridge between two
//     cards). A GA100 SM (3,584 CUDA cores: 56 SMs of 64), FP16 without
//     tensor cores at 4x FP32 as on the A100 (the a100 preset's 78 TF).
//
// NVLink bridges (A100 PCIe, H100 PCIe and A30: two cards a bridge) are
// not modelled: a bridge joins pairs, which none of the roofline's
// topologies (nvswitch, hybrid-cube-mesh, pcie) writes; every card here
// reaches the others over PCIe (topology pcie), at the attained rate the
// a100 and h100 presets assume for their generation (Gen4 x16 25 GB/s,
// Gen5 x16 50 GB/s a direction). Memory: the HBM parts in GiB as the
// a100 preset writes its 80 GB, the GDDR6 cards in GB (an L40S reads
// 46,068 MiB, 48.3e9 bytes, in nvidia-smi: the bench's 45.0 GiB rows).
var pciePresets = map[string]Hardware{
	// A100 SXM4 40 GB [a100]: the a100 preset's GA100 with 40 GB of
	// HBM2 at 1,555 GB/s; NVLink 3, 12 links of 25 GB/s a direction.
	"a100-40gb": {
		Name: "a100-40gb", FP64: 9.7 * tera, FP32: 19.5 * tera, FP16: 78 * tera, TF32: 156 * tera, FP16Tensor: 312 * tera, INT8Tensor: 624 * tera,
		MemBandwidth: 1555 * giga, Memory: 40 * gib,
		NVLinkGen: 3, NVLinkBandwidth: 25 * giga, NVLinks: 12, NVLinkLatency: 8e-6,
		PCIeGen: 4, PCIeBandwidth: 25 * giga, PCIeLatency: 15e-6, Topology: "nvswitch",
		Source: "NVIDIA A100 Tensor Core GPU datasheet (SXM4 40GB)",
	},
	// A100 PCIe 80 GB [a100]: the same GA100 peaks, 1,935 GB/s, 300 W.
	"a100-pcie": {
		Name: "a100-pcie", FP64: 9.7 * tera, FP32: 19.5 * tera, FP16: 78 * tera, TF32: 156 * tera, FP16Tensor: 312 * tera, INT8Tensor: 624 * tera,
		MemBandwidth: 1935 * giga, Memory: 80 * gib,
		PCIeGen: 4, PCIeBandwidth: 25 * giga, PCIeLatency: 15e-6, Topology: "pcie",
		Source: "NVIDIA A100 Tensor Core GPU datasheet (80GB PCIe)",
	},
	// H100 PCIe [h100pcie]: dense TF32 378, BF16 756.5, FP8 and INT8
	// 1,513; FP16 without tensor cores twice FP32 (as the h100 preset).
	"h100-pcie": {
		Name: "h100-pcie", FP64: 26 * tera, FP32: 51 * tera, FP16: 102 * tera, TF32: 756.0 / 2 * tera, FP16Tensor: 1513.0 / 2 * tera,
		INT8Tensor: 3026.0 / 2 * tera, FP8Tensor: 3026.0 / 2 * tera,
		MemBandwidth: 2000 * giga, Memory: 80 * gib,
		PCIeGen: 5, PCIeBandwidth: 50 * giga, PCIeLatency: 12e-6, Topology: "pcie",
		Source: "NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe); H100 PCIe product brief PB-11133-001",
	},
	// L40S [l40]: dense TF32 183, BF16 362.05, FP8 733.
	"l40s": {
		Name: "l40s", FP64: 1.431 * tera, FP32: 91.6 * tera, FP16: 91.6 * tera, TF32: 183 * tera, FP16Tensor: 362.05 * tera,
		INT8Tensor: 1466.0 / 2 * tera, FP8Tensor: 733 * tera,
		MemBandwidth: 864 * giga, Memory: 48 * giga,
		PCIeGen: 4, PCIeBandwidth: 25 * giga, PCIeLatency: 15e-6, Topology: "pcie",
		Source: "NVIDIA L40S datasheet",
	},
	// L40 [l40]: dense TF32 90.5, BF16 181.05, FP8 and INT8 362.
	"l40": {
		Name: "l40", FP64: 1.414 * tera, FP32: 90.5 * tera, FP16: 90.5 * tera, TF32: 90.5 * tera, FP16Tensor: 181.05 * tera,
		INT8Tensor: 362 * tera, FP8Tensor: 362 * tera,
		MemBandwidth: 864 * giga, Memory: 48 * giga,
		PCIeGen: 4, PCIeBandwidth: 25 * giga, PCIeLatency: 15e-6, Topology: "pcie",
		Source: "NVIDIA L40 datasheet",
	},
	// L4 [l4]: dense TF32 60, BF16 121, FP8 and INT8 242.5.
	"l4": {
		Name: "l4", FP64: 0.4733 * tera, FP32: 30.3 * tera, FP16: 30.3 * tera, TF32: 120.0 / 2 * tera, FP16Tensor: 242.0 / 2 * tera,
		INT8Tensor: 485.0 / 2 * tera, FP8Tensor: 485.0 / 2 * tera,
		MemBandwidth: 300 * giga, Memory: 24 * giga,
		PCIeGen: 4, PCIeBandwidth: 25 * giga, PCIeLatency: 15e-6, Topology: "pcie",
		Source: "NVIDIA L4 datasheet",
	},
	// A30 [a30]: dense TF32 82, BF16 165, INT8 330; no FP8.
	"a30": {
		Name: "a30", FP64: 5.2 * tera, FP32: 10.3 * tera, FP16: 4 * 10.3 * tera, TF32: 82 * tera, FP16Tensor: 165 * tera, INT8Tensor: 330 * tera,
		MemBandwidth: 933 * giga, Memory: 24 * gib,
		PCIeGen: 4, PCIeBandwidth: 25 * giga, PCIeLatency: 15e-6, Topology: "pcie",
		Source: "NVIDIA A30 Tensor Core GPU datasheet",
	},
}

func init() {
	for k, h := range pciePresets {
		h.Launch = defaultLaunch
		h.ComputeEff = defaultComputeEff
		h.MemEff = defaultMemEff
		presets[k] = h
	}
	// After hardware.go's init (files initialise in name order): the h100.
	presets["a100-40gb"] = depthwiseCarried(presets["a100-40gb"], presets["h100"], fp32LanesPerSM64)
}
