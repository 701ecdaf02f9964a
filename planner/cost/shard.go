package cost

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/kernels"
	"github.com/placer/placer/planner/plan"
)

// Shard is what every layer of one plan shares at one tensor-parallel
// degree, and all a plug-in (a family, a code base, a mechanism) is
// given of the plan: the model, the plan (its TP the shard's degree),
// the pod and its hardware, the tensor group, the tokens of a
// micro-batch on one GPU, and the GEMMs' FP8 time ratios. It holds data
// and the few primitives every plug-in prices kernels with; the
// composition of a step is planner's.
type Shard struct {
	M      transformer.Spec
	Plan   plan.Plan
	H      *roofline.Hardware
	Pod    *plan.Pod // the caller's, as H is its Hardware
	TPG    plan.Group
	Tokens float64 // tokens per micro-batch on one GPU (its 1/C with context parallelism)
	NoComm bool    // cost the kernels alone, no collectives
	NoHost bool    // and no host: the GPU's time alone (Host.expose)
	// FP8Fwd and FP8Bwd are what an FP8 GEMM of the blocks takes of the
	// BF16 GEMM's time at its shape, forward and backward, where the
	// blocks' GEMMs run in FP8 (0: BF16): Kernels.FP8Speedups' inverses.
	FP8Fwd, FP8Bwd float64
	// Priced is which registered plug-ins price this shard's step, as
	// the framework decided once when it made the shard (Registry.Decide;
	// planner: newCoster, the step's shard): it asks an extension
	// point's plug-ins by it, not their declarations again.
	Priced Record
}

// FusedAttn is one fused attention call on one GPU: its kernel (FLOPs
// and bytes, what a pod without a measured attention kernel costs at the
// matmul class's efficiency), its query elements (batch x heads x tokens
// x (qk + v head dimensions)), a causal call's last row (tokens x (qk +
// v head dimensions); 0 for a full block) and its query and key head
// dimension: the shape AttentionRate takes.
type FusedAttn struct {
	K           Kernel
	Elems, Tail float64
	HeadDim     int
	// Full marks a context-parallel ring's full call (a chunk against
	// another, no causal mask): priced by the kernel's full blocks' own
	// fit where it has one (kernels.Attention.For).
	Full bool
}

// AttnTile is the queries and the keys of one tile of a fused attention
// kernel, which computes a sliding window's keys by whole tiles
// (transformer.TiledKeys): FlashAttention-2's forward at head width
// 64, 128 x 128 (Dao-AILab/flash-attention 01afd16d,
// csrc/flash_attn/src/flash_fwd_launch_template.h run_mha_fwd_hdim64,
// Flash_fwd_kernel_traits<64, 128, 128, ...>). PyTorch's FlexAttention
// skips masked blocks of the same 128 x 128 (torch 2.14.1
// torch/nn/attention/flex_attention.py, _DEFAULT_SPARSE_BLOCK_SIZE, the
// default BLOCK_SIZE of create_block_mask). cuDNN's tiles are not
// public; FlashAttention-2's stand for them and for every head width
// (at 128 its forward tile is 128 x 64: a 128-key window still spans
// 256 keys a query tile).
const AttnTile = 128

// Attention is the time of fused attention a, forward or backward: the
// pod's measured kernel by shape where it has one and its attention is
// fused, else the matmul class's roofline (a context-parallel ring on a
// pod whose attention is unfused: no kernel was selected for it). The
// measured kernel's rate term (its FLOPs over R(d)) runs at the clock
// the pod's GPUs hold (power.go): its FLOPs taken
// Hardware.ComputeSlowdown's times; its per-element and fixed terms as
// timed.
func (c *Shard) Attention(a FusedAttn, backward bool) float64 {
	if len(c.Pod.Kernels.Attention) == 0 || c.Pod.Kernels.UnfusedAttention {
		return a.K.Time(c.H)
	}
	r := c.Pod.Kernels.Attention[0].For(backward, a.Full, a.HeadDim)
	flops := a.K.FLOPs
	if s := c.H.ComputeSlowdown; s > 0 {
		flops *= s
	}
	return r.Time(kernels.AttentionCall{Flops: flops, Elems: a.Elems, Tail: a.Tail, HeadDim: a.HeadDim})
}

// AttentionCall is fused attention f as one call on one GPU, forward or
// backward, without context parallelism (CPAttention's none): one fused
// kernel forward; the backward's main kernel and its preprocessing (the
// output's and its gradient's row sums).
func (c *Shard) AttentionCall(f FusedAttn, backward bool) Phase {
	launches := 1.0
	if backward {
		launches = 2
	}
	return Phase{Busy: c.Attention(f, backward), Launches: launches}
}
