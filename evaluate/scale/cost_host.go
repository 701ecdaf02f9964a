package scale

import "github.com/placer/placer/evaluate/scale/kernels"

// expose is phase ph with its host's wait in busy (and in hostExposed):
// the launches' issue time beyond the kernels' own, and each
// synchronization's Sync plus one issue (the GPU idle while the host
// issues the first kernel after it). bwd says which rate the launches
// take.
func expose(h *kernels.Host, ph phase, bwd bool) phase {
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
func stageHosts(stages []stageCost, h *kernels.Host) []StageHost {
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
