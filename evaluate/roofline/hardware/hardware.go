package hardware

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/placer/placer/graph"
	"github.com/placer/placer/internal/bounded"
)

// Hardware describes one accelerator model: its peak throughputs, memory,
// launch overhead, the efficiencies that turn peaks into attainable rates,
// and its interconnect. Rates are in FLOP/s and bytes/s, times in seconds.
type Hardware struct {
	Name string `json:"name"`

	// Peak dense throughput per arithmetic kind, FLOP/s. Zero means the
	// GPU lacks it and the next slower path is used (see PeakFLOPS).
	FP64       float64 `json:"fp64_flops"`
	FP32       float64 `json:"fp32_flops"`        // CUDA cores
	TF32       float64 `json:"tf32_tensor_flops"` // tensor cores, f32 inputs (when AllowTF32)
	FP16Tensor float64 `json:"fp16_tensor_flops"` // tensor cores, f16 and bf16 inputs
	FP16       float64 `json:"fp16_flops"`        // without tensor cores (half2 on CUDA cores)
	INT8Tensor float64 `json:"int8_tensor_ops"`
	// FP8Tensor and FP4Tensor are the dense FP8 (E4M3/E5M2) and FP4
	// (NVFP4/MXFP4) tensor-core peaks, FLOP/s; 0: none. No graph dtype
	// reaches them: the cluster-scale cost model prices an FP8 plan's
	// GEMMs at FP8Tensor (planner, fp8=); FP4 is held for the
	// precision that will use it.
	FP8Tensor float64 `json:"fp8_tensor_flops,omitempty"`
	FP4Tensor float64 `json:"fp4_tensor_flops,omitempty"`

	MemBandwidth float64 `json:"mem_bandwidth"` // device memory, bytes/s
	Memory       int64   `json:"memory"`        // device memory capacity, bytes
	Launch       float64 `json:"launch_s"`      // fixed per-kernel overhead

	// KernelFloor is the time a near-empty kernel holds the GPU when
	// kernels queue back to back (0: not measured). Launch lumps the
	// host's issue and the GPU's per-kernel time together; with the host
	// modelled on its own (Options.Host, placer eval --host) a kernel
	// costs the GPU this in Launch's place (roofline.Cluster.hostHardware).
	KernelFloor float64 `json:"kernel_floor_s,omitempty"`

	// SerialStep and SerialStepBwd are the least time one serial step of
	// an op with graph.Op.Steps takes, forward and backward (a cuDNN RNN's
	// time step of one layer: a small GEMM and the gates, waiting on the
	// step before): such an op takes at least Steps x this, whatever its
	// FLOPs. Zero: not measured on this GPU, no floor.
	SerialStep    float64 `json:"serial_step_s,omitempty"`
	SerialStepBwd float64 `json:"serial_step_bwd_s,omitempty"`

	// Depthwise and DepthwiseBwd are a depthwise convolution's time per
	// element of its output (forward) or of its input's gradient
	// (backward): [0] + [1] x its kernel taps (graph.Op.DepthwiseTaps),
	// in place of its FLOPs' roofline: such a kernel reaches a few
	// TFLOP/s, neither the tensor cores' rate nor the memory's. Zero: not
	// measured on this GPU, the roofline.
	Depthwise    [2]float64 `json:"depthwise_s,omitempty"`
	DepthwiseBwd [2]float64 `json:"depthwise_bwd_s,omitempty"`
	// DepthwiseMaxTaps is the most kernel taps those rates hold for (the
	// largest kernel they were measured or carried over at): a depthwise
	// convolution of more taps is priced by the roofline. Zero: every one.
	DepthwiseMaxTaps int `json:"depthwise_max_taps,omitempty"`

	// Grouped names the grouped convolutions measured on this GPU (a key
	// of GroupedTables; not depthwise: 1 < channels per group <
	// channels), by precision, direction and forward FLOPs: a grouped
	// convolution op (graph.Op.GroupedFLOPs) of a measured precision and
	// direction takes GroupedTime's interpolation of them in place of its
	// FLOPs' roofline. "": none measured, the roofline. (A name, not the
	// rows: a Hardware stays a comparable value, and a decoded profile
	// cannot write into a preset's rows.)
	Grouped string `json:"grouped_conv,omitempty"`

	// DenseConv names the dense (one-group) convolutions measured on this
	// GPU (a key of DenseTables), by precision, direction and shape: a
	// dense convolution op (graph.Op.DenseConv) of a measured precision
	// and direction takes DenseTime's nearest measured shape in place of
	// its FLOPs' roofline. "": none measured, the roofline.
	DenseConv string `json:"dense_conv,omitempty"`
	// DenseConvEff is the fraction of the peak a dense (one-group)
	// convolution op (graph.Op.DenseConv) that DenseConv does not price
	// reaches, in place of ComputeEff's convolution efficiency: cuDNN's
	// tensor-core convolutions are implicit GEMMs (forward, data and
	// weight gradients alike), the GEMM's mainloop over an operand
	// gathered from the activation, so that a large one reaches about
	// the fraction of the tensor peak a GEMM does. Grouped and depthwise
	// convolutions keep ComputeEff's (not one GEMM). 0: ComputeEff's.
	DenseConvEff float64 `json:"dense_conv_eff,omitempty"`

	// MemEffAttnF32 and MemEffAttnF32Bwd are the rates, FLOP/s, of
	// PyTorch's memory-efficient attention on FP32 inputs, forward
	// (_scaled_dot_product_efficient_attention) and backward: on compute
	// capability 8.0 and up its kernels (xformers' cutlass fmha, built
	// for Sm80 whatever the GPU) multiply FP32 on tensor cores as three
	// TF32 products (OpMultiplyAddFastF32), with the softmax between the
	// two GEMMs on the FP32 cores: neither the FP32 roof nor TF32's.
	// PyTorch picks this kernel for FP32 (flash attention refuses FP32).
	// 0: not measured on this GPU, the matmul roofline.
	MemEffAttnF32    float64 `json:"mem_eff_attn_f32_flops,omitempty"`
	MemEffAttnF32Bwd float64 `json:"mem_eff_attn_f32_bwd_flops,omitempty"`
	// FlashAttn and FlashAttnBwd are the rates, FLOP/s, of PyTorch's
	// flash attention (_scaled_dot_product_flash_attention, FP16/BF16,
	// no mask: what SDPA picks first for them), forward and backward, in
	// the graph's FLOPs (the math path's: 4 x B x H x S_q x S_k x d
	// forward, twice that backward). 0: not measured, the matmul roofline.
	FlashAttn    float64 `json:"flash_attn_flops,omitempty"`
	FlashAttnBwd float64 `json:"flash_attn_bwd_flops,omitempty"`

	// AllowTF32 lets f32 matmuls and convolutions use TF32 tensor cores.
	AllowTF32 bool `json:"allow_tf32"`

	// ComputeEff and MemEff are the attainable fractions of peak compute
	// and memory bandwidth per op class (indexed by graph.Class).
	ComputeEff [graph.NumClasses]float64 `json:"compute_eff"`
	MemEff     [graph.NumClasses]float64 `json:"mem_eff"`

	// ComputeSlowdown is how many times longer an op's FLOPs take than
	// at the rates above, which are a burst's (a rested GPU at its boost
	// clock): the SM clock a GPU holds under a power limit through a
	// step (planner's power.go). It lowers the compute roof only;
	// the memory's clock, and its roof, stay. 0 or 1: none.
	ComputeSlowdown float64 `json:"compute_slowdown,omitempty"`

	// Interconnect between GPUs of one server.
	NVLinkGen       int     `json:"nvlink_gen"`       // 0 = none
	NVLinkBandwidth float64 `json:"nvlink_bandwidth"` // per link, per direction, bytes/s
	NVLinks         int     `json:"nvlinks"`          // links per GPU
	NVLinkLatency   float64 `json:"nvlink_latency_s"` // per transfer
	PCIeGen         int     `json:"pcie_gen"`
	PCIeBandwidth   float64 `json:"pcie_bandwidth"` // effective, per direction, bytes/s
	PCIeLatency     float64 `json:"pcie_latency_s"` // per transfer
	Topology        string  `json:"topology"`       // default topology: nvswitch, hybrid-cube-mesh or pcie

	Source string `json:"source,omitempty"` // where the figures come from
}

const (
	tera = 1e12
	giga = 1e9
	gib  = int64(1) << 30
)

// defaultComputeEff and defaultMemEff are the attainable fractions of peak
// used by every preset until a calibration replaces them (placer
// calibrate). They are assumptions, not measurements: large cuBLAS GEMMs
// reach roughly 70-80% of tensor peak, convolutions somewhat less, and
// streaming kernels roughly 80-90% of HBM bandwidth.
var (
	defaultComputeEff = [graph.NumClasses]float64{
		graph.ClassUnknown: 0.5, graph.ClassMatMul: 0.75, graph.ClassConv: 0.6,
		graph.ClassElementwise: 0.5, graph.ClassReduction: 0.5, graph.ClassDataMovement: 0.5, graph.ClassEmbedding: 0.5,
	}
	defaultMemEff = [graph.NumClasses]float64{
		graph.ClassUnknown: 0.7, graph.ClassMatMul: 0.8, graph.ClassConv: 0.8,
		graph.ClassElementwise: 0.85, graph.ClassReduction: 0.75, graph.ClassDataMovement: 0.8, graph.ClassEmbedding: 0.5,
	}
)

// defaultLaunch is the per-kernel overhead every preset assumes: a CUDA
// kernel launch costs a few microseconds, and Park's TensorFlow placement
// simulator charges ~5.7 us per op (DESIGN.md §3).
const defaultLaunch = 5e-6

var presets = map[string]Hardware{
	// NVIDIA Tesla P100 SXM2 datasheet: 5.3 TF FP64, 10.6 TF FP32, 21.2 TF
	// FP16 (no tensor cores), 732 GB/s HBM2, 16 GB; NVLink 1.0, 4 links of
	// 20 GB/s per direction (160 GB/s bidirectional); DGX-1 (P100) hybrid
	// cube-mesh. PCIe 3.0 x16: 15.75 GB/s theoretical, ~12 GB/s attained.
	"p100": {
		Name: "p100", FP64: 5.3 * tera, FP32: 10.6 * tera, FP16: 21.2 * tera,
		MemBandwidth: 732 * giga, Memory: 16 * gib,
		NVLinkGen: 1, NVLinkBandwidth: 20 * giga, NVLinks: 4, NVLinkLatency: 10e-6,
		PCIeGen: 3, PCIeBandwidth: 12 * giga, PCIeLatency: 20e-6, Topology: "hybrid-cube-mesh",
		Source: "NVIDIA Tesla P100 datasheet (SXM2); DGX-1 system architecture white paper",
	},
	// NVIDIA Tesla V100 SXM2 datasheet: 7.8 TF FP64, 15.7 TF FP32, 125 TF
	// tensor (FP16), 900 GB/s HBM2, 16/32 GB (32 GB here); NVLink 2.0, 6
	// links of 25 GB/s per direction (300 GB/s bidirectional); DGX-1V
	// hybrid cube-mesh with doubled links.
	"v100": {
		Name: "v100", FP64: 7.8 * tera, FP32: 15.7 * tera, FP16: 31.4 * tera, FP16Tensor: 125 * tera,
		MemBandwidth: 900 * giga, Memory: 32 * gib,
		NVLinkGen: 2, NVLinkBandwidth: 25 * giga, NVLinks: 6, NVLinkLatency: 10e-6,
		PCIeGen: 3, PCIeBandwidth: 12 * giga, PCIeLatency: 20e-6, Topology: "hybrid-cube-mesh",
		Source: "NVIDIA Tesla V100 datasheet (SXM2); DGX-1 with V100 white paper",
	},
	// NVIDIA A100 datasheet (SXM4 80 GB): 9.7 TF FP64, 19.5 TF FP32, 156 TF
	// TF32, 312 TF FP16/BF16 tensor, 624 TOPS INT8 (dense), 2039 GB/s HBM2e,
	// 80 GB; NVLink 3.0, 12 links of 25 GB/s per direction (600 GB/s
	// bidirectional) through NVSwitch (DGX A100). PCIe 4.0 x16: ~25 GB/s.
	"a100": {
		Name: "a100", FP64: 9.7 * tera, FP32: 19.5 * tera, FP16: 78 * tera, TF32: 156 * tera, FP16Tensor: 312 * tera, INT8Tensor: 624 * tera,
		MemBandwidth: 2039 * giga, Memory: 80 * gib,
		NVLinkGen: 3, NVLinkBandwidth: 25 * giga, NVLinks: 12, NVLinkLatency: 8e-6,
		PCIeGen: 4, PCIeBandwidth: 25 * giga, PCIeLatency: 15e-6, Topology: "nvswitch",
		Source: "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB); DGX A100 user guide",
	},
	// NVIDIA H100 datasheet (SXM5): 34 TF FP64, 67 TF FP32 (66.9), 494.7 TF
	// TF32, 989.4 TF FP16/BF16 tensor, 1,978.9 TF FP8 tensor (3,958 with
	// sparsity), 1979 TOPS INT8 (dense), 3.35 TB/s
	// HBM3, 80 GB; NVLink 4.0, 18 links of 25 GB/s per direction (900 GB/s
	// bidirectional) through NVSwitch (DGX H100). PCIe 5.0 x16: ~50 GB/s.
	"h100": {
		Name: "h100", FP64: 34 * tera, FP32: 66.9 * tera, FP16: 133.8 * tera, TF32: 494.7 * tera, FP16Tensor: 989.4 * tera, INT8Tensor: 1979 * tera,
		FP8Tensor:    1978.9 * tera,
		MemBandwidth: 3350 * giga, Memory: 80 * gib,
		NVLinkGen: 4, NVLinkBandwidth: 25 * giga, NVLinks: 18, NVLinkLatency: 6e-6,
		PCIeGen: 5, PCIeBandwidth: 50 * giga, PCIeLatency: 12e-6, Topology: "nvswitch",
		Source: "NVIDIA H100 Tensor Core GPU datasheet (SXM5); DGX H100 user guide",
	},
	// NVIDIA H200 datasheet (SXM): the H100's compute (34 TF FP64, 67 TF
	// FP32, 989 TF TF32, 1,979 TF FP16/BF16 and 3,958 TF FP8 tensor with
	// sparsity, half that dense), 4.8 TB/s HBM3e, 141 GB; NVLink 4.0, 900
	// GB/s bidirectional; max TDP up to 700 W (the DGX H200 pod's limit).
	"h200": {
		Name: "h200", FP64: 34 * tera, FP32: 66.9 * tera, FP16: 133.8 * tera, TF32: 494.7 * tera, FP16Tensor: 989.4 * tera, INT8Tensor: 1979 * tera,
		FP8Tensor:    1978.9 * tera,
		MemBandwidth: 4800 * giga, Memory: 141 * giga,
		NVLinkGen: 4, NVLinkBandwidth: 25 * giga, NVLinks: 18, NVLinkLatency: 6e-6,
		PCIeGen: 5, PCIeBandwidth: 50 * giga, PCIeLatency: 12e-6, Topology: "nvswitch",
		Source: "NVIDIA H200 Tensor Core GPU datasheet (SXM)",
	},
}

func init() {
	for k, h := range presets {
		h.Launch = defaultLaunch
		h.ComputeEff = defaultComputeEff
		h.MemEff = defaultMemEff
		presets[k] = h
	}
	h := presets["h100"]
	h.SerialStep, h.SerialStepBwd = h100RNNStep, h100RNNStepBwd
	h.Depthwise, h.DepthwiseBwd = h100Depthwise, h100DepthwiseBwd
	h.Grouped = h100GroupedName
	h.DenseConv = h100DenseName
	h.KernelFloor = h100KernelFloor
	h.MemEffAttnF32, h.MemEffAttnF32Bwd = hopperMemEffAttnF32, hopperMemEffAttnF32Bwd
	h.FlashAttn, h.FlashAttnBwd = hopperFlashAttn, hopperFlashAttnBwd
	presets["h100"] = h
	h = presets["h200"]
	h.KernelFloor = h200KernelFloor
	h.MemEffAttnF32, h.MemEffAttnF32Bwd = hopperMemEffAttnF32, hopperMemEffAttnF32Bwd
	h.FlashAttn, h.FlashAttnBwd = hopperFlashAttn, hopperFlashAttnBwd
	presets["h200"] = h
	presets["rtx3090"] = rtx3090Kernels(presets["rtx3090"], presets["h100"])
	for _, k := range []string{"a100", "v100"} { // a100-40gb: pcie.go's init
		presets[k] = depthwiseCarried(presets[k], presets["h100"], fp32LanesPerSM64)
	}
}

// FP32 lanes of one SM: 64 on Volta (GV100) and Ampere's GA100 (V100,
// A100), 128 on Hopper (GH100) and Ampere's GA102 (NVIDIA's Volta, A100,
// GA102 and H100 whitepapers); each of these SMs issues four warp
// instructions a clock (four processing blocks, one warp scheduler each).
const (
	fp32LanesPerSM64  = 64
	fp32LanesPerSM128 = 128
)

// depthwiseCarried is preset h (an SM of lanes FP32 lanes) with the
// H100's measured depthwise convolution rates (h100Depthwise,
// h100DepthwiseBwd: PyTorch's own CudaDepthwise2d kernels, which run
// every depthwise convolution cuDNN does not, convlayout.CuDNNDepthwise)
// carried over by the ratio of the two GPUs' instruction issue rates,
// SMs x clock, which is each one's FP32 rate over its SM's FP32 lanes:
// the H100 timed those kernels at 1.5 to 3 TFLOP/s, 2-4.5% of its FP32
// peak, so that its SMs' issue of their loads, index arithmetic and
// FMAs bounds them, not the FP32 lanes (rtx3090Kernels' ratio of FP32
// rates is this ratio there: both SMs have 128 lanes). A100: (66.9 / 128)
// / (19.5 / 64) = 1.71538; V100: (66.9 / 128) / (15.7 / 64) = 2.13057.
// Up to 5x5 kernels, the largest timed. The memory's roofline still
// bounds each one from below (Model's kernel time).
func depthwiseCarried(h, h100 Hardware, lanes float64) Hardware {
	r := (h100.FP32 / fp32LanesPerSM128) / (h.FP32 / lanes)
	h.Depthwise = [2]float64{h100Depthwise[0] * r, h100Depthwise[1] * r}
	h.DepthwiseBwd = [2]float64{h100DepthwiseBwd[0] * r, h100DepthwiseBwd[1] * r}
	h.DepthwiseMaxTaps = rtx3090DepthwiseMaxTaps
	return h
}

// hopperMemEffAttnF32 and hopperMemEffAttnF32Bwd are FP32 memory-efficient
// attention's rates on the H200, which the H100 shares (the same SMs and
// clocks; the kernels are compute-bound): the lent H200's profiled GPT-2
// small step (measurements/2026-11-26-h200-b/graphs/gpt2_small-b8-fp32.json,
// 8 x 12 heads x 1,024 x 64, FP32, TF32 matmuls off), FLOPs over the
// kernel's time: the one forward matched, 26.69 GFLOP in 1.140 ms, and the
// median of the twelve backward ones, 51.95 GFLOP in 2.29-2.31 ms
// (22.44-22.71 TFLOP/s): about 0.35 and 0.34 of the FP32 peak that placer
// priced them at 0.75 of (TestMemEffAttnF32Measured).
const (
	hopperMemEffAttnF32    = 23.411e12
	hopperMemEffAttnF32Bwd = 22.641e12
)

// hopperFlashAttn and hopperFlashAttnBwd are BF16 flash attention's rates
// on the H100, carried to the H200 (the same SMs and clocks): the lent
// H100's longattn section (measurements/2026-11-27-h100/longattn.jsonl,
// ring.full.c2048.flash: 32 heads x 2,048 x 128, no mask, not causal,
// the shortest such row), forward 68.72 GFLOP in 0.2075 ms (331.20
// TFLOP/s) and backward 0.6672 ms: kernelbench counts the backward's
// FLOPs as 2.5 x the forward's (the scores recomputed), the graph as
// the math path's 2 x, so 257.48 x 2/2.5 = 205.98 TFLOP/s in the graph's
// count (TestFlashAttnMeasured). A causal or shorter, narrower one is
// slower (the causal head-dim-64 sweep at 1,024: 175.5 and 129.6 in
// kernelbench's count, kb-attention.jsonl): not priced here.
const (
	hopperFlashAttn    = 331.197e12
	hopperFlashAttnBwd = 205.984e12
)

// h100KernelFloor and h200KernelFloor are a near-empty kernel's time on
// the GPU, queued back to back behind a busy GPU (kernelbench host
// section, issue.add_, issue.add and issue.mul_autograd: CUDA events
// around 500 kernels over 1,024 floats): on two H100 machines
// (measurements/2026-11-26-h100-c/host.jsonl, 2026-11-26-h100-d/
// host-moehost.jsonl) 2.091-2.096 us, their mean 2.093; on the H200
// (2026-11-26-h200-b/host.jsonl, host-after.jsonl) 1.714-1.823, their
// mean 1.773 (TestKernelFloorMeasured).
const (
	h100KernelFloor = 2.093e-6
	h200KernelFloor = 1.773e-6
)

// h100Depthwise and h100DepthwiseBwd are an H100's depthwise convolution
// per element, seconds [base, per tap]: the line through the medians of
// the 3x3 and 5x5 depthwise convolutions the lent H100 of 2026-11-26
// timed (measurements/2026-11-26-h100-c/shapes.jsonl, kind conv, groups =
// channels: MobileNetV3's and EfficientNet's layers at batch 32, FP32 and
// BF16 alike), forward per output element 10.268 ps at 9 taps (9.7-11.5)
// and 17.746 at 25 (16.5-19.8), backward per element of the input's
// gradient 37.227 ps at 9 (21.9-41.0; the stride-2 layer the least) and
// 72.791 at 25 (59.0-137.7; the 7x7 map the most): within about 15%
// forward and a factor of two backward (TestDepthwiseMeasured).
var (
	h100Depthwise    = [2]float64{6.0616e-12, 0.46738e-12}
	h100DepthwiseBwd = [2]float64{17.2222e-12, 2.22275e-12}
)

// h100RNNStep and h100RNNStepBwd are an H100's cuDNN LSTM time step of one
// layer, forward and backward: the mean over the three LSTMs the lent
// H100 of 2026-11-26 timed (measurements/2026-11-26-h100-c/shapes.jsonl,
// kind lstm: sequence 35 x batch 64 x width 1,024 x 2 layers, 64 x 32 x
// 512 x 2, 128 x 64 x 1,024 x 1; FP32 on TF32 tensor cores) of each one's
// time over its sequence x layers steps: forward 24.67, 25.95 and 20.08
// us, backward 42.31, 23.98 and 38.87 us. The fourth LSTM of that file
// (35 x 20 x 650 x 2, the LSTM language model's own layer in
// TestFidelityH100) is left out, so that the fidelity test checks the
// floor on an LSTM it was not taken from (TestSerialStepMeasured).
const (
	h100RNNStep    = 23.57e-6
	h100RNNStepBwd = 35.05e-6
)

// DefaultHardware is the preset used when none is named, but for a graph
// file: the V100 the papers placer reproduces modelled (GO's fusion and
// scheduling results used a roofline model of V100s), so that their
// built-in workloads and tables keep their setting.
const DefaultHardware = "v100"

// GraphFileHardware is the preset a graph file (--graph: a user's own
// graph, a PyTorch export) is costed on when none is named: the current
// GPU, what a user's graph runs on today, not the papers' V100.
const GraphFileHardware = "h100"

// Presets lists the names of the hardware presets, sorted.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for k := range presets {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Preset returns the named hardware preset ("v100", "h100", ...).
func Preset(name string) (Hardware, error) {
	h, ok := presets[strings.ToLower(name)]
	if !ok {
		return Hardware{}, fmt.Errorf("unknown hardware %q (presets: %s; or a profile file)", name, strings.Join(Presets(), ", "))
	}
	return h, nil
}

// LoadHardware returns a preset by name, or reads a hardware profile file
// (JSON, as written by WriteHardware or placer calibrate) when nameOrFile
// names an existing file or ends in ".json".
func LoadHardware(nameOrFile string) (Hardware, error) {
	if _, err := os.Stat(nameOrFile); err != nil && !strings.HasSuffix(nameOrFile, ".json") {
		return Preset(nameOrFile)
	}
	data, err := bounded.ReadFile(nameOrFile, bounded.Config, "a hardware profile")
	if err != nil {
		return Hardware{}, fmt.Errorf("hardware: %w", err)
	}
	h, err := DecodeHardware(data)
	if err != nil {
		return Hardware{}, fmt.Errorf("%s: %w", nameOrFile, err)
	}
	return h, nil
}

// DecodeHardware reads a hardware profile. Fields left out keep the value
// of the preset named by "base" (default v100), so a profile may override
// only what it measured.
func DecodeHardware(data []byte) (Hardware, error) {
	var probe struct {
		Base string `json:"base"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return Hardware{}, graph.JSONError("hardware profile", data, err)
	}
	base := probe.Base
	if base == "" {
		base = DefaultHardware
	}
	h, err := Preset(base)
	if err != nil {
		return Hardware{}, fmt.Errorf("hardware profile: base: %w", err)
	}
	var wrapper struct {
		Base string `json:"base"`
		*Hardware
	}
	wrapper.Hardware = &h
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&wrapper); err != nil {
		return Hardware{}, graph.JSONError("hardware profile", data, err)
	}
	if err := graph.CheckEnd("hardware profile", data, dec); err != nil {
		return Hardware{}, err
	}
	return h, h.Validate()
}

// WriteHardware writes h as a profile file.
func WriteHardware(w io.Writer, h Hardware) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(h)
}

// The ranges of a hardware profile's figures (docs/inputs.md): rates
// between MinRate and MaxRate (a zero optional rate means "none"),
// latencies and the launch overhead at most MaxLatency, efficiencies in
// [MinEff, 1], memory at most MaxMemory, 1 to 64 NVLinks when NVLink is
// present. Within them no time the model computes can reach Inf.
const (
	MinRate    = 1e3  // FLOP/s or bytes/s
	MaxRate    = 1e18 // 1 EFLOP/s, 1 EB/s
	MaxLatency = 1.0  // seconds
	MinEff     = 1e-3
	MaxMemory  = int64(1) << 50
)

// Validate checks every figure against its range (the constants above).
func (h *Hardware) Validate() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("hardware %q: %s = %v: want %s", h.Name, field, v, want)
	}
	rate := func(field string, v float64, required bool) error {
		if !required && v == 0 {
			return nil
		}
		if !(v >= MinRate && v <= MaxRate) {
			return bad(field, v, fmt.Sprintf("a rate from %g to %g", MinRate, MaxRate))
		}
		return nil
	}
	for _, f := range []struct {
		name     string
		v        float64
		required bool
	}{
		{"fp32_flops", h.FP32, true}, {"mem_bandwidth", h.MemBandwidth, true}, {"pcie_bandwidth", h.PCIeBandwidth, true},
		{"fp64_flops", h.FP64, false}, {"tf32_tensor_flops", h.TF32, false}, {"fp16_tensor_flops", h.FP16Tensor, false},
		{"fp16_flops", h.FP16, false}, {"int8_tensor_ops", h.INT8Tensor, false},
		{"fp8_tensor_flops", h.FP8Tensor, false}, {"fp4_tensor_flops", h.FP4Tensor, false},
		{"mem_eff_attn_f32_flops", h.MemEffAttnF32, false}, {"mem_eff_attn_f32_bwd_flops", h.MemEffAttnF32Bwd, false},
		{"flash_attn_flops", h.FlashAttn, false}, {"flash_attn_bwd_flops", h.FlashAttnBwd, false}, {"nvlink_bandwidth", h.NVLinkBandwidth, h.NVLinkGen > 0},
	} {
		if err := rate(f.name, f.v, f.required); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"launch_s", h.Launch}, {"nvlink_latency_s", h.NVLinkLatency}, {"pcie_latency_s", h.PCIeLatency},
		{"serial_step_s", h.SerialStep}, {"serial_step_bwd_s", h.SerialStepBwd}, {"kernel_floor_s", h.KernelFloor},
		{"depthwise_s[0]", h.Depthwise[0]}, {"depthwise_s[1]", h.Depthwise[1]},
		{"depthwise_bwd_s[0]", h.DepthwiseBwd[0]}, {"depthwise_bwd_s[1]", h.DepthwiseBwd[1]}} {
		if !(f.v >= 0 && f.v <= MaxLatency) {
			return bad(f.name, f.v, fmt.Sprintf("a time from 0 to %g s", MaxLatency))
		}
	}
	if h.DepthwiseMaxTaps < 0 {
		return bad("depthwise_max_taps", h.DepthwiseMaxTaps, "0 (every kernel) or more taps")
	}
	if _, ok := GroupedTables[h.Grouped]; h.Grouped != "" && !ok {
		return bad("grouped_conv", fmt.Sprintf("%q", h.Grouped), fmt.Sprintf("a measured table (%s) or none", tableNames(GroupedTables)))
	}
	if _, ok := DenseTables[h.DenseConv]; h.DenseConv != "" && !ok {
		return bad("dense_conv", fmt.Sprintf("%q", h.DenseConv), fmt.Sprintf("a measured table (%s) or none", tableNames(DenseTables)))
	}
	if h.Memory < 1 || h.Memory > MaxMemory {
		return bad("memory", h.Memory, fmt.Sprintf("1 to %d bytes", MaxMemory))
	}
	if h.NVLinkGen < 0 || h.NVLinkGen > 16 || h.PCIeGen < 0 || h.PCIeGen > 16 {
		return bad("nvlink_gen/pcie_gen", fmt.Sprintf("%d/%d", h.NVLinkGen, h.PCIeGen), "generations from 0 to 16")
	}
	if h.NVLinkGen > 0 && (h.NVLinks < 1 || h.NVLinks > 64) {
		return bad("nvlinks", h.NVLinks, "1 to 64 links per GPU (with nvlink_gen > 0)")
	}
	if h.NVLinks < 0 || h.NVLinks > 64 {
		return bad("nvlinks", h.NVLinks, "0 to 64")
	}
	for c := 0; c < graph.NumClasses; c++ {
		for _, f := range []struct {
			name string
			v    float64
		}{{"compute_eff", h.ComputeEff[c]}, {"mem_eff", h.MemEff[c]}} {
			if !(f.v >= MinEff && f.v <= 1) {
				return bad(fmt.Sprintf("%s[%s]", f.name, graph.Class(c)), f.v, fmt.Sprintf("an efficiency from %g to 1", MinEff))
			}
		}
	}
	if e := h.DenseConvEff; e != 0 && !(e >= MinEff && e <= 1) {
		return bad("dense_conv_eff", e, fmt.Sprintf("0 (compute_eff's) or an efficiency from %g to 1", MinEff))
	}
	return nil
}

// PeakFLOPS is the peak rate for an op of class c and dtype t: tensor cores
// for matmuls and convolutions in f16/bf16 (and f32 with AllowTF32) where
// the GPU has them, CUDA cores otherwise.
func (h *Hardware) PeakFLOPS(c graph.Class, t graph.DType) float64 {
	return h.Peak(c, t, TF32{MatMul: h.AllowTF32, Conv: h.AllowTF32})
}

// Peak is PeakFLOPS with tf saying which f32 ops run on TF32 tensor cores
// (in place of AllowTF32).
func (h *Hardware) Peak(c graph.Class, t graph.DType, tf TF32) float64 {
	tensor := c == graph.ClassMatMul || c == graph.ClassConv
	switch t {
	case graph.F64:
		if h.FP64 > 0 {
			return h.FP64
		}
	case graph.F16, graph.BF16:
		if tensor && h.FP16Tensor > 0 {
			return h.FP16Tensor
		}
		if h.FP16 > 0 {
			return h.FP16
		}
	case graph.F32:
		if tensor && tf.For(c) && h.TF32 > 0 {
			return h.TF32
		}
	case graph.I8:
		if tensor && h.INT8Tensor > 0 {
			return h.INT8Tensor
		}
	}
	return h.FP32
}

// TF32 says which f32 ops run on TF32 tensor cores, where the GPU has
// them: matmuls (PyTorch's torch.backends.cuda.matmul.allow_tf32, off by
// default) and convolutions (torch.backends.cudnn.allow_tf32, on by
// default).
type TF32 struct{ MatMul, Conv bool }

// For says whether f32 ops of class c run on TF32 tensor cores.
func (tf TF32) For(c graph.Class) bool {
	switch c {
	case graph.ClassMatMul:
		return tf.MatMul
	case graph.ClassConv:
		return tf.Conv
	}
	return false
}

// ParseTF32 reads the --tf32 flag's values: "graph" or "" (nil: the
// graph's recorded settings, else the hardware's AllowTF32), "on" (both),
// "off" (neither), "matmul" or "conv" (that class only).
func ParseTF32(s string) (*TF32, error) {
	switch strings.ToLower(s) {
	case "", "graph":
		return nil, nil
	case "on":
		return &TF32{MatMul: true, Conv: true}, nil
	case "off":
		return &TF32{}, nil
	case "matmul":
		return &TF32{MatMul: true}, nil
	case "conv":
		return &TF32{Conv: true}, nil
	}
	return nil, fmt.Errorf("tf32 %q: want graph, on, off, matmul or conv", s)
}

// ResolveTF32 is which f32 ops of graph g run on TF32 tensor cores of h:
// override when set (the user's --tf32), else the graph's recorded
// settings (graph.Execution: tf32_matmul for matmuls, tf32_cudnn for
// convolutions), else h.AllowTF32 for both (a preset's false, or what a
// calibrated profile measured).
func ResolveTF32(g *graph.Graph, h *Hardware, override *TF32) TF32 {
	if override != nil {
		return *override
	}
	if g != nil {
		if e := g.Execution(); e != nil {
			return TF32{MatMul: e.TF32MatMul, Conv: e.TF32CuDNN}
		}
	}
	return TF32{MatMul: h.AllowTF32, Conv: h.AllowTF32}
}

// tableNames lists the names of a preset's measured tables, sorted
// (for the error naming what a preset may name).
func tableNames[T any](tables map[string][]T) string {
	return strings.Join(slices.Sorted(maps.Keys(tables)), ", ")
}
