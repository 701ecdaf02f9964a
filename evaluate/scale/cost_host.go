package scale

import "github.com/placer/placer/evaluate/scale/kernels"

// expose is phase ph with its host's wait in busy (and in hostExposed):
// the launches' issue time beyond the kernels' own over the part of the
// phase before its synchronization's tail (the host keeps ahead where the
// kernels are longer than their issue), each synchronization's Sync plus
// one issue (the GPU idle while the host issues the first kernel after
// it), and the tail's stall (drain: the GPU idle while the host issues
// what follows the synchronization from an empty queue). bwd says which
// rate the launches take.
func expose(h *kernels.Host, ph phase, bwd bool) phase {
	rate := h.Issue
	if bwd {
		rate = h.IssueBwd
	}
	if rate <= 0 && h.Sync <= 0 {
		return ph
	}
	tl := ph.Tail
	before := (ph.Launches-tl.Launches)*rate + (ph.Calls-tl.Calls)*h.Launch + ph.Replays*h.Replay
	wait := max(0, before-(ph.Busy-tl.Busy)) + ph.Syncs*(h.Sync+rate) + tl.Stall
	ph.Busy += wait
	ph.HostExposed += wait
	return ph
}

// drain is the tail of steps a host issues, in order, after a
// device-to-host synchronization (forward: Host.Issue a launch,
// Host.Launch a call), with ahead seconds of kernels it queued before
// the synchronization still to run (issued before it, not waited on).
// Each step's launches and calls are issued one by one (a fraction of
// one last), each followed by its share of the step's GPU time; a
// kernel starts when it is issued and the one before it is done. stall is the GPU's idle time
// over the tail beyond the first issue (which expose charges each
// synchronization): the host's issue where the kernels are shorter than
// it. Zero with no host (its zero value).
func drain(h *kernels.Host, ahead float64, steps ...phase) syncTail {
	var tl syncTail
	host, gpu, idle := 0.0, ahead, 0.0
	for _, st := range steps {
		tl.Launches += st.Launches
		tl.Calls += st.Calls
		tl.Busy += st.Busy
		n := st.Launches + st.Calls
		if n <= 0 {
			gpu += st.Busy
			continue
		}
		issue := (st.Launches*h.Issue + st.Calls*h.Launch) / n
		run := st.Busy / n
		for i := 0.0; i < n; i++ {
			part := min(1, n-i) // a half launch: half a split collective
			host += issue * part
			if host > gpu {
				idle += host - gpu
				gpu = host
			}
			gpu += run * part
		}
	}
	tl.Stall = max(0, idle-h.Issue)
	return tl
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
		gpu := st.fwd.Busy - st.fwd.HostExposed + st.bwd.Busy - st.bwd.HostExposed
		loops := (st.fwd.Replays+st.bwd.Replays)*h.Replay + (st.fwd.Calls+st.bwd.Calls)*h.Launch
		issue := st.fwd.Launches*h.Issue + st.bwd.Launches*h.IssueBwd + loops +
			st.fwd.Syncs*(h.Sync+h.Issue) + st.bwd.Syncs*(h.Sync+h.IssueBwd)
		out[s] = StageHost{Stage: s, GPU: gpu, Issue: issue, Exposed: st.fwd.HostExposed + st.bwd.HostExposed,
			Launches: st.fwd.Launches + st.bwd.Launches + st.fwd.Calls + st.bwd.Calls, Syncs: st.fwd.Syncs + st.bwd.Syncs,
			Bound: st.fwd.Launches*h.Issue+st.bwd.Launches*h.IssueBwd+loops > gpu}
	}
	return out
}
