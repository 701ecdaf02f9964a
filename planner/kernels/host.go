package kernels

// Host is the CPU thread that issues a step's kernels (docs/performance-model.md):
// each kernel a layer runs is issued by it at a measured rate, and a
// device-to-host synchronization (the dropless dispatcher's tokens per
// expert) stops it until the GPU drains. A layer whose kernels take less
// GPU time than their issue is bound by its host: the GPU waits the
// difference (Host.expose). Rates are eager PyTorch's on a lent H100's
// host (kernelbench --only host; measurements/2026-11-26-h100-c/host.jsonl,
// TestHostMeasured). The zero value is a host that keeps ahead of its GPU:
// no wait.
type Host struct {
	// Issue is the host's time to issue one kernel of a forward (an op
	// recorded for autograd: issue.mul_autograd), IssueBwd one of a
	// backward (one node of the autograd engine: issue.backward_node),
	// seconds.
	Issue, IssueBwd float64
	// Sync is what one device-to-host synchronization adds once the GPU
	// has drained the kernels queued before it: the copy's round trip
	// and the host's wake-up (sync.behind_kernel's added_seconds: a
	// bincount of the tokens' experts and its .cpu() behind a 1 ms
	// kernel), seconds. The kernels after it start from an empty queue:
	// one issue more (expose).
	Sync float64
	// Replay is the host's time to replay one CUDA graph (graph.add_'s
	// host_seconds_per_replay: a graph of 500 kernels), seconds: what a
	// graphed part of a layer costs its host in place of its kernels'
	// launches (cuda-graphs=).
	Replay float64
	// Launch is the host's time to issue one kernel with neither
	// autograd's recording nor an allocation (issue.add_: an in-place
	// add), seconds: what each GEMM of Transformer Engine's grouped GEMM
	// costs its host, launched one by one in a C++ loop
	// (transformer_engine/common/gemm/cublaslt_gemm.cu v2.8,
	// multi_stream_cublas_gemm: cublasLt's descriptors, heuristic query
	// and launch per GEMM; that loop itself not measured, the nearest
	// measured launch taken for it). 0: such calls cost their host
	// nothing.
	Launch float64
}

// h100Host is the measured host of H100: kernelbench's host
// section on the lent H100 of 2026-11-26 (an Intel Xeon, 16 vCPUs;
// torch 2.11, CUDA 13; measurements/2026-11-26-h100-c/host.jsonl):
// 14.0 us to issue a multiply recorded for autograd, 17.9 us a backward
// node, 186 us added by a synchronization behind a queued kernel.
// Another H100 machine of the same image measured 20.0, 23.5 and 192 us
// (moehost-kernels.jsonl, the same commands a few minutes later): the
// host is the noisiest figure of a pod. A CUDA graph of 500 in-place adds
// replayed in 30.8 us of host time (graph.add_, the same file; 5.3 us on
// the second machine): Replay. An in-place add without autograd issued
// in 10.61 us (issue.add_, the same file; 6.99 us on the second
// machine): Launch.
var h100Host = Host{Issue: 14.04e-6, IssueBwd: 17.86e-6, Sync: 185.9e-6, Replay: 30.82e-6, Launch: 10.61e-6}

// GraceIssue is how many times longer a Grace CPU (the Arm Neoverse V2
// of a GB200 or GB300 NVL72 compute tray) takes than a DGX H100's Xeon
// to issue one kernel from eager PyTorch: torch.nn.Linear's BF16
// forward (hidden 2,048, 8,192 tokens: one GEMM recorded for autograd)
// took 37.08 us of CPU time a call on GB200 against 13.48 us on a DGX
// H100 (Intel Xeon Platinum 8480C), 33.17 us on GH200
// (NVIDIA/TransformerEngine#2053, "[PyTorch] High CPU overhead on Grace
// systems", 2025-08-11, its benchmark table). The H100's 13.48 us is
// within 4% of h100Host.Issue (14.04 us, issue.mul_autograd): the same
// kind of launch, so the ratio is taken for every figure of the host's
// own work.
const GraceIssue = 37.08 / 13.48

// OnGrace is host h issuing from a Grace CPU: its own work (Issue,
// IssueBwd, Launch, Replay: Python, autograd, the CUDA driver's launch
// and graph-launch calls, all on the CPU) GraceIssue times h's. Sync is
// kept: its 186 us is the device-to-host copy's round trip and the
// waiting thread's wake-up behind a drained queue, measured on x86 only;
// no Grace figure was found (an assumption).
func (h Host) OnGrace() Host {
	r := GraceIssue
	h.Issue, h.IssueBwd, h.Launch, h.Replay = h.Issue*r, h.IssueBwd*r, h.Launch*r, h.Replay*r
	return h
}
