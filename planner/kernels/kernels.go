package kernels

import (
	"fmt"
	"math"
	"strings"
)

// Node is what a node's kernels and collectives reach inside a
// training step beyond the roofline's per-class efficiencies
// (roofline.Hardware.ComputeEff): fused attention's own rate, the SMs an
// overlapped collective takes from the GEMMs beside it, and the bus
// bandwidth NCCL reaches on the node's links and NICs. Each figure is a
// published measurement of the hardware (the pod preset names its
// source), none is fitted to a table placer is checked against. The zero
// value changes nothing: attention at the matmul class's efficiency,
// overlap for free, collectives at the links' line rate.
type Node struct {
	// Provenance says where the figures come from, as eval prints it
	// beside a plan priced without a profile: measured on a GPU,
	// carried from another, or modelled from published benchmarks.
	Provenance string

	// GEMM is the fraction of the BF16 tensor peak the node's GEMMs
	// reach at the shapes of a transformer's shards (the matmul class's
	// efficiency in the pod's hardware: the block's GEMMs and the output
	// layer's). 0: the hardware preset's.
	GEMM float64

	// Attention are the fused attention kernels measured on the node's
	// GPU, timed by shape (Attention), the one its runs use first
	// (Transformer Engine's on H100: cuDNN's); the others check blocks
	// measured with them (published.MeasuredLayer.Attention). None: fused
	// attention at the matmul class's efficiency.
	Attention []*Attention

	// ExpRate is the GPU's exponentials a second (MUFU.EX2 over its SMs:
	// ExpRate, sfu.go). A measured attention kernel's rates include its
	// exponentials; a modelled one (BlackwellAttention) is priced with
	// this. 0: not stated.
	ExpRate float64

	// SMs is the GPU's streaming multiprocessors; OverlapSMs how many of
	// them a tensor-parallel collective overlapped with a GEMM takes
	// (tpoverlap=on: Transformer Engine's userbuffers), so that the GEMM
	// runs on the others. 0: none taken.
	SMs, OverlapSMs int

	// CTAs and CTAsAcross are how many thread blocks (one a channel,
	// each holding an SM) NCCL's ring kernels run with among a node's
	// GPUs and across nodes: what a data-parallel, FSDP or expert
	// collective takes from the compute beside it, with its HBM traffic
	// (contention.go). 0: OverlapSlowdown instead.
	CTAs, CTAsAcross int

	// OverlapSlowdown is how much slower compute runs while a
	// data-parallel collective (NCCL's kernels) runs beside it, as a
	// fraction (0.189: 18.9% slower), on a pod without CTAs. 0: overlap
	// is free.
	OverlapSlowdown float64
	// Serial: communication runs on the same cores as compute (gloo on
	// a CPU host), so none overlaps it: what beside a compute window is
	// exposed whole.
	Serial bool

	// IntraBus is the bus bandwidth of a ring all-gather or
	// reduce-scatter among a node's GPUs, bytes/s per GPU (nccl-tests'
	// busbw). 0: the GPU's NVLinks at their line rate.
	IntraBus float64

	// NICEff is the fraction of a NIC's line rate a collective across
	// nodes reaches. 0: 1.
	NICEff float64

	// MeshLink, where set, is the bus bandwidth of one GPU-to-GPU link
	// of a node whose GPUs are wired each to each with no switch (AMD's
	// Infinity Fabric: 7 links a GPU on the 8-GPU platform): a
	// collective among n of a node's GPUs runs on the n-1 links between
	// each and the others, (n-1) x MeshLink (at most IntraBus), a send
	// between two on one. 0: a switch (NVSwitch), IntraBus whatever the
	// group.
	MeshLink float64

	// ROCm says the node runs AMD's software (ROCm: hipBLASLt, RCCL,
	// ROCm's Transformer Engine) in place of NVIDIA's: NVIDIA's own
	// recipes (fp4=nvfp4, fp8=blockwise) are refused on it.
	ROCm bool

	// UnfusedAttention says the core attention runs as Megatron-LM did
	// before fused attention (Korthikanti et al., 2022): Q K^T as a
	// batched GEMM writing every score of the S x S matrix (the causal
	// mask applied afterwards), a fused scale-mask-softmax, dropout with
	// its mask, and a second batched GEMM over the dropped
	// probabilities; the scores' softmax output, dropout mask and
	// dropout output stay allocated for the backward (5 a s / h bytes
	// per s b h, their Equation 5) unless recomputed. false: one fused
	// (flash) kernel each way over the causal half.
	UnfusedAttention bool

	// FP8Peak is the GPU's dense FP8 tensor-core peak, FLOP/s (0: no FP8
	// tensor cores: fp8= is refused).
	FP8Peak float64

	// FP8Fwd, FP8Bwd and FP8Block are how many times faster an FP8 GEMM
	// runs than the BF16 GEMM of the same shape on this GPU (so that the
	// BF16 GEMMs' efficiency, GEMM, carries over): with per-tensor
	// scaling (fp8=current and fp8=delayed) forward, where Transformer
	// Engine lets cuBLAS accumulate fast, and backward (data and weight
	// gradients), where it promotes the partial sums to FP32 (its
	// split accumulator); with blockwise scaling (fp8=blockwise: 1x128
	// activations, 128x128 weights, promoted every GEMM), each GEMM.
	// The ratio measured at the forward's shape stands for the backward
	// GEMMs' orientations too. 0: FP8Peak over the BF16 tensor peak (an
	// FP8 GEMM at the BF16 GEMMs' fraction of its own peak).
	FP8Fwd, FP8Bwd, FP8Block float64

	// MXFP8Fwd, MXFP8Bwd, NVFP4Fwd and NVFP4Bwd are how many times
	// faster a block-scaled GEMM (fp8=mxfp8, fp4=nvfp4) runs than the
	// BF16 GEMM of the same shape, forward and backward (data and weight
	// gradients). 0: the FP8 peak (MXFP8) or the FP4 peak (NVFP4) over
	// the BF16 peak.
	MXFP8Fwd, MXFP8Bwd, NVFP4Fwd, NVFP4Bwd float64

	// GroupedGEMM is how fast a grouped GEMM over an MoE layer's local
	// experts runs against one dense GEMM of the same FLOPs when its
	// tiles fill the GPU's SMs in whole waves (GroupedEff adds what
	// partial waves and ragged tiles lose, from the tile shapes of
	// PyTorch's grouped GEMM on sm90). 0: the experts' GEMMs as one
	// dense GEMM.
	GroupedGEMM float64

	// Host is the CPU thread that issues the kernels (Host): zero, a
	// host that keeps ahead of its GPU.
	Host Host

	// Held is what the GPU's SM clock does under held load (power.go):
	// with the pod's power limit it prices compute at the clock held
	// under it. nil: no held-load measurement, the kernels at their
	// burst rates whatever the limit.
	Held *HeldClock
}

// WithAttention is k with the attention kernel of backend first (the one
// a layer is costed with) and its attention fused (UnfusedAttention off:
// the software the option names runs that kernel); "" and "any" leave k
// as it is; a backend k has not measured is an error naming those it
// has. "unfused" is the attention as separate kernels whatever the GPU
// has measured (UnfusedAttention on): the software runs no fused
// attention (NVIDIA's MLPerf BERT without --unpad_fmha or --pad_fmha:
// FastUnpadBertSelfAttention's bmm1, masked softmax, dropout and bmm2).
func (k Node) WithAttention(backend string) (Node, error) {
	if backend == "unfused" {
		k.UnfusedAttention = true
		return k, nil
	}
	if backend == "" || backend == "any" || len(k.Attention) == 0 {
		return k, nil
	}
	var names []string
	for i, a := range k.Attention {
		if a.Backend == backend {
			k.Attention = append([]*Attention{a}, append(append([]*Attention(nil), k.Attention[:i]...), k.Attention[i+1:]...)...)
			if k.UnfusedAttention && a.Provenance != "" {
				k.Provenance = a.Provenance
			}
			k.UnfusedAttention = false
			return k, nil
		}
		names = append(names, a.Backend)
	}
	return k, fmt.Errorf("attention %q: not measured on this GPU (measured: %s)", backend, strings.Join(names, ", "))
}

// FP8Speedups is how many times faster FP8 GEMMs run than BF16 ones,
// forward and backward, on a GPU of BF16 tensor peak bf16Peak: with
// blockwise scales (fp8=blockwise) or per-tensor ones (Node.FP8Fwd,
// FP8Bwd, FP8Block; their zero value the peaks' ratio).
func (k Node) FP8Speedups(blockwise bool, bf16Peak float64) (fwd, bwd float64) {
	peaks := k.FP8Peak / bf16Peak
	or := func(x float64) float64 {
		if x > 0 {
			return x
		}
		return peaks
	}
	if blockwise {
		return or(k.FP8Block), or(k.FP8Block)
	}
	return or(k.FP8Fwd), or(k.FP8Bwd)
}

// BlockScaledSpeedups is how many times faster block-scaled GEMMs run
// than BF16 ones, forward and backward, on a GPU of BF16, FP8 and FP4
// tensor peaks bf16Peak, FP8Peak and fp4Peak: NVFP4's (fp4) or MXFP8's
// (Node.NVFP4Fwd, NVFP4Bwd, MXFP8Fwd, MXFP8Bwd; their zero value the
// peaks' ratio).
func (k Node) BlockScaledSpeedups(fp4 bool, bf16Peak, fp4Peak float64) (fwd, bwd float64) {
	f, b, peak := k.MXFP8Fwd, k.MXFP8Bwd, k.FP8Peak
	if fp4 {
		f, b, peak = k.NVFP4Fwd, k.NVFP4Bwd, fp4Peak
	}
	if f <= 0 || b <= 0 {
		return peak / bf16Peak, peak / bf16Peak
	}
	return f, b
}

// H100 are an H100 SXM's (DGX H100), from measurements:
//   - GEMMs: 0.756 of the BF16 peak (748 TFLOP/s), the efficiency that
//     makes placer's own nine blocks (tools/measure/layerbench: each Megatron
//     H100 row's tensor-parallel shard, plain PyTorch BF16, micro-batch
//     1, sequence 4,096) measured on an H100 SXM with cuDNN's attention
//     (measurements/2026-11-26-h100-b/layerbench-cudnn.jsonl) closest to
//     placer's prediction of them, every other kernel as below (published.FitGEMM;
//     `placer report layers --measured FILE` prints the fit and
//     TestH100GEMMMeasured recomputes it): the nine within 4.6%. The same
//     blocks with torch's flash kernel, each costed with its own
//     attention kernel, fit 0.758; the BF16 GEMM microbenchmark's median
//     at the rows' shard shapes is 0.771. It was 0.683 while attention was
//     costed at one benchmark's rate (below): the blocks' slower
//     attention at a shard's few heads was taken for slower GEMMs. The
//     blocks of ../shared/data/h100/layers-2026-11-25.jsonl (layer.py,
//     timed with the host's launches inside the window) fit 0.699;
//   - attention: cuDNN's fused attention (what Transformer Engine runs
//     on sm90 for Megatron-Core, and what torch 2.11's SDPA picks there
//     by default) timed by shape, and torch's flash kernel beside it
//     (what torchtitan's SDPA ran in December 2024: published/sweeps_torchtitan.go)
//     for the stacks and blocks measured with it: t = F/R(d) + Beta E +
//     Tail L + T0 (AttentionRate), fitted to the causal and full BF16
//     calls measured on two H100 SXMs, forward and backward, 41 cases
//     with cuDNN and 40 with flash (FitAttention,
//     TestH100AttentionMeasured): measurements/2026-11-26-h100-b/
//     kb-attention.jsonl (kernelbench's attention section, torch 2.11
//     with cuDNN 9.19: the nine Megatron rows' shards, Llama 3
//     8B/70B/405B with their grouped keys, DeepSeek-V3's latent
//     attention at head dimension 192/128, 16 heads by 1K-16K tokens at
//     head dimensions 64, 128 and 256) and
//     measurements/2026-11-27-h100/longattn.jsonl (its longattn section:
//     Llama 3 8B's 32 heads causal at 32K, 64K and 128K tokens, and a
//     context-parallel ring's blocks of 2K to 32K tokens a chunk, causal
//     diagonal and full). cuDNN within 2.9% on average forward (15.7% at
//     worst: 128K tokens, the fit 13% fast there; 64K and 32K 3-5%) and
//     2.5% backward (11.2%); flash 3.9% (14.7%: 64K) and 2.3% (12.2%:
//     Llama 3 70B's shard, two KV heads repeated to sixteen). Its rate at
//     head dimension 128 is 663 TFLOP/s forward and 567 backward with
//     cuDNN, 356 and 335 with flash; a Megatron row's shard (7 to 18
//     heads of 4,096 tokens) reaches far less: Beta, Tail and T0 are what
//     a small call does not amortise. Tail is a causal call's last row
//     of query tiles, which meets every key: without it (fitted to the
//     causal cases of kb-attention.jsonl alone) the full blocks of a
//     ring were predicted up to 25% (cuDNN) and 47% (flash) slow at 2K a
//     chunk and cuDNN's 128K case 13% fast, forward. It replaces the
//     FlashAttention-3 paper's 518 and 499 TFLOP/s at one benchmark
//     shape (Shah et al., 2024), taken for every shape before;
//   - 132 SMs (the H100 SXM5 datasheet); Transformer Engine's userbuffers
//     (--tp-comm-overlap) take num_sm = 16 by default (TE v1.8,
//     module/base.py);
//   - NCCL's ring collectives run 24 CTAs among a node's 8 GPUs and 16
//     across nodes, each an SM the compute beside them loses for the
//     collective's time (contention.go). Within a node, NCCL 2.30.7's
//     topology search (src/graph/search.cc, ncclTopoCompute) finds 6
//     rings at 60 GB/s on sm90 (sm90SpeedArrayIntra's first speed over
//     18 NVLinks of SM90_NVLINK_BW 20.6 GB/s: 370.8), ncclTopoDupChannels
//     doubles them to 12 (bwIntra 60 >= 50) and ncclTopoPostset
//     (src/graph/connect.cc) doubles them again: 24, the 24 blocks an
//     ncclAllGather launched beside a GEMM on an H100 in an Nsight
//     trace (NVIDIA developer forums, "Compute-communication overlap
//     causes severe GEMM performance degradation because of tail
//     effect", 2025). Across nodes an H100 cluster's NCCL log prints 16
//     ring channels over 3 nodes of 8 (NVIDIA/nccl#1453). It replaces
//     the 18.9% average slowdown of compute beside a collective measured
//     on A100, H100, MI250 and MI210 (arXiv 2507.03114), which the
//     Blackwell pods still take;
//   - NCCL ring all-gather and reduce-scatter among 8 GPUs on NVLink 4:
//     361.4 and 362.9 GB/s bus bandwidth (ml-engineering, network/README:
//     nccl-tests, 16 GiB);
//   - 46-48 GB/s per 400 Gb/s NDR NIC (an NCCL maintainer,
//     NVIDIA/nccl-tests#290): 47 of 50;
//   - FP8: 1,978.9 TFLOP/s dense (the H100 SXM5 datasheet: 3,958
//     TFLOP/s with sparsity, twice its dense rate); FP8 GEMMs 1.850x as
//     fast as BF16 forward and 1.766x backward with per-tensor scales,
//     1.592x with blockwise scales: the medians, over the 36 GEMMs of
//     the nine Megatron rows' shards (forward shapes), of the BF16 over
//     the FP8 time at the same shape, measured on one H100 SXM
//     (measurements/2026-11-26-h100/kernelbench.jsonl: torch 2.11's
//     _scaled_mm on cuBLAS 13, e4m3 both sides; tensorwise scales with
//     fast accumulation for the forward, without for the backward, as
//     Transformer Engine's recipes set them: fp8_gemm_fprop
//     use_split_accumulator=False, dgrad and wgrad True, in
//     transformer_engine/common/recipe/__init__.py, the same as
//     module/base.py's _2X_ACC_FPROP/DGRAD/WGRAD for delayed scaling;
//     blockwise 1x128 by 128x128, promoted as Float8BlockScaling
//     requires). TestH100FP8Measured recomputes them. A ratio, not a
//     fraction of the FP8 peak: measured in pairs at the same shapes it
//     keeps the block-fitted BF16 efficiency (0.756, the
//     microbenchmark's median 0.771) for FP8 GEMMs too. Per shape the
//     forward ratio ranges 1.63-2.16, the backward's 1.55-2.04, the
//     blockwise 1.45-1.79;
//   - grouped expert GEMMs: 0.935 of a dense GEMM of the same FLOPs in
//     whole waves of tiles (GroupedGEMM, GroupedEff): the median over
//     five MoE presets' local experts of torch._grouped_mm's BF16 time
//     against one cuBLAS GEMM of the same FLOPs, each divided by its
//     tiles' use of the 132 SMs (same file; TestH100GroupedMeasured).
//     torch's CUTLASS kernel stands for Transformer Engine's grouped
//     GEMM (Megatron-Core's --moe-grouped-gemm), an assumption; FP8
//     expert GEMMs take the dense GEMMs' FP8 speedup: torch's
//     _scaled_grouped_mm (rowwise) was 1.34-1.37x the BF16 grouped GEMM
//     on three presets and 0.43-0.45x on the two Qwen3 ones, a kernel
//     of its own not taken as TE's.
var H100 = Node{
	Provenance: "measured on an H100 SXM (kernelbench, measurements/2026-11-26-h100*)",
	GEMM:       0.756,
	Attention:  []*Attention{&h100CuDNNAttention, &h100FlashAttention},
	ExpRate:    h100Exp, // its measured attention includes the exponentials
	SMs:        132, OverlapSMs: 16,
	CTAs: 24, CTAsAcross: 16,
	IntraBus: 362e9,
	NICEff:   47.0 / 50,
	FP8Peak:  1978.9e12,
	FP8Fwd:   1.850, FP8Bwd: 1.766, FP8Block: 1.592,
	GroupedGEMM: 0.935,
	Host:        h100Host,
	Held:        &H100Held,
}

// h100CuDNNAttention and h100FlashAttention are the fits H100
// describes (FitAttention on kb-attention.jsonl and longattn.jsonl
// together, to four figures), and beside each its full blocks' own fit
// (FitFullBlocks on the same files: longattn.jsonl's ring.full cases,
// Llama 3 8B's 32 heads at head dimension 128, one chunk of 2K to 32K
// tokens against another, no causal mask), which prices a
// context-parallel ring's full calls (cost.FusedAttn.Full): the joint
// fit, its rate set mostly by the causal calls, has flash's full
// backward 4.5-7.0% fast at chunks of 16K and 32K tokens (302 and 315
// TFLOP/s measured against its 335), the full fit within 2.3%; cuDNN's
// full fit (its Beta below 0, left out) moves its long chunks by less
// than a point. TestH100AttentionMeasured refits all four.
var (
	h100CuDNNAttention = Attention{Backend: "cudnn",
		Fwd: AttentionRate{HeadDims: []int{64, 128, 192, 256}, Rates: []float64{469.7e12, 663.2e12, 666.0e12, 749.2e12},
			Beta: 0.5461e-12, Tail: 24.99e-12, T0: 11.62e-6},
		Bwd: AttentionRate{HeadDims: []int{64, 128, 192, 256}, Rates: []float64{466.6e12, 566.6e12, 485.2e12, 391.6e12},
			Beta: 2.901e-12, T0: 92.10e-6},
		FullFwd: &AttentionRate{HeadDims: []int{128}, Rates: []float64{657.1e12}, T0: 10.77e-6},
		FullBwd: &AttentionRate{HeadDims: []int{128}, Rates: []float64{559.7e12}, T0: 118.8e-6}}
	h100FlashAttention = Attention{Backend: "flash",
		Fwd: AttentionRate{HeadDims: []int{64, 128, 256}, Rates: []float64{309.8e12, 355.8e12, 345.6e12},
			Beta: 0.6800e-12, Tail: 74.60e-12, T0: 26.73e-6},
		Bwd: AttentionRate{HeadDims: []int{64, 128, 256}, Rates: []float64{295.0e12, 335.0e12, 286.6e12},
			Beta: 7.650e-12, Tail: 91.90e-12, T0: 70.48e-6},
		FullFwd: &AttentionRate{HeadDims: []int{128}, Rates: []float64{355.5e12}, T0: 13.43e-6},
		FullBwd: &AttentionRate{HeadDims: []int{128}, Rates: []float64{315.0e12}, Beta: 5.150e-12, T0: 35.96e-6}}
)

// a100FlashAttention is FlashAttention-2 on an A100 SXM4 80GB at its
// published best, not a fit by shape: Dao, "FlashAttention-2: Faster
// Attention with Better Parallelism and Work Partitioning" (arXiv
// 2307.08691v1, 2023), section 1: "reaching up to 73% of the theoretical
// max throughput in the forward pass, and up to 63% of the theoretical
// max throughput in the backward pass" of the A100's 312 TFLOP/s
// (section 4.1: A100 80GB SXM4, causal or not, head dimension 64 or 128;
// its benchmark counts a causal call's FLOPs as half the full call's and
// the backward as 2.5 times the forward, as AttentionRate does:
// benchmarks/benchmark_flash_attention.py, flops). 227.8 and 196.6
// TFLOP/s for every head dimension and shape, no per-element, tail or
// launch terms: the kernel's best rate, so that attention is if anything
// costed fast (the figures' smaller rates, at short sequences and head
// dimension 64, are printed only in the figures). torch's SDPA runs this
// kernel on sm80 for BF16 at head dimension 128: flash first in its
// default order (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp,
// priority_order; the tag torchtitan ran in April 2024 not checked here).
var a100FlashAttention = Attention{Backend: "flash",
	Fwd:        AttentionRate{HeadDims: []int{128}, Rates: []float64{0.73 * 312e12}},
	Bwd:        AttentionRate{HeadDims: []int{128}, Rates: []float64{0.63 * 312e12}},
	Provenance: "modelled: the A100's datasheet at the matmul and elementwise classes' efficiencies, FlashAttention-2 at its published best A100 rates (arXiv 2307.08691), the H100's NIC share (no A100 kernel measured)"}

// A100 are an A100 SXM4's (DGX A100): 108 SMs (datasheet); NCCL's
// 24 ring CTAs in a node (NCCL 2.30.7's search on sm80: 12 NVLinks of
// SM80_NVLINK_BW 20 GB/s, 6 rings at speedArrayIntra's 40 GB/s, doubled
// by ncclTopoDupChannels and by ncclTopoPostset) and 16 across nodes
// (the H100's: 8 rings at a 200 Gb/s NIC's 24 GB/s, not doubled below 25
// GB/s, doubled by ncclTopoPostset); the same share of a NIC's line rate
// as the H100's (assumed: no A100 figure was found);
// attention unfused by default, at the matmul and elementwise classes'
// efficiencies (the 2022 runs this pod is checked on predate fused
// attention in Megatron-LM), FlashAttention-2 at its published best with
// attention=flash (WithAttention), and NVLink 3 at its line rate (no
// published bus bandwidth found).
var A100 = Node{
	Provenance: "modelled: the A100's datasheet at the matmul and elementwise classes' efficiencies, unfused attention, the H100's NIC share (no A100 kernel measured)",
	// 108 x 16 MUFU.EX2 a clock at 1,410 MHz, 2.436e12 a second (312
	// TF over 108 SMs at 1,410 MHz: 2,048 BF16 FLOPs a clock an SM): a
	// head dimension 64 forward's 256 FLOPs a score bind at 624 TFLOP/s,
	// far above FlashAttention-2's published 227.8, which includes them.
	ExpRate: ExpRate(312e12, MUFUHopper, 2048),
	SMs:     108, OverlapSMs: 16,
	CTAs: 24, CTAsAcross: 16,
	NICEff:           47.0 / 50,
	UnfusedAttention: true,
	Attention:        []*Attention{&a100FlashAttention},
}

// Beside is what a data-parallel collective of comm seconds adds to a
// window of compute it overlaps: the part of it the window does not hide,
// or the compute's slowdown while both run, whichever is longer.
func (k Node) Beside(comm, window float64) float64 {
	if comm <= 0 {
		return 0
	}
	if k.Serial {
		return comm // the communication runs on the cores that compute
	}
	return max(comm-window, k.OverlapSlowdown*min(comm, window))
}

// GroupedEff is how fast a grouped GEMM over local experts of rows
// tokens each (rows x K by K x n, each) runs against one dense GEMM of
// its FLOPs (1: as fast; Node.GroupedGEMM 0: 1): GroupedGEMM times
// the share of its tiles' work that is the experts', with the tile
// PyTorch's grouped GEMM takes on sm90 (aten/src/ATen/native/cuda/
// GroupMM.cu: 64x128 where an expert's rows or n are at most 128, else
// 128x256), one tile an SM, the tiles run in waves of SMs. A partial
// last wave leaves SMs idle and a ragged edge tile computes padding: 16
// experts of 512 tokens by 768 (Qwen3-30B-A3B at EP 8) make
// 192 tiles, two waves of 132 SMs, 0.727 of them used; 4 of 256 by
// 2,048 (DeepSeek-V3 at EP 64) 64 tiles, one wave half used. Fitted on
// five points (TestH100GroupedMeasured): four within 6%; DeepSeek-V3's
// measured ratio is 23% above it (its dense GEMM of 256 rows is itself
// slow: 0.64 of the BF16 peak).
func (k Node) GroupedEff(local, rows, n float64) float64 {
	return k.GroupedEffSpread(local, rows, 0, n)
}

// GroupedEffSpread is GroupedEff where the experts' rows are not all
// rows but spread about it with standard deviation sd (a normal's): an
// expert's row tiles are then ceil(X/tm) on average over its rows X
// (RowTiles), not ceil(rows/tm). sd 0 is GroupedEff.
func (k Node) GroupedEffSpread(local, rows, sd, n float64) float64 {
	if k.GroupedGEMM <= 0 || local <= 0 || rows <= 0 || n <= 0 {
		return 1
	}
	if k.SMs <= 0 {
		return k.GroupedGEMM
	}
	tm, tn := groupedTile(rows, n)
	sms := float64(k.SMs)
	tiles := local * RowTiles(rows, sd, tm) * math.Ceil(n/tn)
	waves := math.Ceil(tiles / sms)
	return k.GroupedGEMM * local * rows * n / (waves * sms * tm * tn)
}

// RowTiles is the expected row tiles of tm rows an expert of X rows
// takes, ceil(X/tm), for X normal with mean rows and standard deviation
// sd: the sum over j >= 0 of P(X > j tm) (for a variable of integer
// tiles, E[T] = sum of P(T > j)), the normal's tail beyond 8 sd left
// out; ceil(rows/tm) for sd 0.
func RowTiles(rows, sd, tm float64) float64 {
	if sd <= 0 {
		return math.Ceil(rows / tm)
	}
	var t float64
	for j := 0.0; j*tm < rows+8*sd; j++ {
		t += 0.5 * math.Erfc((j*tm-rows)/(sd*math.Sqrt2))
	}
	return t
}

// groupedTile is the tile GroupedEff takes for an expert's rows x n
// output (PyTorch's grouped GEMM on sm90, GroupMM.cu).
func groupedTile(rows, n float64) (tm, tn float64) {
	if rows <= 128 || n <= 128 {
		return 64, 128
	}
	return 128, 256
}

// TEStreams is how many compute streams Transformer Engine's grouped
// GEMM spreads its experts' GEMMs over (transformer_engine/common/util/
// multi_stream.cpp v2.8, get_num_compute_streams: 4).
const TEStreams = 4

// GroupedLoopEff is GroupedEff for Transformer Engine's grouped GEMM as
// Megatron-Core runs it (core_v0.16.0 TEGroupedMLP, TE v2.8
// GroupedLinear): without NVTE_USE_CUTLASS_GROUPED_GEMM it is no grouped
// kernel but one cuBLAS GEMM an expert, GEMM i on compute stream i mod
// streams (transformer_engine/common/gemm/cublaslt_gemm.cu
// multi_stream_cublas_gemm). At most streams experts' GEMMs run at once
// and each takes at least one wave of its tiles, so the waves are
// GroupedEff's (every tile in SM-wide waves) or ceil(local / streams),
// whichever is more: 16 experts of 512 tokens by 1,536 (Qwen3-30B-A3B's
// FC1 at 1,024 tokens a GPU, EP 8) make 24 tiles each, 384 in all,
// three waves of 132 SMs as one grouped kernel but four rounds of four
// GEMMs here; at 4,096 rows an expert the tiles fill the SMs either way.
// The tile is GroupedEff's (cuBLAS's own choice by its heuristics not
// read) and GroupedGEMM the grouped kernel's measured ratio: neither
// measured for TE's loop.
func (k Node) GroupedLoopEff(local, rows, n float64, streams int) float64 {
	return k.GroupedLoopEffSpread(local, rows, 0, n, streams)
}

// GroupedLoopEffSpread is GroupedLoopEff with the experts' rows spread
// about rows with standard deviation sd (GroupedEffSpread's row tiles).
func (k Node) GroupedLoopEffSpread(local, rows, sd, n float64, streams int) float64 {
	eff := k.GroupedEffSpread(local, rows, sd, n)
	if k.GroupedGEMM <= 0 || k.SMs <= 0 || local <= 0 || rows <= 0 || n <= 0 || streams <= 0 {
		return eff
	}
	tm, tn := groupedTile(rows, n)
	sms := float64(k.SMs)
	waves := math.Ceil(local * RowTiles(rows, sd, tm) * math.Ceil(n/tn) / sms)
	rounds := math.Ceil(local / float64(streams))
	if rounds <= waves {
		return eff
	}
	return k.GroupedGEMM * local * rows * n / (rounds * sms * tm * tn)
}
