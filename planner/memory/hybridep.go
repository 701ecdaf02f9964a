package memory

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// HybridEP's fixed buffers, as Megatron-Core's flex dispatcher allocates
// them with moe_flex_dispatcher_backend "hybridep" (NVIDIA/Megatron-LM
// core_r0.16.0 megatron/core/transformer/moe/fused_a2a.py:
// HybridEPDispatch.forward makes one process-wide buffer at the first
// dispatch, init_hybrid_ep_buffer with seq_len the rows of the hidden
// states it dispatches, fp8_dispatch False), read at deepseek-ai/DeepEP's
// hybrid-ep branch eb9cee7 (the commit Megatron-Core core_r0.16.0's CI
// image builds):
//   - deep_ep/hybrid_ep_buffer.py HybridEPBuffer.__init__:
//     max_num_of_tokens_per_rank = max(seq_len, 512); the NVLink domain
//     the ranks the allocator can reach (detect_accessible_ranks: placer's
//     node, PerNode, at most the group), the domains the group's size
//     over it; 108 preprocessing blocks; UINT16 tokens without FP8.
//   - csrc/hybrid_ep/hybrid_ep.cu allocate_buffer: max_num_of_tokens =
//     max_num_of_tokens_per_rank x ranks a domain x domains; the
//     preprocessing scratch (108 x ranks a domain tmp_state_t of 8
//     bytes), the combine's expert-input tokens (max x hidden x 2) and
//     probabilities (max x local experts x ranks a domain x 4), shared
//     with the dispatch's (use_shared_buffer, True by default), the
//     dispatch's scaling factors (max x hidden/128 x 4); a few 4-byte
//     flags, not counted.
//   - csrc/hybrid_ep/extension/allgather.cu allocate_ag_buffer: the
//     routing maps' all-gather output, one bool a token and expert of the
//     group (experts x max_num_of_tokens_per_rank x group size).
//   - csrc/hybrid_ep/internode.cu, more than one domain:
//     allocate_dispatch_rdma_buffers (the attention side's tokens,
//     probabilities of every expert, scaling factors; the other domains'
//     tokens, probabilities and scaling factors; four flag arrays of
//     ceil(max_per_rank/128) x (domains - 1) uint64) and
//     allocate_combine_rdma_buffers (the reduction's and the group's
//     tokens and probabilities over the other domains, four flag arrays).
//
// All of it is cudaMalloc'd or mapped by HybridEP's ExtendedMemoryAllocator
// (cuMemCreate on a fabric, else cudaMalloc): outside PyTorch's caching
// allocator. Fabric allocations round each buffer up to the fabric's
// granularity (not counted: a few MiB at most).
const (
	hybridEPMinTokens      = 512 // max(max_num_of_tokens_per_rank, 512)
	hybridEPPreprocBlocks  = 108 // num_sms_preprocessing_api's default
	hybridEPTmpState       = 8   // sizeof(tmp_state_t): a scan_state and an int32
	hybridEPScaleBlock     = 128 // hidden_dim / 128 scaling factors a token
	hybridEPTokensPerChunk = 128 // NUM_OF_TOKENS_PER_CHUNK_{DISPATCH,COMBINE}_API's default
)

// HybridEPBuffers is the device memory HybridEP's buffer takes on one
// GPU of plan pl of model m on pod p, bytes, outside PyTorch's caching
// allocator (the comment above). None unless the plan runs HybridEP
// (dispatcher=hybridep) over an expert-tensor x expert-parallel group of
// more than one GPU.
func HybridEPBuffers(pl *plan.Plan, m *transformer.Spec, p *plan.Pod) int64 {
	ranks := int64(pl.ETP * pl.EP)
	if !pl.Run.HybridEP || !m.MoE() || ranks <= 1 {
		return 0
	}
	// The rows a rank dispatches: a micro-batch's tokens over context
	// parallelism and, with sequence parallelism, tensor parallelism.
	rows := int64(pl.MBS*m.Seq) / int64(pl.CP)
	if pl.SequenceParallel {
		rows /= int64(pl.TP)
	}
	T := max(rows, hybridEPMinTokens)
	domain := min(ranks, int64(p.PerNode))
	nodes := ranks / domain
	h, local, E := int64(m.Hidden), int64(m.Experts)/int64(pl.EP), int64(m.Experts)
	scales := h / hybridEPScaleBlock
	maxTok := T * domain * nodes
	n := hybridEPPreprocBlocks * domain * hybridEPTmpState
	n += maxTok*h*2 + maxTok*local*domain*4 + maxTok*scales*4
	n += E * T * ranks
	if nodes > 1 {
		o := nodes - 1
		flags := 4 * ((T-1)/hybridEPTokensPerChunk + 1) * o * 8
		n += T*h*2 + T*local*domain*nodes*4 + T*scales*4 + T*o*h*2 + T*o*local*domain*4 + T*o*scales*4 + flags
		n += 2*(T*o*h*2) + 2*(T*o*local*domain*4) + flags
	}
	return n
}

// DispatcherBuffers is the flex dispatcher's fixed buffers on one GPU of
// plan pl, outside the allocator: HybridEP's (HybridEPBuffers) or
// DeepEP's (DeepEPBuffers), with the part's name; 0 for neither.
func DispatcherBuffers(pl *plan.Plan, m *transformer.Spec, p *plan.Pod) (string, int64) {
	if pl.Run.HybridEP {
		return "HybridEP buffers", HybridEPBuffers(pl, m, p)
	}
	return "DeepEP buffers", DeepEPBuffers(pl, m)
}
