package memory

import (
	"github.com/placer/placer/graph/transformer"
	"github.com/placer/placer/planner/plan"
)

// DeepEP's fixed buffers, as Megatron-Core's flex dispatcher allocates
// them (megatron/core/transformer/moe/fused_a2a.py at core_r0.15.0 and
// core_r0.16.0, get_buffer): one deep_ep.Buffer over the dispatcher's
// group (the expert-tensor x expert-parallel group: token_dispatcher.py
// _DeepepManager, "This should be the ETPxEP group"), of the largest
// NVLink and RDMA size hints of DeepEP's recommended dispatch and
// combine configs for that group's size (Buffer.get_dispatch_config,
// get_combine_config; Config.get_nvl_buffer_size_hint,
// get_rdma_buffer_size_hint), for hidden_bytes = hidden x max(element
// size, 2) (get_hidden_bytes: 2 a BF16 or FP8 token). DeepEP is read at
// deepseek-ai/DeepEP v1.2.1 (deep_ep/buffer.py, csrc/config.hpp,
// csrc/deep_ep.cpp Buffer::Buffer, csrc/kernels/configs.cuh), whose
// configs, size hints and allocations are those of the hybrid-ep
// branch's eb9cee7 that Megatron-Core core_r0.16.0's CI image builds
// (docker/Dockerfile.ci.dev; Buffer's use_fabric off by default). None of
// it is the caching allocator's: the NVLink buffer and a 32 MiB
// workspace are cudaMalloc'd directly (Buffer::Buffer), the RDMA buffer
// taken from NVSHMEM's symmetric heap (internode::alloc), which maps
// device memory in NVSHMEM_CUMEM_GRANULARITY pieces of 512 MiB
// (buffer.py sets 2^29: "NVSHMEM initialization requires at least 256
// MiB").

// deepEPConfig is what DeepEP's Config sizes its buffers by: the NVLink
// receive chunk and the RDMA send and receive chunks, in tokens
// (Config's num_max_nvl_chunked_recv_tokens,
// num_max_rdma_chunked_send_tokens, num_max_rdma_chunked_recv_tokens).
type deepEPConfig struct{ nvlRecv, rdmaSend, rdmaRecv int }

// deepEPConfigs is buffer.py's recommended configs (v1.2.1
// get_dispatch_config and get_combine_config), by group size: the
// dispatch's and the combine's.
var deepEPConfigs = []struct {
	ranks             int
	dispatch, combine deepEPConfig
}{
	{2, deepEPConfig{256, 6, 128}, deepEPConfig{256, 6, 128}},
	{4, deepEPConfig{256, 6, 128}, deepEPConfig{256, 6, 128}},
	{8, deepEPConfig{256, 6, 128}, deepEPConfig{256, 6, 128}},
	{16, deepEPConfig{288, 20, 128}, deepEPConfig{288, 12, 128}},
	{24, deepEPConfig{288, 32, 128}, deepEPConfig{288, 8, 128}},
	{32, deepEPConfig{288, 32, 128}, deepEPConfig{288, 8, 128}},
	{64, deepEPConfig{288, 28, 128}, deepEPConfig{288, 20, 128}},
	{128, deepEPConfig{560, 32, 128}, deepEPConfig{560, 12, 128}},
	{144, deepEPConfig{720, 12, 128}, deepEPConfig{720, 8, 128}},
	{160, deepEPConfig{720, 12, 128}, deepEPConfig{720, 8, 128}},
}

const (
	// deepEPSMs is the SMs DeepEP's kernels use, two channels' worth a
	// channel (num_channels = num_sms / 2): Megatron-Core's default
	// moe_deepep_num_sms (transformer_config.py at core_r0.16.0), which
	// the dispatcher sets (set_deepep_num_sms).
	deepEPSMs = 20
	// deepEPNVLPeers is DeepEP's NUM_MAX_NVL_PEERS, the ranks an NVLink
	// domain holds in its normal kernels (csrc/kernels/configs.cuh).
	deepEPNVLPeers = 8
	// deepEPWorkspace is Buffer::Buffer's workspace, NUM_WORKSPACE_BYTES.
	deepEPWorkspace = 32 << 20
	// deepEPMeta is the barrier signals and peer pointers allocated with
	// the NVLink buffer: 8 ints and 16 pointers.
	deepEPMeta = deepEPNVLPeers*4 + 2*deepEPNVLPeers*8
	// nvshmemGranularity is NVSHMEM_CUMEM_GRANULARITY as DeepEP sets it.
	nvshmemGranularity = 1 << 29
	// The hints' assumptions (config.hpp): at most 128 of top-k and 128
	// scales a token; SourceMeta two ints (internode.cu
	// get_source_meta_bytes).
	deepEPMaxTopK, deepEPMaxScales, deepEPSourceMeta = 128, 128, 8
)

// deepEPConfigFor is the configs of a group of ranks: its own size's,
// or, where buffer.py has none (it asserts: "Unsupported number of EP
// ranks"), the next larger size's (the largest, 160's, beyond it), so
// that a plan DeepEP would refuse is not counted smaller.
func deepEPConfigFor(ranks int) (dispatch, combine deepEPConfig) {
	for _, c := range deepEPConfigs {
		if c.ranks >= ranks {
			return c.dispatch, c.combine
		}
	}
	last := deepEPConfigs[len(deepEPConfigs)-1]
	return last.dispatch, last.combine
}

// deepEPHints is the NVLink and RDMA buffer sizes Megatron-Core's
// get_buffer asks of DeepEP for a group of ranks and hidden size
// hidden, bytes: the larger of the dispatch config's and the combine
// config's hints (Config.get_nvl_buffer_size_hint and
// get_rdma_buffer_size_hint, each rounded up to 128 bytes; the RDMA
// receive chunk first rounded up to a multiple of the send chunk, as
// Config's constructor does). No RDMA buffer within one NVLink domain
// ("Legacy mode").
func deepEPHints(hidden, ranks int) (nvl, rdma int64) {
	hb := int64(hidden) * 2 // get_hidden_bytes: max(element size, 2)
	channels := int64(deepEPSMs / 2)
	nvlRanks := int64(min(ranks, deepEPNVLPeers))
	rdmaRanks := int64(max(ranks/deepEPNVLPeers, 1))
	perToken := hb + deepEPSourceMeta + deepEPMaxTopK*8 + deepEPMaxTopK*4 + deepEPMaxScales*4
	d, c := deepEPConfigFor(ranks)
	for _, cfg := range []deepEPConfig{d, c} {
		n := channels * nvlRanks * (2*rdmaRanks + 3) * 4
		n += channels * nvlRanks * int64(cfg.nvlRecv) * perToken
		nvl = max(nvl, align128(n))
		if ranks <= deepEPNVLPeers {
			continue
		}
		recv := int64((cfg.rdmaRecv + cfg.rdmaSend - 1) / cfg.rdmaSend * cfg.rdmaSend)
		r := channels * rdmaRanks * (deepEPNVLPeers*2 + 2) * 2 * 4
		r += channels * rdmaRanks * recv * (perToken + 16) * 2
		rdma = max(rdma, align128(r))
	}
	return nvl, rdma
}

// align128 is n rounded up to 128 bytes.
func align128(n int64) int64 { return (n + 127) / 128 * 128 }

// DeepEPBuffers is the device memory DeepEP's buffer takes on one GPU
// of plan pl of model m, bytes, outside PyTorch's caching allocator: the
// NVLink buffer with its signals and the workspace (cudaMalloc), and
// the RDMA buffer as the NVSHMEM heap maps it (whole 512 MiB pieces).
// None without the flex dispatcher or where the dispatcher's group is
// one GPU, and under HybridEP, Megatron-Core's other flex backend
// (dispatcher=hybridep: HybridEPBuffers).
func DeepEPBuffers(pl *plan.Plan, m *transformer.Spec) int64 {
	ranks := pl.ETP * pl.EP
	if pl.Run.Dispatcher != plan.DispatcherFlex || pl.Run.HybridEP || !m.MoE() || ranks <= 1 {
		return 0
	}
	nvl, rdma := deepEPHints(m.Hidden, ranks)
	gpu := nvl + deepEPMeta + deepEPWorkspace
	if rdma > 0 {
		gpu += (rdma + nvshmemGranularity - 1) / nvshmemGranularity * nvshmemGranularity
	}
	return gpu
}
