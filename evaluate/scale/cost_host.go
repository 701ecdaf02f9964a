package scale

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
}

// h100Host is the measured host of h100Kernels: kernelbench's host
// section on the lent H100 of 2026-11-26 (an Intel Xeon, 16 vCPUs;
// torch 2.11, CUDA 13; measurements/2026-11-26-h100-c/host.jsonl):
// 14.0 us to issue a multiply recorded for autograd, 17.9 us a backward
// node, 186 us added by a synchronization behind a queued kernel.
// Another H100 machine of the same image measured 20.0, 23.5 and 192 us
// (moehost-kernels.jsonl, the same commands a few minutes later): the
// host is the noisiest figure of a pod. A CUDA graph of 500 in-place adds
// replayed in 30.8 us of host time (graph.add_, the same file; 5.3 us on
// the second machine): Replay.
var h100Host = Host{Issue: 14.04e-6, IssueBwd: 17.86e-6, Sync: 185.9e-6, Replay: 30.82e-6}

// expose is phase ph with its host's wait in busy (and in hostExposed):
// the launches' issue time beyond the kernels' own, and each
// synchronization's Sync plus one issue (the GPU idle while the host
// issues the first kernel after it). bwd says which rate the launches
// take.
func (h *Host) expose(ph phase, bwd bool) phase {
	rate := h.Issue
	if bwd {
		rate = h.IssueBwd
	}
	if rate <= 0 && h.Sync <= 0 {
		return ph
	}
	wait := max(0, ph.launches*rate+ph.replays*h.Replay-ph.busy) + ph.syncs*(h.Sync+rate)
	ph.busy += wait
	ph.hostExposed += wait
	return ph
}

// StageHost is one pipeline device's host against its GPU for one
// micro-batch, forward and backward, seconds: the kernels' time (GPU,
// communication included, the host's wait left out), the host's (every
// launch issued at its rate, and the synchronizations), and how long the
// GPU waits on it (Exposed: Issue beyond GPU, and each
// synchronization's stall). Bound says the host's issue alone is longer
// than the kernels: the stage is host-bound, by Issue / GPU.
type StageHost struct {
	Stage    int     `json:"stage"`
	GPU      float64 `json:"gpu_s"`
	Issue    float64 `json:"host_s"`
	Exposed  float64 `json:"exposed_s"`
	Launches float64 `json:"launches"`
	Syncs    float64 `json:"syncs"`
	Bound    bool    `json:"host_bound"`
}

// stageHosts is each stage's StageHost under host h.
func stageHosts(stages []stageCost, h *Host) []StageHost {
	out := make([]StageHost, len(stages))
	for s, st := range stages {
		gpu := st.fwd.busy - st.fwd.hostExposed + st.bwd.busy - st.bwd.hostExposed
		replays := (st.fwd.replays + st.bwd.replays) * h.Replay
		issue := st.fwd.launches*h.Issue + st.bwd.launches*h.IssueBwd + replays +
			st.fwd.syncs*(h.Sync+h.Issue) + st.bwd.syncs*(h.Sync+h.IssueBwd)
		out[s] = StageHost{Stage: s, GPU: gpu, Issue: issue, Exposed: st.fwd.hostExposed + st.bwd.hostExposed,
			Launches: st.fwd.launches + st.bwd.launches, Syncs: st.fwd.syncs + st.bwd.syncs,
			Bound: st.fwd.launches*h.Issue+st.bwd.launches*h.IssueBwd+replays > gpu}
	}
	return out
}
