package mechanisms

import (
	"github.com/placer/placer/evaluate/roofline"
	"github.com/placer/placer/graph"
	"github.com/placer/placer/planner/cost"
	"github.com/placer/placer/planner/plan"
)

// Ring is the context-parallel exchange of a layer's attention as the
// plan's stack runs it (Settings.CPRing): Transformer Engine's ring of
// point-to-point sends (ringP2P), its all-gather of K and V
// (kvAllGather), or torch's ring with its all-gather or all-to-all
// rotater (torchRing), eager or compiled. It prices a plan with context
// parallelism (CP above 1), as it declares; without, the framework
// prices the fused kernel alone (cost.Shard.AttentionCall).
type Ring struct{}

var _ cost.CPAttention = Ring{}

// Name is the ring's registered name.
func (Ring) Name() string { return "cp-ring" }

// When is the ring's declaration: a plan that splits the sequence over
// CP ranks.
func (Ring) When() cost.When { return ringWhen }

var ringWhen = cost.When{cost.Key("cp", "cp>1", func(pl *plan.Plan) bool { return pl.CP > 1 })}

// Attention is fused attention f with s's ring (ring.attention).
func (Ring) Attention(s *cost.Shard, f cost.FusedAttn, backward bool, msg cost.RingMsg) cost.Phase {
	return ring{s}.attention(f, backward, msg)
}

// RingAttention is fused attention f with s's ring (ring.attention),
// Ring's, for a family's attention of a shape of its own
// (families.LatentAttention): without context parallelism, the kernel
// alone (cost.Shard.AttentionCall).
func RingAttention(s *cost.Shard, f cost.FusedAttn, backward bool, msg cost.RingMsg) cost.Phase {
	return ring{s}.attention(f, backward, msg)
}

// ring is the shard a ring's calls and exchanges are priced on.
type ring struct{ *cost.Shard }

// attention is fused attention f (forward, or backward) on one GPU
// with its context-parallel ring, as the plan's stack runs it
// (Settings.CPRing). f is the GPU's whole share of the scores: with C
// ranks the sequence is cut into 2C chunks of s/(2C) tokens, rank i
// holding chunks i and 2C-1-i, so that its share of the causal half is
// 1/C (load balance: Transformer Engine's and torch's alike). Both run
// one kernel call a step, of equal FLOPs (two chunk-by-chunk blocks'
// worth: 1/C of f), read from the code (TE's AttnFuncWithCPAndKVP2P
// forward, torch's _templated_ring_attention):
//   - step 0: the rank's two chunks against themselves, one causal call
//     (two causal diagonal blocks and the full block between them);
//   - step i >= 1: one full call, either both query chunks against the
//     first key chunk received (i <= rank) or the second query chunk
//     against both (i > rank). Rank C-1 runs the first kind at every
//     step, all its queries each time: the ring is costed at its calls.
//
// Each call is priced by the measured kernel at its own shape (the
// causal tail only in step 0's; the full calls of steps 1 to C-1 by the
// kernel's fit to its measured full blocks where it has one:
// kernels.Attention.For). The exchanges are ringP2P's, or torch's
// ring's (torchRing: ringAllGather's or ringAllToAll's run eager,
// ringTraced's compiled, compile=on: Settings.Eager false). Without
// context parallelism it is the kernel.
func (c ring) attention(f cost.FusedAttn, backward bool, msg cost.RingMsg) cost.Phase {
	C := c.Plan.CP
	if C <= 1 {
		return c.AttentionCall(f, backward)
	}
	switch c.Plan.Run.CPRing {
	case plan.CPRingKVAllGather:
		return c.kvAllGather(f, backward, msg)
	case plan.CPRingQKVOA2A:
		return c.qkvoA2A(f, backward, msg)
	}
	f.K.FLOPs /= float64(C)
	steps := make([]float64, C)
	steps[0] = c.Attention(f, backward)
	f.Tail, f.Full = 0, true
	full := c.Attention(f, backward)
	for i := 1; i < C; i++ {
		steps[i] = full
	}
	compute := steps[0] + float64(C-1)*full
	if r := c.Plan.Run.CPRing; r == plan.CPRingAllGather || r == plan.CPRingAllToAll {
		return c.torchRing(steps, backward, msg, compute)
	}
	ringed := ringP2P(steps, backward, c.cpSend(msg.KV), c.cpSend(2*msg.KV))
	// C calls and a send and a receive between each two (twice that
	// backward: the K and V chunk on, the gradient back), and TE's merges
	// and copies on the compute stream (teRingMerges).
	sends := 2 * float64(C-1)
	if backward {
		sends *= 2
	}
	merges, mergeLaunches := teRingMerges(c.Shard, backward, msg)
	return cost.Phase{Busy: ringed + merges, CPExposed: ringed - compute, Launches: float64(C) + sends + mergeLaunches}
}

// kvAllGather is fused attention f (forward, or backward) on one GPU of
// a context group that all-gathers K and V instead of passing them
// round a ring: Llama 3's context parallelism (Grattafiori et al., "The
// Llama 3 Herd of Models", arXiv 2407.21783v3 section 3.3.2: "we first
// all-gather the key (K) and value (V) tensors, and then compute
// attention output for the local query (Q) tensor chunk. Although the
// all-gather communication latency is exposed in the critical path...")
// as Transformer Engine runs it for Megatron-Core's --cp-comm-type
// all_gather (NVIDIA/TransformerEngine d0067d0,
// transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py,
// AttnFuncWithCPAndKVAllGather, "KV all-gather between CP ranks is
// exposed"; it cites the same section):
//   - forward: every rank's K and V all-gathered (gather_along_first_dim,
//     waited before any call), then one causal call (bottom-right) for
//     each of the rank's two query chunks, i and 2C-1-i of s/(2C)
//     tokens, against the keys up to the chunk's end;
//   - backward: K and V all-gathered again (only the rank's own are
//     kept), the two calls' backward, and dK and dV (BF16, k's dtype)
//     reduce-scattered after the last.
//
// The collectives run on the compute stream's path, none beside a call:
// all exposed. The two calls hold f's FLOPs, the rank's share of the
// causal half (chunk i (2i+1)/(4C) of it, chunk 2C-1-i the rest; every
// rank alike), and its queries' elements. TE issues them on two streams
// "to resolve wave quantization": one call's causal tail runs beside the
// other's blocks,
// so one tail is costed, the longer: the last row of rank 0's second
// chunk meets every key of the sequence, C times the row of the rank's
// own 2 chunks (f.tail), and the ranks wait on the slowest at the next
// collective. Two calls' fixed terms.
func (c ring) kvAllGather(f cost.FusedAttn, backward bool, msg cost.RingMsg) cost.Phase {
	C := float64(c.Plan.CP)
	f.Tail *= C
	calls := c.Attention(f, backward)
	if len(c.Pod.Kernels.Attention) > 0 && !c.Pod.Kernels.UnfusedAttention {
		k := c.Pod.Kernels.Attention[0].Fwd
		if backward {
			k = c.Pod.Kernels.Attention[0].Bwd
		}
		calls += k.T0 // the second call's launch and last wave
	}
	ag := c.cpAllGather(C * msg.KV) // every rank's K and V, BF16
	comm, launches := ag, 2.0+2     // the K and V gathers, the two calls
	if backward {
		comm += c.cpReduceScatter(C * msg.KV) // dK and dV
		launches += 2
	}
	return cost.Phase{Busy: calls + comm, CPExposed: comm, Launches: launches}
}

// qkvoA2A is fused attention f (forward, or backward) on one GPU of a
// context group that exchanges heads for sequence by all-to-alls
// (DeepSpeed Ulysses, arXiv 2309.14509) as Transformer Engine runs it
// for Megatron-Core's --cp-comm-type a2a (NVIDIA/TransformerEngine
// d0067d0, transformer_engine/pytorch/attention/dot_product_attention/
// context_parallel.py, AttnFuncWithCPAndQKVOA2A and
// flash_attn_a2a_communicate):
//   - forward: Q, K and V each all_to_all_single'd over the CP group
//     ("a2a: gather s and split h", [s/cp, h, d] -> [s, h/cp, d]; each
//     waited before the call), one causal call over the whole sequence
//     for heads/cp of the rank's heads, the output all-to-all'd back;
//   - backward: the output's gradient all-to-all'd in, the call's
//     backward, dQ, dK and dV all-to-all'd back.
//
// Each all-to-all moves the tensor the rank holds (BF16): Q and the
// output of msg.Out elements, K and V of msg.KV bytes together; all on
// the compute stream's path, exposed. The call holds f's FLOPs (the
// rank's 1/C of the causal half: every token's queries, 1/C of the
// heads) and its elements; its causal tail is a row of the whole
// sequence, C times the row of the rank's own tokens (f.Tail). One
// call's fixed terms.
func (c ring) qkvoA2A(f cost.FusedAttn, backward bool, msg cost.RingMsg) cost.Phase {
	f.Tail *= float64(c.Plan.CP)
	call := c.Attention(f, backward)
	q, kv := msg.Out*cost.BF16, msg.KV
	in, out := c.cpAllToAll(q)+c.cpAllToAll(kv/2)*2, c.cpAllToAll(q) // Q, K, V; the output
	launches := 1.0 + 4                                              // the call, four all-to-alls
	if backward {
		in, out = out, in // the output's gradient; dQ, dK, dV
		launches++        // the backward's preprocessing
	}
	return cost.Phase{Busy: call + in + out, CPExposed: in + out, Launches: launches}
}

// torchRing is torch's ring of calls steps (compute seconds in all) with
// its all-gather or all-to-all rotater (Settings.CPRing), eager or
// compiled, and its FP32 merges on the compute stream (ringMerges).
func (c ring) torchRing(steps []float64, backward bool, msg cost.RingMsg, compute float64) cost.Phase {
	C := float64(len(steps))
	merges := c.ringMerges(backward, msg)
	var eagerLaunches float64
	if c.Plan.Run.Eager {
		merges, eagerLaunches = c.ringMergesEager(backward, msg)
	}
	x, xd := c.cpSend(msg.KV), c.cpSend(2*msg.KV) // K and V (BF16) to the next rank; dK and dV (FP32)
	var busy, launches float64
	if c.Plan.Run.CPRing == plan.CPRingAllGather {
		ag := c.cpAllGather(C * msg.KV)
		if c.Plan.Run.Eager {
			busy = ringAllGather(steps, backward, ag, xd)
		} else {
			busy = ringTraced(steps, backward, ag, 0, xd)
		}
		launches = 2*C + 1 // the calls, the merges, the all-gather
	} else {
		if c.Plan.Run.Eager {
			busy = ringAllToAll(steps, backward, x, xd)
		} else {
			busy = ringTraced(steps, backward, 0, x, xd)
		}
		launches = 2*C + C - 1 // the calls, the merges, the K and V all-to-alls
	}
	if backward {
		launches += C // the gradients' all-to-alls
	}
	if c.Plan.Run.Eager {
		launches += eagerLaunches - C // the merges op by op, not one a step
	}
	busy += merges
	return cost.Phase{Busy: busy, CPExposed: busy - compute - merges, Launches: launches}
}

// ringP2P is Transformer Engine's p2p ring of calls a (seconds each, in
// order) with x the send of a rank's K and V to the next rank and x2 of
// K, V and their gradients together. Forward, the send of the next
// step's K and V is issued before each call and waited before the next
// (AttnFuncWithCPAndKVP2P.forward: send_recv_reqs waited at the top of
// step i+1): C-1 steps of the longer of a call and a send, then the last
// call; the first exchange runs beside step 0's call, so none is exposed
// unless a send outlasts its call. Backward, step 0 sends K and V on,
// the middle steps K, V and the gradient of the chunk before (dK, dV:
// as many bytes again), the last step the gradient only, and the last
// chunk's gradient goes back after the last call, exposed whole.
func ringP2P(a []float64, backward bool, x, x2 float64) float64 {
	C := len(a)
	var t float64
	if !backward {
		for i := 0; i < C-1; i++ {
			t += max(a[i], x)
		}
		return t + a[C-1]
	}
	for i, ai := range a {
		if i == 0 || i == C-1 {
			t += max(ai, x)
		} else {
			t += max(ai, x2)
		}
	}
	return t + x
}

// ringAllGather is torch's all-gather ring of calls a: the all-gather of
// every rank's K and V (ag seconds) is issued before step 0's call and
// waited before step 1's, so it is exposed where it outlasts that call;
// forward, the other calls follow back to back. Backward, the K and V
// are gathered the same way and after each call the rank's FP32 dK and
// dV go to the next rank (xd seconds), waited after the next call: each
// later step is the longer of its call and the gradient's send, and the
// last send is exposed whole.
func ringAllGather(a []float64, backward bool, ag, xd float64) float64 {
	t := max(a[0], ag)
	for _, ai := range a[1:] {
		if backward {
			t += max(ai, xd)
		} else {
			t += ai
		}
	}
	if backward {
		t += xd
	}
	return t
}

// ringAllToAll is torch's all-to-all ring of calls a run eager: before
// each call but the last the rank's K and V go to the next rank (x
// seconds), waited before the next call, so each step is the longer of
// its call and its send, the last call alone. Backward the K and V go
// round the same way and after each call the rank's FP32 dK and dV (xd)
// go to the next rank, waited after the next call; both rotaters share
// the context group's one NCCL stream, so a middle step's call runs
// beside the gradient sent after the step before and the K and V sent
// before it (x + xd), the last step's beside the gradient only, and the
// last gradient is exposed whole.
func ringAllToAll(a []float64, backward bool, x, xd float64) float64 {
	C := len(a)
	var t float64
	for i, ai := range a {
		var comm float64
		if i < C-1 {
			comm = x
		}
		if backward && i > 0 {
			comm += xd
		}
		t += max(ai, comm)
	}
	if backward {
		t += xd
	}
	return t
}

// ringTraced is torch's ring as torch.compile runs it: the ring traced
// into the compiled block (torchtitan 9dec370
// parallelisms/parallelize_llama.py apply_compile: each TransformerBlock
// compiled with fullgraph=True, the context-parallel SDPA inside it), so
// that every functional collective is waited where it is issued (torch
// torch/distributed/_functional_collectives.py _maybe_wrap_tensor: while
// tracing, wait_tensor at once, no AsyncCollectiveTensor waited at first
// use; the same in every version read, 2.2 on) and Inductor keeps that
// order (torch/_inductor/config.py reorder_for_compute_comm_overlap False
// by default; torchtitan 9dec370 sets only _micro_pipeline_tp). Nothing
// runs beside a call: the all-gather before step 0 (ag seconds; 0 for the
// all-to-all rotater), each K and V send before the call it feeds (x a
// step after the first; 0 for the all-gather rotater) and, backward,
// each FP32 dK, dV send after its call (xd) are all exposed whole.
func ringTraced(a []float64, backward bool, ag, x, xd float64) float64 {
	t := ag + float64(len(a)-1)*x
	for _, ai := range a {
		t += ai
		if backward {
			t += xd
		}
	}
	return t
}

// ringMerges is the memory-bound work torch's ring runs on its one
// stream besides the calls (convert_to_f32), compiled (Inductor fuses each
// step's ops into one pass; the per-step K, V concatenations the
// all-gather rotater never sends are dead code there; run eager:
// ringMergesEager): forward, each step's output
// cast to FP32 and merged into the running FP32 output (reading both,
// writing it: 4 + 2 + 4 bytes an element, one fused pass counted a
// step) and
// the result cast back (4 + 2); backward, each step's dQ added into an
// FP32 dQ and its dK, dV into the FP32 gradients received (4 + 2 + 4
// bytes an element) and those copied into the buffer sent on (4 + 4).
func (c ring) ringMerges(backward bool, msg cost.RingMsg) float64 {
	C := float64(c.Plan.CP)
	pass := func(elems, read, write float64) float64 {
		return cost.Kernel{Class: graph.ClassElementwise, FLOPs: elems, Read: elems * read, Writes: elems * write}.Time(c.H)
	}
	if !backward {
		return C*pass(msg.Out, 6, 4) + pass(msg.Out, 4, 2)
	}
	kv := msg.KV / cost.BF16
	return C * (pass(msg.Out, 6, 4) + pass(kv, 6, 4) + pass(kv, 4, 4))
}

// ringMergesEager is ringMerges as torch's ring runs eager (compile=off),
// each op its own kernel (torch/distributed/tensor/experimental/_attention.py:
// _templated_ring_attention with _SDPAMerger, and
// _templated_ring_attention_backward), on rank C-1, whose steps all take
// every query (i <= rank: no partial update of half the output), and the
// launches. Per element of the output (E, msg.Out) or of the rank's K and
// V (K, msg.KV in BF16), bytes read + written:
//   - forward: each step's output cast to FP32 (2 + 4); from step 1 the
//     merge out - sigmoid(block_lse - lse) * (out - block_out): the
//     difference (4 + 4 + 4), the product with the per-row sigmoid (4 +
//     4), the subtraction (4 + 4 + 4), and the LSE's four ops over a
//     row's one value (their bytes left out, their launches counted);
//     before each call but the last torch.cat of K and V for the rotater
//     (2 + 2, run though the all-gather rotater sends only the first);
//     the result cast back (4 + 2);
//   - backward: the FP32 dQ, dK, dV zeroed (4); each step's dQ added into
//     the FP32 dQ (4 + 2 + 4); step 0's dK, dV into the FP32 ones (4 + 2 +
//     4), a later step's into the first half of the FP32 gradient received
//     (_partial_update: 4 + 2 + 4 on half, then torch.cat of the halves, 4 +
//     4 on the whole); the FP32 dK, dV concatenated for the send (4 + 4);
//     the K, V concatenation before each call but the last (2 + 2); dQ and
//     the last dK, dV cast back (4 + 2).
func (c ring) ringMergesEager(backward bool, msg cost.RingMsg) (busy, launches float64) {
	C := float64(c.Plan.CP)
	E, K := msg.Out, msg.KV/cost.BF16
	pass := func(n, elems, read, write float64) {
		busy += n * cost.Kernel{Class: graph.ClassElementwise, FLOPs: elems, Read: elems * read, Writes: elems * write}.Time(c.H)
		launches += n
	}
	if !backward {
		pass(C, E, 2, 4)
		pass(C-1, E, 8, 4)
		pass(C-1, E, 4, 4)
		pass(C-1, E, 8, 4)
		launches += 4 * (C - 1) // the LSE's difference, sigmoid, logsigmoid, subtraction
		pass(C-1, K, 2, 2)
		pass(1, E, 4, 2)
		return busy, launches
	}
	pass(1, E+K, 0, 4)
	pass(C, E, 6, 4)
	pass(1, K, 6, 4)
	pass(C-1, K/2, 6, 4)
	pass(C-1, K, 4, 4)
	pass(C, K, 4, 4)
	pass(C-1, K, 2, 2)
	pass(1, E, 4, 2)
	pass(1, K, 4, 2)
	return busy, launches
}

// cpSend is one step of a context group's ring: every GPU sends bytes
// to its neighbour and receives as many, all at once, over NVSwitch
// where the group sits in a node, else on each GPU's share of its
// node's NICs (every GPU of the node sends at once). 0 when the layer
// is costed alone.
func (c ring) cpSend(bytes float64) float64 {
	if c.NoComm || bytes <= 0 {
		return 0
	}
	if c.Plan.CPCrossesNodes(*c.Pod) {
		bw, lat := c.Pod.Inter()
		return bytes/bw + lat
	}
	bw, lat := c.Pod.IntraFor(2) // a send to the ring's next rank: one link of a mesh
	return bytes/bw + lat
}

// cpAllGather is an all-gather of bytes in all (every rank's share of
// them) over the plan's context group: its C ranks stride T, so a node
// holds PerNode/T of them (Plan.Groups). 0 when the layer is costed
// alone.
func (c ring) cpAllGather(bytes float64) float64 {
	return c.cpCollective(roofline.AllGather, bytes)
}

// cpReduceScatter is a reduce-scatter of bytes in all over the plan's
// context group, placed as cpAllGather's. 0 when the layer is costed
// alone.
func (c ring) cpReduceScatter(bytes float64) float64 {
	return c.cpCollective(roofline.ReduceScatter, bytes)
}

// cpAllToAll is an all-to-all over the plan's context group in which
// every rank sends bytes in all, placed as cpAllGather's. 0 when the
// layer is costed alone.
func (c ring) cpAllToAll(bytes float64) float64 {
	if c.NoComm || bytes <= 0 {
		return 0
	}
	in := max(1, min(c.Plan.CP, c.Pod.PerNode/max(1, c.Plan.TP)))
	return c.Pod.AllToAll(plan.Group{PerNode: in, Nodes: (c.Plan.CP + in - 1) / in}, bytes)
}

// cpCollective is the collective op of bytes in all over the plan's
// context group (cpAllGather's placement).
func (c ring) cpCollective(op roofline.Collective, bytes float64) float64 {
	if c.NoComm || bytes <= 0 {
		return 0
	}
	in := max(1, min(c.Plan.CP, c.Pod.PerNode/max(1, c.Plan.TP)))
	g := plan.Group{PerNode: in, Nodes: (c.Plan.CP + in - 1) / in}
	t, _ := c.Pod.Collective(op, g, bytes)
	return t
}
