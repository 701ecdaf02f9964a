package mechanisms

import (
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
)

// teRingMerges is the memory-bound work Transformer Engine's p2p ring
// (ringP2P) runs on the compute stream besides its calls and sends, on
// rank C-1 (the rank the ring is costed on: every step i <= rank, so
// every step takes all its queries and, from step 1 on, the first half
// of the K and V received), read from TE v1.6's AttnFuncWithCP (the
// release in the MLPerf v4.0 NeMo 24.04 containers;
// transformer_engine/pytorch/attention.py) and still so at
// d0067d0 (attention/dot_product_attention/context_parallel.py,
// AttnFuncWithCPAndKVP2P). Per element of the output (E, msg.Out) or of
// the rank's K and V (K, msg.KV in BF16), bytes read + written:
//   - forward: the output buffer zeroed (torch.empty_like(q).zero_(): 0 +
//     2); at each step from 1 on the first half of the K and V received
//     made contiguous for the call (kv[:, :, 0, ...].contiguous(): 2 + 2
//     on K/2); after the last call each step's output merged into it,
//     flash_attn_fwd_out_correction (out.add_(out_step * exp(lse_step -
//     lse)), one scripted pass: 2 + 2 read, 2 written), C passes;
//   - backward: the rank's K and V copied into the ring's first buffer
//     (p2p_comm_buffers[0][0].copy_(kv): 2 + 2 on K); at each step but the
//     causal one the half of K and V made contiguous (2 + 2 on K/2); each
//     step's dK and dV concatenated (torch.cat: 2 + 2 on the keys the call
//     met: K at the causal step, K/2 at the others); dQ: the first step's
//     copied in (dq.copy_: 2 + 2), each later step's added (dq.add_: 4 +
//     2); dK, dV: the first step's half copied in (dkv[:, :, 0].copy_: 2 +
//     2 on K/2), the middle steps' halves added (4 + 2 on K/2), the causal
//     step's whole added (4 + 2 on K).
//
// The LSE corrections (one value a row) are left out, their launches
// counted (C-1 forward). TE v1.6's transposes of Q, K, V and the output
// from Megatron's sbhd to bshd around the ring (removed in later releases,
// which take sbhd) are left out too: the figure is what every release
// read runs.
func teRingMerges(c *cost.Shard, backward bool, msg cost.RingMsg) (busy, launches float64) {
	C := float64(c.Plan.CP)
	E, K := msg.Out, msg.KV/cost.BF16
	pass := func(n, elems, read, write float64) {
		if n <= 0 {
			return
		}
		busy += n * cost.Kernel{Class: graph.ClassElementwise, FLOPs: elems, Read: elems * read, Writes: elems * write}.Time(c.H)
		launches += n
	}
	if !backward {
		pass(1, E, 0, 2)
		pass(C-1, K/2, 2, 2)
		pass(C, E, 4, 2)
		launches += C - 1 // the LSE corrections
		return busy, launches
	}
	pass(1, K, 2, 2)
	pass(C-1, K/2, 2, 2)
	pass(1, K, 2, 2)
	pass(C-1, K/2, 2, 2)
	pass(1, E, 2, 2)
	pass(C-1, E, 4, 2)
	pass(1, K/2, 2, 2)
	pass(C-2, K/2, 4, 2)
	pass(1, K, 4, 2)
	return busy, launches
}
