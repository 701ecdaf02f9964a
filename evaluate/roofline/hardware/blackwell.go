package hardware

// Blackwell presets: the B200 (HGX/DGX B200, 1,000 W), the Blackwell GPU
// of the GB200 superchip (1,200 W), the B300 (Blackwell Ultra, HGX B300,
// 1,100 W) and the Blackwell Ultra GPU of the GB300 superchip (1,400 W).
// Every peak is dense: NVIDIA's tables lead with 2:4 sparse figures
// (marked "with sparsity"), twice the dense rate; each figure below is
// the table's over its GPUs, halved where it is sparse. NVIDIA's own
// pages are not in the sources this project reads; the figures are taken
// from these copies of NVIDIA's tables, each named beside its numbers:
//
//   - [hgx]: NVIDIA's HGX B200 / HGX B300 specification table (8 GPUs;
//     FP8, BF16, TF32 and INT8 "with sparsity", FP4 sparse | dense), as
//     https://fibermall.com/blog/?p=17161 reproduces it: HGX B200 FP4
//     144 | 72 PF, FP8 72 PF, BF16 36 PF, TF32 18 PF, INT8 72 POPS, FP32
//     600 TF, FP64 296 TF, 1.4 TB; HGX B300 FP4 144 | 105 PF, FP8 72 PF,
//     BF16 36 PF, TF32 18 PF, INT8 2 POPS, FP32 600 TF, FP64 10 TF.
//   - [brief]: NVIDIA's Blackwell technical brief, per GPU, as
//     https://glennklockwood.com/garden/processors/B200 tabulates it
//     (dense "Matrix" and "Sparse" columns): GB200 at 1,200 W FP64 45,
//     FP32 90, TF32 1,250, BF16 2,500, FP8 5,000, FP4 10,000, INT8 5,000
//     TF; HGX B200 at 1,000 W 40, 80, 1,100, 2,250, 4,500, 9,000, 4,500;
//     8 TB/s, NVLink 5 at 1.8 TB/s both ways.
//   - [verda]: https://verda.com/blog/gb300-nvl72-architecture, per GPU
//     without sparsity: GB300 FP4 15 PF, FP8 5, BF16 2.5, TF32 1.25, FP32
//     0.080, INT8 0.165 POPS, 279 GB, 8 TB/s, 1.4 kW; B300 FP8 4.5, BF16
//     2.25, TF32 1.1, FP32 0.075, INT8 0.15 POPS, 270 GB, 1.1 kW.
//   - [gb300]: the GB300 NVL72's rack figures, as
//     https://vendordeep.com/report/nvidia-launches-blackwell-ultra-gb300
//     quotes them: FP4 1,440 PF sparse, 1,080 dense; FP8/FP6 720 PF
//     (sparse); 20 TB HBM3e at 576 TB/s (8 TB/s a GPU); NVLink 5 130
//     TB/s (1.8 TB/s a GPU).
//   - [mlperf-b200]: a DGX-class B200 node's MLPerf system description
//     (https://raw.githubusercontent.com/mlcommons/inference_results_v6.0/
//     main/closed/Nebius/systems/nebius_b200_n1.json): "NVIDIA
//     B200-SXM-180GB", "18x 5th Gen NVLink, 14.4 TB/s aggregated
//     bandwidth" (8 GPUs), "PCIe Gen5 x16", "B200 TGP 1000W".
//   - [mlperf-gb200]: a GB200 NVL72's (https://raw.githubusercontent.com/
//     mlcommons/inference_results_v6.1/main/closed/Crusoe/systems/
//     GB200-NVL72_GB200-186GB_aarch64x16_Dynamo.json): "186 GB" HBM3e a
//     GPU, the host on "NVLink-C2C".
//
// NVLink 5: 18 links a GPU of 50 GB/s a direction, 900 GB/s a direction
// (1.8 TB/s both ways: [brief], [mlperf-b200]). The host link: the B200's
// and B300's PCIe Gen5 x16 ([mlperf-b200]) at the 50 GB/s the H100's
// preset assumes attained; GB200's and GB300's GPUs reach their Grace
// over NVLink-C2C ([mlperf-gb200]), faster, which the roofline's host
// transfers do not use: PCIe Gen5's figure stands for it (a lower
// bound). FP16 without tensor cores is twice FP32, as on the H100. The
// latencies are the H100 preset's (assumed, not measured on Blackwell).
var blackwellPresets = map[string]Hardware{
	// B200 (HGX/DGX B200, SXM, 1,000 W): [hgx] / 8, halved where sparse:
	// FP64 37 TF, FP32 75, TF32 1,125, BF16 2,250, FP8 4,500, FP4 9,000
	// (72 PF dense / 8), INT8 4,500 TOPS; 180 GB ([mlperf-b200]; DGX
	// B200's 1,440 GB / 8), 8 TB/s ([brief]).
	"b200": {
		Name: "b200", FP64: 37 * tera, FP32: 75 * tera, FP16: 150 * tera, TF32: 1125 * tera, FP16Tensor: 2250 * tera,
		INT8Tensor: 4500 * tera, FP8Tensor: 4500 * tera, FP4Tensor: 9000 * tera,
		MemBandwidth: 8000 * giga, Memory: 180 * giga,
		NVLinkGen: 5, NVLinkBandwidth: 50 * giga, NVLinks: 18, NVLinkLatency: 6e-6,
		PCIeGen: 5, PCIeBandwidth: 50 * giga, PCIeLatency: 12e-6, Topology: "nvswitch",
		Source: "NVIDIA HGX B200 specifications (dense: sparse / 2); MLPerf B200-SXM-180GB system description",
	},
	// The Blackwell GPU of GB200 (1,200 W): [brief]'s GB200 column, dense:
	// FP64 45 TF, FP32 90, TF32 1,250, BF16 2,500, FP8 5,000, FP4 10,000,
	// INT8 5,000; 186 GB ([mlperf-gb200]), 8 TB/s (the NVL72's 576 TB/s /
	// 72).
	"gb200": {
		Name: "gb200", FP64: 45 * tera, FP32: 90 * tera, FP16: 180 * tera, TF32: 1250 * tera, FP16Tensor: 2500 * tera,
		INT8Tensor: 5000 * tera, FP8Tensor: 5000 * tera, FP4Tensor: 10000 * tera,
		MemBandwidth: 8000 * giga, Memory: 186 * giga,
		NVLinkGen: 5, NVLinkBandwidth: 50 * giga, NVLinks: 18, NVLinkLatency: 6e-6,
		PCIeGen: 5, PCIeBandwidth: 50 * giga, PCIeLatency: 12e-6, Topology: "nvswitch",
		Source: "NVIDIA Blackwell technical brief, GB200 at 1,200 W (dense); MLPerf GB200-186GB system description",
	},
	// B300 (Blackwell Ultra, HGX B300, 1,100 W): [hgx] / 8, halved where
	// sparse: FP64 1.25 TF, FP32 75, TF32 1,125, BF16 2,250, FP8 4,500,
	// FP4 13,125 (105 PF dense / 8), INT8 125 TOPS; 270 GB ([verda]), 8
	// TB/s (https://glennklockwood.com/garden/processors/B300; [verda]
	// says 7.7).
	"b300": {
		Name: "b300", FP64: 1.25 * tera, FP32: 75 * tera, FP16: 150 * tera, TF32: 1125 * tera, FP16Tensor: 2250 * tera,
		INT8Tensor: 125 * tera, FP8Tensor: 4500 * tera, FP4Tensor: 13125 * tera,
		MemBandwidth: 8000 * giga, Memory: 270 * giga,
		NVLinkGen: 5, NVLinkBandwidth: 50 * giga, NVLinks: 18, NVLinkLatency: 6e-6,
		PCIeGen: 5, PCIeBandwidth: 50 * giga, PCIeLatency: 12e-6, Topology: "nvswitch",
		Source: "NVIDIA HGX B300 specifications (dense: sparse / 2); verda.com GB300 NVL72 architecture (memory)",
	},
	// The Blackwell Ultra GPU of GB300 (1,400 W): [verda]'s GB300 column
	// (dense): FP32 80 TF, TF32 1,250, BF16 2,500, FP8 5,000, FP4 15,000,
	// INT8 165 TOPS, 279 GB, 8 TB/s; the same as [gb300]'s rack / 72
	// (FP4 1,080 PF dense / 72 = 15,000 TF; FP8 720 sparse / 72 / 2 =
	// 5,000). FP64: B300's 1.25 TF (assumed; no GB300 figure found).
	"gb300": {
		Name: "gb300", FP64: 1.25 * tera, FP32: 80 * tera, FP16: 160 * tera, TF32: 1250 * tera, FP16Tensor: 2500 * tera,
		INT8Tensor: 165 * tera, FP8Tensor: 5000 * tera, FP4Tensor: 15000 * tera,
		MemBandwidth: 8000 * giga, Memory: 279 * giga,
		NVLinkGen: 5, NVLinkBandwidth: 50 * giga, NVLinks: 18, NVLinkLatency: 6e-6,
		PCIeGen: 5, PCIeBandwidth: 50 * giga, PCIeLatency: 12e-6, Topology: "nvswitch",
		Source: "GB300 NVL72 specifications, per GPU (dense; verda.com, vendordeep.com copies of NVIDIA's table)",
	},
}

// init adds the Blackwell presets with every preset's defaults (the
// launch overhead and the per-class efficiencies: hardware.go's init).
func init() {
	for k, h := range blackwellPresets {
		h.Launch = defaultLaunch
		h.ComputeEff = defaultComputeEff
		h.MemEff = defaultMemEff
		presets[k] = h
	}
}
